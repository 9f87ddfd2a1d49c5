package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/runrecord"
)

func planKobana(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &Command{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Context: t.Context()}
	status := c.Main(append([]string{"plan"}, args...))
	return status, out.String(), errb.String()
}

type trapRoundTripper struct{ t *testing.T }

func (tr trapRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.t.Errorf("kobana plan sent %s %s", r.Method, r.URL)
	return nil, errors.New("kobana plan may not send")
}

// TestPlanPayableExample plans the complete example against a local receiver the
// guard is told to allow, with every input: the plan shows each request
// with the secrets as markers and sends nothing — the receiver gets no
// request, and the default transport, a trap here, is never used.
func TestPlanPayableExample(t *testing.T) {
	rv := newRunReceiver(t)
	defer rv.Close()
	defaultTransport := http.DefaultTransport
	http.DefaultTransport = trapRoundTripper{t}
	defer func() { http.DefaultTransport = defaultTransport }()

	wf := writeFile(t, "seed.json", localPayable(rv))
	secrets := writeFile(t, "secrets.json", `{"FINANCE_TOKEN": "`+testToken+`", "SLACK_WEBHOOK_URL": "`+rv.URL+`/hook/`+testHookKey+`"}`)
	responses := writeFile(t, "responses.json", `{"0": {"status": 201, "body": {"data": {"id": "pay_9"}}}}`)
	status, out, errs := planKobana(t, "", "-workflow", wf, "-eml", sampleEML, "-secrets-names", secrets,
		"-responses", responses, "-facts", "../../../examples/inputs/payable.facts.json", "-allow", "127.0.0.1/32", "-now", "2026-11-30T10:00:00Z")
	if status != exitOK {
		t.Fatalf("status %d\n%s\n%s", status, out, errs)
	}
	for _, want := range []string{
		"3 steps: 3 would be sent, 0 would fail before sending, 0 would be skipped",
		"secrets: FINANCE_TOKEN, SLACK_WEBHOOK_URL",
		"  POST " + rv.URL + "/payables/pay_9/attachments",
		"  Authorization: Bearer [redacted secrets.FINANCE_TOKEN]",
		`    "file": file, attachment 0 DANFE-4521.pdf (application/pdf), 1168 bytes`,
		`    "kobana_email_id": "em_42", 5 bytes`,
		"  POST [redacted secrets.SLACK_WEBHOOK_URL]",
		`      "text": "Cuenta pay_9 creada el 2026-11-30T10:00:00.000Z"`,
		"  guard: host 127.0.0.1 is an allowed address",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	noSecrets(t, "stdout", out)
	noSecrets(t, "stderr", errs)
	if got := rv.requests(); len(got) != 0 {
		t.Errorf("the receiver got %d requests from a plan", len(got))
	}

	// Without -allow the guard refuses the loopback receiver.
	status, out, _ = planKobana(t, "", "-workflow", wf, "-secret", "FINANCE_TOKEN")
	if status != exitFailure || !strings.Contains(out, "[ssrf-denied]") || !strings.Contains(out, "address 127.0.0.1 is denied: loopback") {
		t.Errorf("status %d\n%s", status, out)
	}
}

// TestPlanJSON: -format json is the plan package's schema; a step that
// names a secret the workspace lacks fails, and the exit status says so.
func TestPlanJSON(t *testing.T) {
	names := writeFile(t, "names", "# the workspace's secrets\nFINANCE_TOKEN\n")
	status, out, errs := planKobana(t, "", "-workflow", "../../../examples/workflows/payable.json", "-secrets-names", names, "-format", "json", "-now", "2026-11-30T10:00:00Z")
	if status != exitFailure {
		t.Fatalf("status %d\n%s", status, errs)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if p.Version != plan.Version || !p.Valid || p.Summary != (plan.Summary{Send: 2, Fail: 1}) {
		t.Fatalf("plan %+v", p.Summary)
	}
	s := p.Steps[2]
	if s.Outcome != plan.Fail || s.Reason != runrecord.ReasonMissingSecret || !strings.Contains(s.Message, `no secret "SLACK_WEBHOOK_URL"`) {
		t.Errorf("step 2: %+v", s)
	}
	if got := p.Steps[1].Request.URL; got != "https://erp.example.com/payables/${{steps.0.response.body.data.id}}/attachments" {
		t.Errorf("step 1 url %s", got)
	}
	if p.Inputs.Now != "2026-11-30T10:00:00.000Z" {
		t.Errorf("now %s", p.Inputs.Now)
	}
}

// TestPlanWithARunRecord: the record kobana run -record writes serves as
// the example responses of a plan.
func TestPlanWithARunRecord(t *testing.T) {
	rv := newRunReceiver(t)
	defer rv.Close()
	wf := writeFile(t, "seed.json", localPayable(rv))
	secrets := writeFile(t, "secrets.json", `{"FINANCE_TOKEN": "`+testToken+`", "SLACK_WEBHOOK_URL": "`+rv.URL+`/hook/`+testHookKey+`"}`)
	record := filepath.Join(t.TempDir(), "run.json")
	if status, _, errs := runKobana(t, nil, "", "-workflow", wf, "-eml", sampleEML, "-secrets", secrets, "-facts", "../../../examples/inputs/payable.facts.json", "-allow", "127.0.0.1/32", "-record", record); status != exitOK {
		t.Fatalf("run: %d %s", status, errs)
	}
	status, out, errs := planKobana(t, "", "-workflow", wf, "-responses", record, "-allow", "127.0.0.1/32", "-format", "json")
	if status != exitOK {
		t.Fatalf("status %d %s", status, errs)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Inputs.Responses) != 3 || p.Steps[0].Example == nil || p.Steps[0].Example.Status != 201 {
		t.Errorf("responses from the record: %v, step 0 example %+v", p.Inputs.Responses, p.Steps[0].Example)
	}
	noSecrets(t, "stdout", out)
}

func TestPlanInvalidDocumentAndUsage(t *testing.T) {
	bad := writeFile(t, "bad.json", `{"workflow":[{"type":"request","url":"https://x.example","method":"post"}]}`)
	status, out, errs := planKobana(t, "", "-workflow", bad)
	if status != exitUsage || !strings.Contains(out, "does not validate: nothing would be sent") || !strings.Contains(errs, "method-invalid") {
		t.Errorf("invalid document: %d\n%s\n%s", status, out, errs)
	}
	status, out, _ = planKobana(t, `{"result":{}}`, "-workflow", "-")
	if status != exitOK || !strings.Contains(out, "has no workflow") {
		t.Errorf("no workflow from stdin: %d %s", status, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-workflow FILE is required"},
		{[]string{"-workflow", bad, "extra"}, `unexpected argument "extra"`},
		{[]string{"-workflow", bad, "-format", "yaml"}, `-format is text or json, not "yaml"`},
		{[]string{"-workflow", bad, "-now", "yesterday"}, `-now "yesterday" is not an RFC 3339 time`},
		{[]string{"-workflow", bad, "-secret", "A=1"}, "-secret: not a secret name"},
		{[]string{"-workflow", bad, "-responses", writeFile(t, "r.json", `{"zero": {}}`)}, `key "zero" is not a step index`},
		{[]string{"-workflow", bad, "-facts", writeFile(t, "f.json", `{"nope": "1"}`)}, `unknown fact "nope"`},
		{[]string{"-workflow", filepath.Join(t.TempDir(), "missing.json")}, "missing.json"},
	} {
		status, _, errs := planKobana(t, "", tc.args...)
		if status != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: status %d, stderr %q, want %q", tc.args, status, errs, tc.want)
		}
	}
	if status, out, _ := planKobana(t, "", "-h"); status != exitOK || !strings.Contains(out, "usage: kobana plan") {
		t.Errorf("-h: %d %s", status, out)
	}
}

// TestServeWorkflowsPlan: the Inbox's workflows_plan, served by kobana
// serve with the real planner, plans a document against a received e-mail
// for a read-only token: its attachments, the workspace's secret names,
// the run's facts — and no secret value in the answer.
func TestServeWorkflowsPlan(t *testing.T) {
	var stdout, stderr serveBuffer
	addrs, stop := startServe(t, &Command{Stdout: &stdout, Stderr: &stderr}, &stderr, "-demo", "-http", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "plan.db"))
	defer stop()
	var token string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if m := tokenLine.FindStringSubmatch(l); m != nil && m[5] == "read" {
			token = m[6]
		}
	}
	if token == "" {
		t.Fatalf("no read-only token: %s", stdout.String())
	}
	cs := mcptest.Connect(t, mcptest.HTTP(mcpURL(t, addrs), token), mcptest.Legacy, nil)
	// Closed before the server stops (defers run last first): an open
	// legacy session holds the server's shutdown for its whole grace period.
	defer cs.Close()
	doc := `{"result":{},"workflow":[
	 {"type":"request","url":"https://erp.example.com/api/payables","headers":{"Authorization":"Bearer ${{secrets.ERP_TOKEN}}"},
	  "body":{"email":"${{kobana.email_id}}","run":"${{kobana.workflow_run_id}}"},"expected_status":201},
	 {"type":"request","url":"https://erp.example.com/api/payables/${{steps.0.response.body.id}}/files","form":{"file":"${{email.attachments.0}}"}},
	 {"type":"request","url":"${{secrets.CHAT_WEBHOK_URL}}","body":{"text":"done"}},
	 {"type":"request","url":"http://169.254.169.254/latest/meta-data/","method":"GET"}]}`
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "workflows_plan", Arguments: map[string]any{
		"document": doc, "email_id": "eml_inv_00", "responses": map[string]any{"0": map[string]any{"status": 201, "body": map[string]any{"id": "pay_1"}}}}})
	if err != nil || res.IsError {
		t.Fatalf("workflows_plan: %v %v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Plan plan.Plan `json:"plan"`
		Text string    `json:"text"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	p := out.Plan
	if p.Summary != (plan.Summary{Send: 2, Fail: 2}) {
		t.Fatalf("summary %+v\n%s", p.Summary, out.Text)
	}
	if got := string(p.Steps[0].Request.Body.JSON); got != `{"email":"eml_inv_00","run":"${{kobana.workflow_run_id}}"}` {
		t.Errorf("step 0 body %s", got)
	}
	if f := p.Steps[1].Request.Body.Parts[0].File; f == nil || !f.Known || f.Filename == "" {
		t.Errorf("step 1's file part: %+v", p.Steps[1].Request.Body.Parts[0])
	}
	if s := p.Steps[2]; s.Reason != runrecord.ReasonMissingSecret || !strings.Contains(s.Message, "CHAT_WEBHOK_URL") {
		t.Errorf("step 2: %+v", s)
	}
	if s := p.Steps[3]; s.Reason != runrecord.ReasonDenied {
		t.Errorf("step 3: %+v", s)
	}
	for _, secret := range []string{"erp_live_", "T024BE7LD"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("a secret value is in the plan: %s", secret)
		}
	}
	if !strings.Contains(out.Text, "4 steps: 2 would be sent") {
		t.Errorf("text: %s", out.Text)
	}
}
