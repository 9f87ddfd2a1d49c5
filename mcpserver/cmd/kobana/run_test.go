package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

const (
	testToken   = "tok-run-9f8e7d6c"
	testHookKey = "hook-secret-5a4b3c"
	sampleEML   = "../../../examples/emails/acme-invoice.eml"
)

// runReceiver is a loopback server that plays the ERP and the webhook of
// the complete example and keeps what it received.
type runReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []runReceived
	hang chan struct{} // requests to /hang wait on it
	// hanging receives once per request to /hang, when it starts waiting.
	hanging chan struct{}
}

type runReceived struct {
	Method, Path, Auth, ContentType string
	Body                            []byte
	Files                           map[string][]byte
}

func newRunReceiver(t *testing.T) *runReceiver {
	t.Helper()
	rv := &runReceiver{hang: make(chan struct{}), hanging: make(chan struct{}, 8)}
	rv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := runReceived{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type"), Files: map[string][]byte{}}
		if mt, params, _ := mime.ParseMediaType(got.ContentType); mt == "multipart/form-data" {
			mr := multipart.NewReader(r.Body, params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				got.Files[p.FormName()] = b
			}
		} else {
			got.Body, _ = io.ReadAll(r.Body)
		}
		rv.mu.Lock()
		rv.got = append(rv.got, got)
		rv.mu.Unlock()
		switch {
		case r.URL.Path == "/payables":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"data":{"id":"pay_1"}}`)
		case r.URL.Path == "/echo":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "bad token "+got.Auth)
		case r.URL.Path == "/hang":
			rv.hanging <- struct{}{}
			select {
			case <-rv.hang:
			case <-r.Context().Done():
			}
			// Answer nothing: a handler that returned would answer 200,
			// which can still reach a client closing the connection.
			panic(http.ErrAbortHandler)
		default:
			io.WriteString(w, "ok")
		}
	}))
	t.Cleanup(func() { close(rv.hang); rv.Close() })
	return rv
}

func (rv *runReceiver) requests() []runReceived {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]runReceived(nil), rv.got...)
}

// writeFile writes content into a temporary file and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// localPayable is the complete example pointed at the receiver.
func localPayable(rv *runReceiver) string {
	return strings.ReplaceAll(examples.Payable, "https://erp.example.com", rv.URL)
}

func runKobana(t *testing.T, ctx context.Context, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if ctx == nil {
		ctx = t.Context()
	}
	c := &Command{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Context: ctx}
	status := c.Main(append([]string{"run"}, args...))
	return status, out.String(), errb.String()
}

// decodeRecord reads a run record back with the record's own types.
func decodeRecord(t *testing.T, s string) runrecord.Document {
	t.Helper()
	var rec runrecord.Document
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		t.Fatalf("the record is not JSON: %v\n%s", err, s)
	}
	return rec
}

func noSecrets(t *testing.T, where, s string) {
	t.Helper()
	for _, secret := range []string{testToken, testHookKey} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the secret %q:\n%s", where, secret, s)
		}
	}
}

func TestRunPayableExample(t *testing.T) {
	rv := newRunReceiver(t)
	wf := writeFile(t, "wf.json", localPayable(rv))
	secrets := writeFile(t, "secrets.json", `{"FINANCE_TOKEN": "`+testToken+`", "SLACK_WEBHOOK_URL": "`+rv.URL+`/hooks/`+testHookKey+`"}`)
	facts := writeFile(t, "facts.json", `{"email_id": "em_42", "env": "sandbox", "app_url": "https://app.kobana.com.br", "inbox_email": "ap@inbox.example"}`)
	status, out, errs := runKobana(t, nil, "", "-workflow", wf, "-eml", sampleEML, "-secrets", secrets, "-facts", facts, "-allow", "127.0.0.1/32")
	if status != exitOK {
		t.Fatalf("exit %d\n%s\n%s", status, errs, out)
	}
	rec := decodeRecord(t, out)
	if rec.Status != runrecord.RunSucceeded || len(rec.Steps) != 3 {
		t.Fatalf("record: %s", out)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	wantLines := []string{
		`step 0 "crea la cuenta a pagar": succeeded, status 201, `,
		`step 1 "adjunta el documento original": succeeded, status 200, `,
		`step 2 "notifica al canal de finanzas": succeeded, status 200, `,
		`run succeeded: 3 succeeded`,
	}
	if len(lines) != len(wantLines) {
		t.Fatalf("stderr:\n%s", errs)
	}
	for i, w := range wantLines {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("progress line %d = %q, want prefix %q", i, lines[i], w)
		}
	}
	noSecrets(t, "stdout", out)
	noSecrets(t, "stderr", errs)
	if !strings.Contains(out, `"Authorization": "Bearer [redacted secrets.FINANCE_TOKEN]"`) || !strings.Contains(out, `"url": "[redacted secrets.SLACK_WEBHOOK_URL]"`) {
		t.Errorf("the record does not show the redacted secrets:\n%s", out)
	}

	got := rv.requests()
	if len(got) != 3 {
		t.Fatalf("the receiver got %d requests", len(got))
	}
	if got[0].Auth != "Bearer "+testToken || string(got[0].Body) != `{"supplier":"ACME","amount":1250.5,"source_email_id":"em_42"}` {
		t.Errorf("step 0 sent %q %s", got[0].Auth, got[0].Body)
	}
	msg, err := eml.Open(sampleEML)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := msg.Open(0)
	pdf, _ := io.ReadAll(r)
	r.Close()
	if got[1].Path != "/payables/pay_1/attachments" || !bytes.Equal(got[1].Files["file"], pdf) || string(got[1].Files["kobana_email_id"]) != "em_42" {
		t.Errorf("step 1 sent %s with %d file bytes", got[1].Path, len(got[1].Files["file"]))
	}
	if got[2].Path != "/hooks/"+testHookKey || !strings.HasPrefix(string(got[2].Body), `{"text":"Cuenta pay_1 creada el 20`) {
		t.Errorf("step 2 sent %s %s", got[2].Path, got[2].Body)
	}
}

func TestRunRecordFileAndStdin(t *testing.T) {
	rv := newRunReceiver(t)
	recPath := filepath.Join(t.TempDir(), "record.json")
	doc := `{"result": 1, "workflow": [{"type": "request", "url": "` + rv.URL + `/ping", "method": "GET"}]}`
	status, out, errs := runKobana(t, nil, doc, "-workflow", "-", "-allow", "127.0.0.0/8", "-record", recPath)
	if status != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", status, out, errs)
	}
	b, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	if rec := decodeRecord(t, string(b)); rec.Status != runrecord.RunSucceeded || rec.Steps[0].Request.Method != "GET" || rec.Steps[0].Response.Status != 200 {
		t.Errorf("record: %s", b)
	}
	if !strings.Contains(errs, "record written to "+recPath) {
		t.Errorf("stderr: %s", errs)
	}
}

// TestRunInvalidWorkflowSendsNothing checks that a document with errors is
// reported in the linter's text format, nothing reaches the receiver, and
// the record is the library's "did not validate" record, as the Inbox keeps.
func TestRunInvalidWorkflowSendsNothing(t *testing.T) {
	rv := newRunReceiver(t)
	wf := writeFile(t, "bad.json", `{"result": 1, "workflow": [
  {"type": "request", "url": "`+rv.URL+`/a"},
  {"type": "request", "url": "`+rv.URL+`/b", "headers": {"Host": "evil"}}
]}`)
	status, out, errs := runKobana(t, nil, "", "-workflow", wf, "-allow", "127.0.0.1/32")
	if status != exitUsage {
		t.Fatalf("exit %d, stdout %q", status, out)
	}
	var rec struct {
		Status      runrecord.Status  `json:"status"`
		Steps       []json.RawMessage `json:"steps"`
		Error       string            `json:"error"`
		Diagnostics []struct {
			Code, Pointer string
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.Status != runrecord.RunFailed || rec.Steps == nil || len(rec.Steps) != 0 ||
		rec.Error != runrecord.NotValidError || len(rec.Diagnostics) != 1 || rec.Diagnostics[0].Pointer != "/workflow/1/headers/Host" {
		t.Errorf("record (%v):\n%s", err, out)
	}
	if !strings.Contains(errs, wf+":3:") || !strings.Contains(errs, "error:") || !strings.Contains(errs, "[header-reserved]") || !strings.Contains(errs, "nothing was sent") {
		t.Errorf("stderr lacks the diagnostic:\n%s", errs)
	}
	if n := len(rv.requests()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

func TestRunWithoutWorkflow(t *testing.T) {
	wf := writeFile(t, "none.json", `{"result": {"supplier": "ACME"}}`)
	status, out, errs := runKobana(t, nil, "", "-workflow", wf)
	if status != exitOK {
		t.Fatalf("exit %d: %s", status, errs)
	}
	rec := decodeRecord(t, out)
	if rec.Status != runrecord.RunSucceeded || rec.Steps == nil || len(rec.Steps) != 0 || !strings.Contains(out, `"steps": []`) {
		t.Errorf("record: %s", out)
	}
	if !strings.Contains(errs, "has no workflow; nothing to run") {
		t.Errorf("stderr: %s", errs)
	}
}

func TestRunFailures(t *testing.T) {
	rv := newRunReceiver(t)
	secrets := writeFile(t, "secrets.json", `{"FINANCE_TOKEN": "`+testToken+`"}`)
	doc := `{"result": 1, "workflow": [
		{"type": "request", "url": "` + rv.URL + `/echo", "headers": {"Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}"}},
		{"type": "request", "url": "` + rv.URL + `/x/${{steps.0.response.status}}"},
		{"type": "request", "url": "` + rv.URL + `/y", "headers": {"A": "${{secrets.MISSING}}"}},
		{"type": "request", "url": "` + rv.URL + `/z", "expected_status": 204}
	]}`
	status, out, errs := runKobana(t, nil, "", "-workflow", writeFile(t, "wf.json", doc), "-secrets", secrets, "-allow", "127.0.0.1/32")
	if status != exitFailure {
		t.Fatalf("exit %d: %s", status, errs)
	}
	rec := decodeRecord(t, out)
	want := []runrecord.State{runrecord.Failed, runrecord.Skipped, runrecord.Failed, runrecord.Failed}
	for i, s := range rec.Steps {
		if s.State != want[i] {
			t.Errorf("step %d %s, want %s", i, s.State, want[i])
		}
	}
	for _, w := range []string{
		"step 0: failed, status 500, ",
		"the response status is 500; the step expects a 2xx status [unexpected-status]",
		"step 1: skipped: it uses the response of step 0, which failed [dependency-not-succeeded]",
		`step 2: failed: not sent: `,
		"[reference]",
		"step 3: failed, status 200, ",
		"run failed: 3 failed, 1 skipped",
	} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs)
		}
	}
	// The receiver echoed the token in its error body: it is redacted.
	noSecrets(t, "stdout", out)
	noSecrets(t, "stderr", errs)
	if !strings.Contains(out, "bad token Bearer [redacted secrets.FINANCE_TOKEN]") {
		t.Errorf("the echoed token is not redacted in the response record:\n%s", out)
	}
	if n := len(rv.requests()); n != 2 {
		t.Errorf("the receiver got %d requests; steps 1 and 2 must send nothing", n)
	}
}

// TestRunGuardDeniesLoopbackWithoutAllow checks that -allow is what lets a
// local server through: without it the step fails and nothing is sent.
func TestRunGuardDeniesLoopbackWithoutAllow(t *testing.T) {
	rv := newRunReceiver(t)
	doc := `{"result": 1, "workflow": [{"type": "request", "url": "` + rv.URL + `/a"}]}`
	for _, allow := range [][]string{nil, {"-allow", "10.0.0.0/8"}, {"-allow", "::1/128"}} {
		args := append([]string{"-workflow", writeFile(t, "wf.json", doc)}, allow...)
		status, out, errs := runKobana(t, nil, "", args...)
		rec := decodeRecord(t, out)
		if status != exitFailure || rec.Steps[0].Reason != runrecord.ReasonDenied || !strings.Contains(errs, "is denied: loopback") {
			t.Errorf("%v: exit %d, %s", allow, status, errs)
		}
	}
	if n := len(rv.requests()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

func TestRunCancelStopsWithCompleteRecord(t *testing.T) {
	rv := newRunReceiver(t)
	doc := `{"result": 1, "workflow": [
		{"type": "request", "url": "` + rv.URL + `/hang"},
		{"type": "request", "url": "` + rv.URL + `/after"},
		{"type": "request", "url": "` + rv.URL + `/after"}]}`
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-rv.hanging // step 0 was sent and waits for its answer
		cancel()
	}()
	start := time.Now()
	status, out, errs := runKobana(t, ctx, "", "-workflow", writeFile(t, "wf.json", doc), "-allow", "127.0.0.1/32")
	if time.Since(start) > 5*time.Second {
		t.Fatalf("cancellation took %s", time.Since(start))
	}
	rec := decodeRecord(t, out)
	if status != exitFailure || rec.Status != runrecord.RunFailed || len(rec.Steps) != 3 {
		t.Fatalf("exit %d, record %s", status, out)
	}
	// Step 0 reached its receiver before the stop: unknown, never failed.
	if s := rec.Steps[0]; s.State != runrecord.Unknown || s.Reason != runrecord.ReasonInterrupted {
		t.Errorf("step 0: %s %s %q", s.State, s.Reason, s.Error)
	}
	for i, s := range rec.Steps[1:] {
		if s.State != runrecord.Skipped || s.Reason != runrecord.ReasonCancelled {
			t.Errorf("step %d: %s %s %q", i+1, s.State, s.Reason, s.Error)
		}
	}
	if !strings.Contains(errs, "the run was cancelled") || !strings.Contains(errs, "1 unknown") {
		t.Errorf("stderr: %s", errs)
	}
	if n := len(rv.requests()); n != 1 {
		t.Errorf("the receiver got %d requests after the cancel", n)
	}
}

func TestRunTimeoutIsTheRunDeadline(t *testing.T) {
	rv := newRunReceiver(t)
	doc := `{"result": 1, "workflow": [{"type": "request", "url": "` + rv.URL + `/hang"}, {"type": "request", "url": "` + rv.URL + `/after"}]}`
	start := time.Now()
	status, out, _ := runKobana(t, nil, "", "-workflow", writeFile(t, "wf.json", doc), "-allow", "127.0.0.1/32", "-timeout", "300ms")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the run took %s", d)
	}
	rec := decodeRecord(t, out)
	if status != exitFailure || len(rec.Steps) != 2 || !strings.Contains(rec.Steps[1].Error, "deadline") {
		t.Errorf("exit %d, record %s", status, out)
	}
}

func TestRunInvalidInput(t *testing.T) {
	wf := writeFile(t, "wf.json", `{"result": 1, "workflow": [{"type": "request", "url": "https://erp.example.com/"}]}`)
	cases := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no workflow flag", nil, "-workflow FILE is required"},
		{"argument", []string{"-workflow", wf, "extra"}, `unexpected argument "extra"`},
		{"bad cidr", []string{"-workflow", wf, "-allow", "127.0.0.1"}, `"127.0.0.1" is not a network in CIDR notation`},
		{"bad timeout", []string{"-workflow", wf, "-timeout", "0s"}, "-timeout must be positive"},
		{"unknown flag", []string{"-workflow", wf, "-verbose"}, "flag provided but not defined: -verbose"},
		{"missing workflow file", []string{"-workflow", "no-such.json"}, "no-such.json"},
		{"facts now", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"now": "2020-01-01T00:00:00Z"}`)}, `"now" cannot be set: kobana.now is stamped by the executor`},
		{"facts prefix", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"kobana.email_id": "em_1"}`)}, `write the fact without the "kobana." prefix, as "email_id"`},
		{"facts unknown", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"emailid": "em_1"}`)}, `unknown fact "emailid"; the facts are env, app_url,`},
		{"facts env staging", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"env": "staging"}`)}, `fact "env" is "staging"; kobana.env is one of development, sandbox, production`},
		{"facts env upper case", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"env": "Production"}`)}, `fact "env" is "Production"; kobana.env is one of development, sandbox, production`},
		{"facts app_url relative", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"app_url": "app.kobana.com.br"}`)}, `fact "app_url" is "app.kobana.com.br"; kobana.app_url is the platform's base URL, an absolute http or https URL`},
		{"facts app_url no host", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"app_url": "https:///x"}`)}, `fact "app_url" is "https:///x"; kobana.app_url is the platform's base URL`},
		{"facts inbox_email", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"inbox_email": "Finance <ap@inbox.example>"}`)}, `fact "inbox_email" is "Finance <ap@inbox.example>"; kobana.inbox_email is the inbox's address, such as ap@inbox.example`},
		{"facts not strings", []string{"-workflow", wf, "-facts", writeFile(t, "f.json", `{"env": 1}`)}, `the value of "env" must be a string`},
		{"secrets not object", []string{"-workflow", wf, "-secrets", writeFile(t, "s.json", `["x"]`)}, `want a JSON object`},
		{"secrets two values", []string{"-workflow", wf, "-secrets", writeFile(t, "s.json", `{} {}`)}, `more than one JSON value`},
		{"secrets bad key", []string{"-workflow", wf, "-secrets", writeFile(t, "s.json", `{"A.B": "v"}`)}, `key "A.B" cannot be referenced`},
		{"secrets missing file", []string{"-workflow", wf, "-secrets", "no-such-secrets.json"}, "no-such-secrets.json"},
		{"eml unreadable", []string{"-workflow", wf, "-eml", "no-such.eml"}, "no-such.eml"},
		{"record unwritable", []string{"-workflow", wf, "-record", filepath.Join(t.TempDir(), "no", "dir", "r.json")}, "cannot write the record"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errs := runKobana(t, nil, "", tc.args...)
			if status != exitUsage || out != "" || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant %q", status, out, errs, tc.want)
			}
		})
	}
}

// TestRunSecretsFileErrorsHideValues checks that a malformed secrets file is
// reported without quoting any of its content.
func TestRunSecretsFileErrorsHideValues(t *testing.T) {
	wf := writeFile(t, "wf.json", `{"result": 1}`)
	for _, content := range []string{
		`{"FINANCE_TOKEN": "` + testToken + `" "X": 1}`,
		`{"FINANCE_TOKEN": ["` + testToken + `"]}`,
		testToken,
	} {
		status, _, errs := runKobana(t, nil, "", "-workflow", wf, "-secrets", writeFile(t, "s.json", content))
		if status != exitUsage || errs == "" {
			t.Errorf("exit %d for %q", status, content)
		}
		noSecrets(t, "stderr", errs)
		if strings.Contains(errs, "tok-") {
			t.Errorf("stderr quotes the file: %s", errs)
		}
	}
}

func TestRunHelp(t *testing.T) {
	status, out, _ := runKobana(t, nil, "", "-h")
	if status != exitOK || !strings.Contains(out, "usage: kobana run -workflow FILE") || !strings.Contains(out, "-allow") {
		t.Errorf("exit %d: %s", status, out)
	}
}

func TestProgressLineIsPrintable(t *testing.T) {
	line := progressLine(runrecord.Step{Index: 1, Label: "a\x1b[2Jb", State: runrecord.Failed, Error: "boom\x1b]0;title\x07\r\nX", Reason: "transport"})
	if strings.ContainsAny(line, "\x1b\x07\r\n") {
		t.Errorf("progress line holds control characters: %q", line)
	}
	if !strings.HasPrefix(line, `step 1 "a\x1b[2Jb": failed: boom`) {
		t.Errorf("line %q", line)
	}
}

// TestRunDiagnosticsRedactSecrets: a document that holds a secret's value
// verbatim is quoted in the diagnostics with the value redacted.
func TestRunDiagnosticsRedactSecrets(t *testing.T) {
	secrets := writeFile(t, "secrets.json", `{"FINANCE_TOKEN": "`+testToken+`"}`)
	wf := writeFile(t, "bad.json", `{"result": 1, "workflow": [{"type": "request", "url": "https://erp.example.com/", "headers": {"Host": "`+testToken+`"}}]}`)
	status, out, errs := runKobana(t, nil, "", "-workflow", wf, "-secrets", secrets)
	if status != exitUsage || !strings.Contains(errs, "[header-reserved]") || !strings.Contains(errs, "[redacted secrets.FINANCE_TOKEN]") {
		t.Errorf("exit %d:\n%s", status, errs)
	}
	noSecrets(t, "stderr", errs)
	noSecrets(t, "the record", out)
}

// snippetOf returns the quoted source line and the underline below it from
// the text diagnostics in stderr (the first snippet).
func snippetOf(t *testing.T, stderr string) (src, mark string) {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i], " 1 | ") && strings.HasPrefix(lines[i+1], "   | ") {
			return strings.TrimPrefix(lines[i], " 1 | "), strings.TrimPrefix(lines[i+1], "   | ")
		}
	}
	t.Fatalf("no snippet in:\n%s", stderr)
	return "", ""
}

// TestRunDiagnosticsCaretUnderRedactedSnippet: redaction changes the length
// of the quoted line, and the underline must follow what is printed — both
// when the secret comes before the range and when it is the range.
func TestRunDiagnosticsCaretUnderRedactedSnippet(t *testing.T) {
	secrets := writeFile(t, "secrets.json", `{"FINANCE_TOKEN": "`+testToken+`"}`)
	const marker = "[redacted secrets.FINANCE_TOKEN]"
	cases := []struct {
		name, doc, want string // want: the printed text the underline must cover
	}{
		{"secret before the range",
			`{"result": 1, "workflow": [{"type": "request", "url": "https://erp.example.com/", "headers": {"X-Trace": "` + testToken + `", "Host": "a"}}]}`,
			`"Host"`},
		{"secret is the range",
			`{"result": 1, "workflow": [{"type": "request", "url": "https://erp.example.com/", "` + testToken + `": 1}]}`,
			`"` + marker + `"`},
		{"secret before and in the range",
			`{"result": 1, "workflow": [{"type": "request", "url": "https://erp.example.com/` + testToken + `", "x` + testToken + `y": 1}]}`,
			`"x` + marker + `y"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errs := runKobana(t, nil, "", "-workflow", writeFile(t, "wf.json", tc.doc), "-secrets", secrets)
			noSecrets(t, "stderr", errs)
			noSecrets(t, "the record", out)
			if status != exitUsage {
				t.Fatalf("exit %d:\n%s", status, errs)
			}
			src, mark := snippetOf(t, errs)
			if n := utf8.RuneCountInString(src); n > 120 {
				t.Errorf("the quoted line is %d columns wide, over the 120 of the text format:\n%s", n, src)
			}
			caret := strings.IndexByte(mark, '^')
			want := strings.LastIndex(src, tc.want)
			if want >= 0 {
				want = utf8.RuneCountInString(src[:want]) // the column: src may start with "…"
			}
			if want < 0 || caret != want {
				t.Fatalf("the caret is at column %d, the range at %d:\n%s\n%s", caret, want, src, mark)
			}
			if got := strings.TrimRight(mark[caret:], " "); got != "^"+strings.Repeat("~", len(tc.want)-1) {
				t.Errorf("the underline %q does not cover %q:\n%s\n%s", got, tc.want, src, mark)
			}
		})
	}
}
