package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/agent/prompt"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve/eml"
)

func TestDemo(t *testing.T) {
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, Context: t.Context()}
	if status := c.Main([]string{"demo"}); status != exitOK {
		t.Fatalf("exit %d\nstderr: %s\nstdout:\n%s", status, errb.String(), out.String())
	}
	text := out.String()
	for _, want := range []string{
		`step 0 "crea la cuenta a pagar": succeeded, status 201`,
		`step 1 "adjunta el documento original": succeeded, status 201`,
		`step 2 "notifica al canal de finanzas": succeeded, status 200`,
		"POST https://erp.example.com/payables (",
		"POST https://erp.example.com/payables/pay_7Hq2Xb/attachments (",
		"POST https://hooks.example.com/services/T0DEMO/B0DEMO/",
		`file "DANFE-4521.pdf", application/pdf, 1168 bytes, starts with "%PDF-"`,
		`kobana_email_id  field "eml_`,
		"(the same bytes)",
		// The whole path: SMTP in, the sender authenticated, the runs read
		// back through the MCP server, the webhook delivered and signed.
		"RCPT TO:<financeiro@finance.in.kobana.email> DATA … 250 2.0.0 OK: stored as eml_",
		`status processed; subject "Nota fiscal eletrônica 4521 - ACME Distribuidora"; 2 attachments`,
		`SPF pass, DMARC pass; authenticated as "faturamento@acme.example.com.br"`,
		"3. The agent run, read back through the MCP server (kobana://inbox/agent-runs/arun_",
		"5. The workflow run, read back through the MCP server (kobana://inbox/workflow-runs/wrun_",
		"got email.processed (delivery dlv_",
		"delivered, HTTP 200; the signature verified at the receiver: true",
		"demo succeeded: 3 steps succeeded",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	// The hash printed for the upload and for the attachment is the sha256
	// of the sample e-mail's first attachment, computed here independently.
	msg, err := eml.Open(sampleEML)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := msg.Open(0)
	pdf, _ := io.ReadAll(r)
	r.Close()
	sum := sha256.Sum256(pdf)
	want := hex.EncodeToString(sum[:])
	if n := strings.Count(text, want); n != 2 {
		t.Errorf("the attachment's sha256 %s appears %d times, want 2 (uploaded and original)", want, n)
	}

	// The record: the part between its heading and the closing line.
	_, after, ok := strings.Cut(text, "never its bytes):\n")
	record, _, ok2 := strings.Cut(after, "\ndemo succeeded")
	if !ok || !ok2 {
		t.Fatalf("no record in the output:\n%s", text)
	}
	var rec inbox.WorkflowRun
	if err := json.Unmarshal([]byte(record), &rec); err != nil {
		t.Fatalf("the record is not JSON: %v\n%s", err, record)
	}
	if rec.Status != "succeeded" || len(rec.Steps) != 3 {
		t.Fatalf("record: %s", record)
	}
	if rec.Steps[0].Request.Headers["Authorization"] != "Bearer [redacted secrets.FINANCE_TOKEN]" || rec.Steps[2].Request.URL != "[redacted secrets.SLACK_WEBHOOK_URL]" {
		t.Errorf("the record does not redact the secrets: %s", record)
	}
	var form bytes.Buffer
	json.Compact(&form, rec.Steps[1].Request.Form)
	if !strings.Contains(form.String(), `"file":{"attachment":0,"filename":"DANFE-4521.pdf","content_type":"application/pdf","size":1168}`) {
		t.Errorf("form record: %s", rec.Steps[1].Request.Form)
	}
	for _, secret := range []string{demoFinanceToken, demoWebhookURL, "demo-webhook-key-4Nc7", "%PDF", "JVBERi0" /* base64 of %PDF- */} {
		if strings.Contains(record, secret) {
			t.Errorf("the record holds %q", secret)
		}
	}
	// The receiver's view shows what it got, the token included.
	if !strings.Contains(text, "Authorization: Bearer "+demoFinanceToken) {
		t.Errorf("the receiver's view does not show the token it received")
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}

func TestDemoUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		out    string
	}{
		{[]string{"-h"}, exitOK, "usage: kobana demo"},
		{[]string{"extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"-x"}, exitUsage, "flag provided but not defined"},
	} {
		var out, errb bytes.Buffer
		c := &Command{Stdout: &out, Stderr: &errb}
		status := c.Main(append([]string{"demo"}, tc.args...))
		if status != tc.status || !strings.Contains(out.String()+errb.String(), tc.out) {
			t.Errorf("%v: exit %d, output %s%s", tc.args, status, out.String(), errb.String())
		}
	}
}

func TestDemoCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errb bytes.Buffer
	start := time.Now()
	c := &Command{Stdout: &out, Stderr: &errb, Context: ctx}
	if status := c.Main([]string{"demo"}); status != exitFailure {
		t.Errorf("exit %d", status)
	}
	// Stopped before its server serves: nothing is sent or run.
	if time.Since(start) > 5*time.Second || !strings.Contains(errb.String(), "context canceled") || strings.Contains(out.String(), "step 0") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}

// TestDemoReceiverChecks checks that the demo's ERP refuses what a real one
// would: a wrong token, an unknown payable, a "PDF" that is not one.
func TestDemoReceiverChecks(t *testing.T) {
	rv, err := startDemoReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer rv.close()
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	client := g.ClientVia(rv.network(g))
	upload := func(id, token, contentType string, data []byte) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{`form-data; name="file"; filename="x.pdf"`}
		h["Content-Type"] = []string{contentType}
		pw, _ := mw.CreatePart(h)
		pw.Write(data)
		mw.Close()
		req, _ := http.NewRequest("POST", "https://erp.example.com/payables/"+id+"/attachments", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	pdf := []byte("%PDF-1.4\n%%EOF\n")
	cases := []struct {
		id, token, ct string
		data          []byte
		status        int
		msg           string
	}{
		{demoPayableID, demoFinanceToken, "application/pdf", pdf, 201, `"size":15`},
		{demoPayableID, "wrong", "application/pdf", pdf, 401, "invalid token"},
		{"pay_other", demoFinanceToken, "application/pdf", pdf, 404, `{"error":"no payable pay_other"}`},
		{demoPayableID, demoFinanceToken, "application/pdf", []byte("MZ\x90\x00 not a pdf"), 422, "not a PDF"},
	}
	for _, tc := range cases {
		status, body := upload(tc.id, tc.token, tc.ct, tc.data)
		if status != tc.status || !strings.Contains(body, tc.msg) {
			t.Errorf("%s %s: %d %s, want %d %s", tc.id, tc.token, status, body, tc.status, tc.msg)
		}
	}
	// The receiver is only reachable because 127.0.0.1 is allowed: through
	// a deny-list-only guard the same transport refuses to dial.
	deny := &guard.Guard{}
	denied := deny.ClientVia(rv.network(deny))
	if _, err := denied.Post("https://erp.example.com/payables", "application/json", strings.NewReader("{}")); err == nil || !strings.Contains(err.Error(), "is denied: loopback") {
		t.Errorf("deny-list guard: %v", err)
	}
}

// TestDemoAsksTheConfiguredModel: with -model-base-url the demo's agent
// asks that endpoint (here a stand-in whose first answer misspells a field),
// the answer is repaired through the linter, printed, and run.
func TestDemoAsksTheConfiguredModel(t *testing.T) {
	broken := strings.Replace(examples.Payable, `"expected_status"`, `"expected-status"`, 1)
	model := standin.New(standin.Sequence(standin.Answer("```json\n"+broken+"\n```"), standin.Answer(examples.Payable)))
	model.APIKey = "sk-demo-test-51d0"
	ms := httptest.NewServer(model)
	defer ms.Close()
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, Context: t.Context(), Getenv: func(k string) string {
		if k == "DEMO_TEST_KEY" {
			return "sk-demo-test-51d0"
		}
		return ""
	}}
	if status := c.Main([]string{"demo", "-model-base-url", ms.URL + "/v1", "-model-api-key-env", "DEMO_TEST_KEY"}); status != exitOK {
		t.Fatalf("exit %d\nstderr: %s\nstdout:\n%s", status, errb.String(), out.String())
	}
	text := out.String()
	for _, want := range []string{
		"model     every model → " + ms.URL + "/v1 (key from $DEMO_TEST_KEY, portable family, response format json_schema)",
		"agent run: succeeded after 2 requests, 1 repair round,",
		"The model answered (validated by the platform's linter before anything runs):",
		`      "label": "crea la cuenta a pagar",`,
		"demo succeeded: 3 steps succeeded",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "sk-demo-test-51d0") {
		t.Error("the demo printed the model key")
	}
	if repair := model.Requests()[1].LastUser(); !strings.Contains(repair, `unknown field "expected-status"`) {
		t.Errorf("the repair request: %s", repair)
	}
}

// TestDemoStandInAnswersTheSample: without model flags, the demo's stand-in
// is asked with the real prompt of the sample e-mail.
func TestDemoStandInAnswersTheSample(t *testing.T) {
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, Context: t.Context()}
	if status := c.Main([]string{"demo"}); status != exitOK {
		t.Fatalf("exit %d: %s", status, errb.String())
	}
	for _, want := range []string{
		"model     the demo's model stand-in: a local OpenAI-compatible server",
		"agent run: succeeded after 1 request, 0 repair rounds,",
		"(prompt " + prompt.Version + ")",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestDemoModelFlags(t *testing.T) {
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, Context: t.Context()}
	if status := c.Main([]string{"demo", "-model-base-url", "http://127.0.0.1:1/v1", "-model-api-key-env", "UNSET_KEY"}); status != exitUsage ||
		!strings.Contains(errb.String(), "-model-api-key-env: the environment variable UNSET_KEY is not set or empty") {
		t.Errorf("exit %d: %s", status, errb.String())
	}
}
