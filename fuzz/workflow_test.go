package fuzz

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
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/resolvetest"
	"github.com/kobana/workflow/runrecord"
)

// attachmentMarker is text inside every attachment that must never reach a
// record.
const attachmentMarker = "KbnAttMark"

var attachments = []resolvetest.File{
	{Filename: "nota.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4\n" + attachmentMarker + "0\x00\x01\xfe\xff binary\r\n%%EOF\n")},
	{Filename: "nfe.xml", ContentType: "application/xml", Data: []byte("<?xml version=\"1.0\"?><nfe>" + attachmentMarker + "1 ção</nfe>\n")},
}

// arrival is one request as the receiver saw it.
type arrival struct {
	step     int      // the step in flight when it arrived
	problems []string // what is malformed about it
}

// iteration is the state of one fuzz execution, read by the receiver.
type iteration struct {
	plan     *compile.Plan
	stepsRun atomic.Int64 // OnStep calls so far: the index of the step in flight
	respBody []byte

	mu       sync.Mutex
	arrivals []arrival
}

var current atomic.Pointer[iteration]

// receive checks one request against the step it belongs to and answers
// with the iteration's response body.
func receive(w http.ResponseWriter, r *http.Request) {
	it := current.Load()
	if it == nil {
		http.Error(w, "no iteration", http.StatusInternalServerError)
		return
	}
	a := arrival{step: int(it.stepsRun.Load())}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		a.problems = append(a.problems, "reading the body: "+err.Error())
	}
	if len(r.TransferEncoding) > 0 {
		a.problems = append(a.problems, fmt.Sprintf("transfer-encoding %v: the body must have a known length", r.TransferEncoding))
	}
	if r.ContentLength != int64(len(body)) {
		a.problems = append(a.problems, fmt.Sprintf("Content-Length %d, %d bytes received", r.ContentLength, len(body)))
	}
	if a.step < len(it.plan.Steps) {
		a.problems = append(a.problems, checkBody(it.plan.Steps[a.step], r.Header.Get("Content-Type"), body)...)
	} else {
		a.problems = append(a.problems, "a request after the last step")
	}
	it.mu.Lock()
	it.arrivals = append(it.arrivals, a)
	it.mu.Unlock()
	// Answer with the status the step expects, so that runs go deep.
	status := http.StatusOK
	if a.step < len(it.plan.Steps) {
		if es := it.plan.Steps[a.step].ExpectedStatus; es >= 200 {
			status = es
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(it.respBody)
}

// checkBody checks that body is what step's kind of body should be.
func checkBody(step *compile.Step, contentType string, body []byte) []string {
	var problems []string
	switch {
	case step.Body != nil && step.Body.Kind == compile.BodyJSON:
		if !json.Valid(body) {
			problems = append(problems, fmt.Sprintf("the JSON body does not parse: %q", body))
		}
	case step.Form != nil:
		mt, params, err := mime.ParseMediaType(contentType)
		if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
			return append(problems, fmt.Sprintf("a form step sent Content-Type %q", contentType))
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for i := 0; ; i++ {
			p, err := mr.NextPart()
			if err == io.EOF {
				if i != len(step.Form) {
					problems = append(problems, fmt.Sprintf("%d parts for %d form fields", i, len(step.Form)))
				}
				break
			}
			if err != nil {
				return append(problems, "the multipart body does not parse: "+err.Error())
			}
			data, err := io.ReadAll(p)
			if err != nil {
				return append(problems, "reading a part: "+err.Error())
			}
			if i >= len(step.Form) {
				continue
			}
			f := step.Form[i]
			if p.FormName() != f.Name {
				problems = append(problems, fmt.Sprintf("part %d is named %q, the field is %q", i, p.FormName(), f.Name))
			}
			if f.File != nil {
				want := attachments[f.File.Index].Data
				if p.FileName() == "" || !bytes.Equal(data, want) {
					problems = append(problems, fmt.Sprintf("file part %q: filename %q, %d bytes, want the %d bytes of attachment %d", f.Name, p.FileName(), len(data), len(want), f.File.Index))
				}
			}
		}
	case step.Body == nil && len(body) != 0:
		problems = append(problems, fmt.Sprintf("a step without a body sent %d bytes", len(body)))
	}
	return problems
}

// receiver is started once per process: one listener that answers plain
// HTTP (http URLs) and HTTP over TLS (https URLs) alike, telling them apart
// by a connection's first byte.
var receiver = sync.OnceValue(func() net.Listener {
	srv := httptest.NewTLSServer(http.NotFoundHandler()) // for its test certificate
	conf := srv.TLS.Clone()
	conf.NextProtos = []string{"http/1.1"}
	srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go (&http.Server{Handler: http.HandlerFunc(receive)}).Serve(&sniffingListener{Listener: ln, tls: conf})
	return ln
})

// sniffingListener hands on each connection as it is, or as the server end
// of TLS when its first byte is a TLS handshake record's.
type sniffingListener struct {
	net.Listener
	tls *tls.Config
}

func (l *sniffingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		first := make([]byte, 1)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c, first); err != nil {
			c.Close() // a client that sent nothing
			continue
		}
		c.SetReadDeadline(time.Time{})
		pc := &sniffedConn{Conn: c, first: first}
		if first[0] == 0x16 {
			return tls.Server(pc, l.tls), nil
		}
		return pc, nil
	}
}

// sniffedConn gives back the byte the listener read first.
type sniffedConn struct {
	net.Conn
	first []byte
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

var loopbackOnly = &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// network sends every request to the receiver, whatever its host,
// dialling through the guard.
func network() guard.Network {
	return guard.Network{Dial: loopbackOnly.DialTo(receiver().Addr().String()),
		TLS: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}} // the receiver's test certificate
}

// notSent are the reasons a step ends without sending anything.
var notSent = map[runrecord.Reason]bool{
	runrecord.ReasonSkipped:        true,
	runrecord.ReasonReference:      true,
	runrecord.ReasonInvalidRequest: true,
	runrecord.ReasonDenied:         true,
}

func FuzzWorkflow(f *testing.F) {
	for _, glob := range []string{"../examples/workflows/*.json", "../examples/workflows/invalid/*.json"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			doc, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(doc, "fin-tok-1234", []byte(`{"data":{"id":"pay_1"}}`))
		}
	}
	for _, s := range hostileSeeds {
		f.Add([]byte(s.doc), s.secret, []byte(s.resp))
	}

	f.Fuzz(func(t *testing.T, doc []byte, secret string, respBody []byte) {
		check(t, doc, secret, respBody)
	})
}

// check runs doc with secret and respBody and reports every property that
// does not hold. It returns the run record (nil when doc has no plan) and
// the requests the receiver got per step.
func check(t testing.TB, doc []byte, secret string, respBody []byte) (*runrecord.Run, []int) {
	t.Helper()
	plan, diags := compile.Compile(doc, compile.Options{})
	if diags.HasErrors() && plan != nil {
		t.Fatalf("a document with errors has a plan: %v", diags.Err())
	}
	if plan == nil {
		return nil, nil // nothing to run, nothing sent
	}
	it := &iteration{plan: plan, respBody: respBody}
	current.Store(it)
	defer current.Store(nil)

	token := "tok_" + secret
	webhook := "https://hooks.example.com/services/" + secret
	secrets := resolve.SecretMap{"FINANCE_TOKEN": token, "SLACK_WEBHOOK_URL": webhook, "TOKEN": token, "URL": webhook}
	files := &resolvetest.Attachments{Files: attachments}
	ex := executor.New(executor.Options{
		Guard:       loopbackOnly,
		Network:     network(),
		StepTimeout: 2 * time.Second,
		RunTimeout:  10 * time.Second,
	})
	rec := ex.Run(context.Background(), plan, executor.Env{
		Secrets:     secrets,
		Facts:       resolve.FactMap{"email_id": "em_42", "env": "sandbox"},
		Attachments: func() (resolve.Attachments, error) { return files, nil },
		Journal:     runrecord.DoneFunc(func(runrecord.Step) { it.stepsRun.Add(1) }),
	})

	if len(rec.Steps) != len(plan.Steps) {
		t.Fatalf("%d step records for %d steps", len(rec.Steps), len(plan.Steps))
	}
	it.mu.Lock()
	arrivals := it.arrivals
	it.mu.Unlock()
	hits := make([]int, len(plan.Steps))
	for _, a := range arrivals {
		if a.step < len(hits) {
			hits[a.step]++
		}
		for _, p := range a.problems {
			t.Errorf("step %d sent a malformed request: %s", a.step, p)
		}
	}
	for i, s := range rec.Steps {
		switch {
		case (s.State == runrecord.Skipped || notSent[s.Reason]) && hits[i] != 0:
			t.Errorf("step %d ended %s (%s: %s) but the receiver got %d requests", i, s.State, s.Reason, s.Error, hits[i])
		case s.Response != nil && hits[i] == 0:
			t.Errorf("step %d has a response but the receiver got nothing", i)
		}
	}

	js, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var decoded any
	if err := json.Unmarshal(js, &decoded); err != nil {
		t.Fatal(err)
	}
	// The secret values carry a prefix, so that they are at least
	// resolve.MinSubstring bytes long (redacted wherever they occur) and a
	// fuzzed secret cannot match the record's own keys, states or
	// timestamps. Each is looked for as written and percent-encoded.
	forbidden := map[string]string{}
	for _, v := range []string{token, webhook} {
		what := "the secret TOKEN"
		if v == webhook {
			what = "the secret URL"
		}
		for _, form := range []string{v, url.PathEscape(v), url.QueryEscape(v)} {
			forbidden[form] = what
		}
	}
	// The document or the response may hold the marker or the base64
	// themselves (written by the fuzzer); only bytes that came from an
	// attachment are forbidden.
	if !bytes.Contains(doc, []byte(attachmentMarker)) && !bytes.Contains(respBody, []byte(attachmentMarker)) && !bytes.Contains(doc, []byte(`\u`)) && !strings.Contains(secret, attachmentMarker) {
		forbidden[attachmentMarker] = "attachment text"
		for i, a := range attachments {
			b64 := base64.StdEncoding.EncodeToString(a.Data)
			forbidden[b64] = fmt.Sprintf("attachment %d's base64", i)
		}
	}
	walkStrings(decoded, func(s string) {
		for bad, what := range forbidden {
			if strings.Contains(s, bad) {
				t.Errorf("the record holds %s (%q) in %q", what, bad, s)
			}
		}
	})
	return rec, hits
}

// walkStrings calls fn with every string and object key inside v.
func walkStrings(v any, fn func(string)) {
	switch t := v.(type) {
	case string:
		fn(t)
	case []any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	case map[string]any:
		for k, x := range t {
			fn(k)
			walkStrings(x, fn)
		}
	}
}

// hostileSeeds are documents written to probe the properties.
var hostileSeeds = []struct{ doc, secret, resp string }{
	// A secret in the URL's user info, path and query, and in a header.
	{`{"result":1,"workflow":[{"type":"request","url":"https://u:${{secrets.TOKEN}}@erp.example.com/p/${{secrets.TOKEN}}?k=${{secrets.TOKEN}}","headers":{"X-T":"${{secrets.TOKEN}}"}}]}`, "abcd1234", `{}`},
	// CR/LF from a secret into a header and into the URL: fails before sending.
	{`{"result":1,"workflow":[{"type":"request","url":"https://erp.example.com/","headers":{"A":"${{secrets.TOKEN}}"}},{"type":"request","url":"https://erp.example.com/${{secrets.TOKEN}}"}]}`, "x\r\nX-Injected: 1", `{}`},
	// The whole URL is a secret that is not a URL.
	{`{"result":1,"workflow":[{"type":"request","url":"${{secrets.URL}}"},{"type":"request","url":"${{secrets.TOKEN}}"}]}`, "::::", `{}`},
	// Attachments as base64 in a JSON body, a header, a text body and a mixed form value, and as a file.
	{`{"result":1,"workflow":[
		{"type":"request","url":"https://erp.example.com/a","headers":{"X-F":"${{email.attachments.1}}"},"body":{"b64":"${{email.attachments.0}}","x":["${{email.attachments.1.base64}}"],"n":"${{email.attachments.0.filename}}"}},
		{"type":"request","url":"https://erp.example.com/b","body":"raw ${{email.attachments.0}} raw"},
		{"type":"request","url":"https://erp.example.com/c","form":{"file":"${{email.attachments.0}}","xml":"${{email.attachments.1}}","mixed":"a ${{email.attachments.1}} b","meta":"${{email.attachments.1.size}}"}}]}`, "s3cr3t", `{}`},
	// A missing attachment and a missing secret: fail before sending; a later independent step still runs.
	{`{"result":1,"workflow":[{"type":"request","url":"https://erp.example.com/","form":{"f":"${{email.attachments.7}}"}},{"type":"request","url":"https://erp.example.com/","headers":{"A":"${{secrets.NOPE}}"}},{"type":"request","url":"http://erp.example.com/ok"}]}`, "abcd", `{}`},
	// Denied addresses in several spellings (127.0.0.1 alone is allowed).
	{`{"result":1,"workflow":[{"type":"request","url":"http://169.254.169.254/latest/meta-data/"},{"type":"request","url":"http://[::ffff:10.0.0.1]/"},{"type":"request","url":"http://0x7f.2/"},{"type":"request","url":"http://2130706434/"},{"type":"request","url":"http://[64:ff9b::a00:1]/"},{"type":"request","url":"http://0xa.1/"}]}`, "abcd", `{}`},
	// A chain of references into the fuzzed response: null, missing, nested, header, status.
	{`{"result":1,"workflow":[
		{"type":"request","url":"https://erp.example.com/payables","body":{"a":1},"expected_status":200},
		{"type":"request","url":"https://erp.example.com/${{steps.0.response.body.data.id}}","body":{"n":"${{steps.0.response.body.data.items.0}}","s":"${{steps.0.response.status}}"}},
		{"type":"request","url":"https://erp.example.com/x","headers":{"A":"${{steps.0.response.headers.content-type}}"},"body":"${{steps.0.response.body}}"},
		{"type":"request","url":"https://erp.example.com/${{steps.1.response.body.data.id}}"},
		{"type":"request","url":"https://erp.example.com/n","body":{"v":"${{steps.0.response.body.data.nil}}"}}]}`, "abcdef", `{"data":{"id":"pay 1/../x?y#z","items":[{"k":"v"}],"nil":null}}`},
	// The response echoes the secret; the record must redact it.
	{`{"result":1,"workflow":[{"type":"request","url":"https://erp.example.com/","headers":{"Authorization":"Bearer ${{secrets.FINANCE_TOKEN}}"}},{"type":"request","url":"https://erp.example.com/${{steps.0.response.body.echo}}"}]}`, "echo-me", `{"echo":"tok_echo-me","k":{"tok_echo-me":1}}`},
	// The secret written literally by the model into a body, a form value and a header.
	{`{"result":1,"workflow":[{"type":"request","url":"https://erp.example.com/","headers":{"X":"tok_literal9"},"body":{"tok_literal9":"tok_literal9"}},{"type":"request","url":"https://erp.example.com/f","form":{"v":"tok_literal9"}}]}`, "literal9", `{}`},
	// A JSON body with a text content type, a text body with a JSON content type, a form with a content type.
	{`{"result":1,"workflow":[{"type":"request","url":"https://erp.example.com/","headers":{"Content-Type":"text/plain"},"body":[1,"${{kobana.now}}",{"\u0000":"\u2028"}]},{"type":"request","url":"https://erp.example.com/","headers":{"content-type":"application/json"},"body":"{not json"},{"type":"request","url":"https://erp.example.com/","headers":{"Content-Type":"text/plain"},"form":{"a":"b"}}]}`, "abcd", `not json`},
	// Every method, empty bodies, expected statuses that do not match.
	{`{"result":1,"workflow":[{"type":"request","method":"GET","url":"http://erp.example.com/"},{"type":"request","method":"DELETE","url":"http://erp.example.com/","expected_status":204},{"type":"request","method":"PUT","url":"http://erp.example.com/","body":""},{"type":"request","method":"PATCH","url":"http://erp.example.com/","form":{}}]}`, "abcd", ``},
	// The secret written literally into a label, a header name and a form field name.
	{`{"result":1,"workflow":[{"type":"request","label":"token tok_abcd","headers":{"tok_abcd":"v"},"url":"https://erp.example.com/"},{"type":"request","label":"tok_abcd","form":{"tok_abcd":"tok_abcd"},"url":"https://erp.example.com/"}]}`, "abcd", `{"tok_abcd":"tok_abcd"}`},
	// A form field name with quotes and unicode.
	{`{"result":1,"workflow":[{"type":"request","url":"https://erp.example.com/","form":{"na\"me\\":"v","ção":"${{email.attachments.0}}"}}]}`, "abcd", `{}`},
}

// TestHarnessReachesTheReceiver proves the harness sends what it should:
// the complete example runs end to end, one request per step.
func TestHarnessReachesTheReceiver(t *testing.T) {
	doc, err := os.ReadFile("../examples/workflows/payable.json")
	if err != nil {
		t.Fatal(err)
	}
	rec, hits := check(t, doc, "fin-tok-1234", []byte(`{"data":{"id":"pay_1"}}`))
	if rec == nil || rec.Status != runrecord.RunSucceeded || fmt.Sprint(hits) != "[1 1 1]" {
		t.Fatalf("hits %v, record %+v", hits, rec)
	}
	// The hostile seeds reach the receiver too, where they should.
	rec, hits = check(t, []byte(hostileSeeds[3].doc), hostileSeeds[3].secret, []byte(hostileSeeds[3].resp))
	if rec.Status != runrecord.RunSucceeded || fmt.Sprint(hits) != "[1 1 1]" {
		t.Fatalf("attachment seed: hits %v, record %+v", hits, rec)
	}
	rec, hits = check(t, []byte(hostileSeeds[5].doc), hostileSeeds[5].secret, []byte(hostileSeeds[5].resp))
	for i, s := range rec.Steps {
		if s.Reason != runrecord.ReasonDenied || hits[i] != 0 {
			t.Errorf("denied seed step %d: %s %s, %d requests", i, s.State, s.Reason, hits[i])
		}
	}
}

// TestCheckBodyFindsMalformedRequests proves the receiver's checks can fail.
func TestCheckBodyFindsMalformedRequests(t *testing.T) {
	plan, _ := compile.Compile([]byte(`{"result":1,"workflow":[
		{"type":"request","url":"https://x.example/","body":{"a":1}},
		{"type":"request","url":"https://x.example/","form":{"f":"${{email.attachments.0}}","t":"x"}},
		{"type":"request","url":"https://x.example/"}]}`), compile.Options{})

	if plan == nil {
		t.Fatal("no plan")
	}
	var good bytes.Buffer
	mw := multipart.NewWriter(&good)
	fw, _ := mw.CreateFormFile("f", "nota.pdf")
	fw.Write(attachments[0].Data)
	mw.WriteField("t", "x")
	mw.Close()
	short := bytes.Replace(good.Bytes(), []byte("binary"), []byte("bin"), 1)
	cases := []struct {
		step        int
		contentType string
		body        []byte
		problem     string // "" when the request is well-formed
	}{
		{0, "application/json", []byte(`{"a":1}`), ""},
		{0, "application/json", []byte(`{"a":1`), "does not parse"},
		{1, mw.FormDataContentType(), good.Bytes(), ""},
		{1, mw.FormDataContentType(), short, "want the"},
		{1, "application/json", good.Bytes(), "a form step sent"},
		{1, mw.FormDataContentType(), []byte("--x\r\n"), "does not parse"},
		{2, "", nil, ""},
		{2, "", []byte("x"), "without a body"},
	}
	for i, tc := range cases {
		problems := checkBody(plan.Steps[tc.step], tc.contentType, tc.body)
		got := strings.Join(problems, "; ")
		if (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
			t.Errorf("case %d: problems %q, want %q", i, got, tc.problem)
		}
	}
}

// TestSecretInLabelIsRedacted: a label is free text from the model; when it
// holds a secret's value, the record shows it redacted like anything else.
func TestSecretInLabelIsRedacted(t *testing.T) {
	rec, _ := check(t, []byte(`{"result":1,"workflow":[{"type":"request","label":"token tok_abcd","url":"https://erp.example.com/"},{"type":"request","label":"tok_abcd","url":"https://erp.example.com/${{secrets.NOPE}}"}]}`), "abcd", []byte(`{}`))
	if rec.Steps[0].Label != "token [redacted secrets.FINANCE_TOKEN]" && rec.Steps[0].Label != "token [redacted secrets.TOKEN]" {
		t.Errorf("label %q", rec.Steps[0].Label)
	}
}
