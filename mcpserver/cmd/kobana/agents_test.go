package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/agent/prompt"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

const modelKey = "sk-e2e-4c1f9a7be2d05836"

// misspeltAnswer has the two mistakes of the issue: expected-status and
// secret.ERP_TOKEN.
const misspeltAnswer = `{
  "result": {"supplier": "ACME"},
  "workflow": [
    {
      "type": "request",
      "url": "https://erp.example.com/api/payables",
      "headers": {"Authorization": "Bearer ${{secret.ERP_TOKEN}}"},
      "expected-status": 201
    }
  ]
}`

// TestServeAgentCallsTheModel runs serve with -model-base-url pointing at
// the stand-in and reprocesses demo e-mails the way a person does (an MCP
// client on 2026-07-28 that confirms): the agent's model is called with the
// prompt, a misspelt answer is repaired with the same text
// workflows_validate shows for it, failures are recorded with their causes
// and review_failed_runs groups them; no key or secret value leaks.
func TestServeAgentCallsTheModel(t *testing.T) {
	model := standin.New(standin.Sequence(
		standin.Answer(`{"result": {"supplier": "ACME", "note": "no action"}}`),            // eml_inv_00
		standin.Answer(misspeltAnswer), standin.Answer(`{"result": {"supplier": "ACME"}}`), // eml_inv_01: repaired
		standin.Error(400, "context_length_exceeded", "maximum context length exceeded"), // eml_inv_02
		standin.Answer(misspeltAnswer), standin.Answer(misspeltAnswer), // eml_inv_03: stays invalid
	))
	model.APIKey = modelKey
	ms := httptest.NewServer(model)
	defer ms.Close()

	db := filepath.Join(t.TempDir(), "agents.db")
	var stdout, stderr serveBuffer
	c := &Command{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		if k == "E2E_MODEL_KEY" {
			return modelKey
		}
		return ""
	}}
	addrs, stop := startServe(t, c, &stderr, "-demo", "-v", "-http", "127.0.0.1:0", "-db", db,
		"-model-base-url", ms.URL+"/v1", "-model-api-key-env", "E2E_MODEL_KEY")
	if want := "agents: every model → " + ms.URL + "/v1 (key from $E2E_MODEL_KEY, portable family, response format json_schema)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("serve does not say where agents' models are called (%q):\n%s", want, stderr.String())
	}
	var owner string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if m := tokenLine.FindStringSubmatch(l); m != nil && m[5] == "read,write" {
			owner = m[6]
		}
	}
	cs := mcptest.Connect(t, mcptest.HTTP(mcpURL(t, addrs), owner), "2026-07-28", mcptest.Yes)
	ctx := t.Context()
	call := func(tool string, args map[string]any, out any) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s %v: %v %s", tool, args, err, mcptest.TextOf(r))
		}
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %v: %s (%v)", tool, args, b, err)
		}
	}
	// emails_reprocess enqueues the stages; the new agent run appears on
	// the e-mail once the pipeline has run it.
	reprocess := func(id string) inbox.Reprocessed {
		t.Helper()
		var before, after inbox.Email
		call("emails_get", map[string]any{"id": id}, &before)
		var out inbox.Reprocessed
		call("emails_reprocess", map[string]any{"id": id}, &out)
		if out.Status != inbox.ReprocessQueued {
			t.Fatalf("emails_reprocess %s: %+v, want queued", id, out)
		}
		err := testwait.Until(30*time.Second, func() error {
			call("emails_get", map[string]any{"id": id}, &after)
			if after.AgentRunID == before.AgentRunID || after.Status == inbox.EmailPending {
				return fmt.Errorf("e-mail %s: %s, agent run %s", id, after.Status, after.AgentRunID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var run inbox.AgentRun
		call("agent_runs_get", map[string]any{"id": after.AgentRunID}, &run)
		out.AgentRun = &run
		return out
	}

	// The model answers; the run records what the runner saw.
	out := reprocess("eml_inv_00")
	run := out.AgentRun
	if run.Status != inbox.RunSucceeded || run.PromptVersion != prompt.Version || len(run.Calls) != 1 || run.Calls[0].Status != 200 || run.Tokens.Input == 0 || run.CostUSD == 0 {
		t.Fatalf("agent run %+v", run)
	}
	first := model.Requests()[0]
	if first.Model != "claude-sonnet-4-5" || !strings.Contains(first.Messages[0].Text, "This workspace's secrets are: CHAT_WEBHOOK_URL, ERP_TOKEN.") ||
		!strings.Contains(first.Messages[0].Text, "You read supplier invoices") || !strings.Contains(first.LastUser(), "-----BEGIN E-MAIL-----") {
		t.Errorf("the model was not asked with the demo agent's prompt: %s\n%s", first.Model, first.Messages[0].Text)
	}

	// A misspelt answer is repaired; the repair message is the text of
	// the diagnostics workflows_validate returns for the same document.
	out = reprocess("eml_inv_01")
	if out.AgentRun.Status != inbox.RunSucceeded || len(out.AgentRun.Repairs) != 1 {
		t.Fatalf("repaired run %+v", out.AgentRun)
	}
	v, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflows_validate", Arguments: map[string]any{"document": misspeltAnswer}})
	if err != nil || v.IsError {
		t.Fatalf("workflows_validate: %v %s", err, mcptest.TextOf(v))
	}
	var validation struct {
		OK          bool                `json:"ok"`
		Diagnostics compile.Diagnostics `json:"diagnostics"`
	}
	b, _ := json.Marshal(v.StructuredContent)
	if err := json.Unmarshal(b, &validation); err != nil || validation.OK || len(validation.Diagnostics) != 2 {
		t.Fatalf("workflows_validate: %s", b)
	}
	repairMsg := model.Requests()[2].LastUser()
	if !strings.Contains(repairMsg, agent.Validate([]byte(misspeltAnswer)).Text()) {
		t.Errorf("the repair message is not the linter's text:\n%s", repairMsg)
	}
	for _, d := range validation.Diagnostics {
		if line := agent.AnswerFile + ":" + d.String(); !strings.Contains(repairMsg, line) {
			t.Errorf("workflows_validate says %q; the model was not told it:\n%s", line, repairMsg)
		}
	}

	// Failures are results with causes, which review_failed_runs groups.
	if out := reprocess("eml_inv_02"); out.AgentRun.Cause != inbox.CauseContextLength {
		t.Errorf("context length: %+v", out.AgentRun)
	}
	if out := reprocess("eml_inv_03"); out.AgentRun.Cause != inbox.CauseInvalidOutput || out.WorkflowRun != nil || len(out.AgentRun.Diagnostics) == 0 {
		t.Errorf("invalid output: %+v", out.AgentRun)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review_failed_runs", Arguments: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, m := range p.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	for _, cause := range []string{"- context_length: 1 run(s)", "- invalid_output: 1 run(s)"} {
		if !strings.Contains(text.String(), cause) {
			t.Errorf("review_failed_runs does not show %q:\n%s", cause, text.String())
		}
	}
	cs.Close()
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr.String())
	}

	// No key in what serve printed or logged (-v), no secret value sent.
	if strings.Contains(stdout.String()+stderr.String(), modelKey) {
		t.Errorf("the model key is in serve's output")
	}
	if !strings.Contains(stderr.String(), "model request") {
		t.Errorf("-v does not log the model requests:\n%s", stderr.String())
	}
	st, code := (&Command{Stderr: io.Discard}).openStore(context.Background(), "test", db)
	if st == nil {
		t.Fatalf("reopen store: %d", code)
	}
	defer st.Close()
	secrets, err := st.RevealSecrets(context.Background(), demo.Workspace)
	if err != nil || len(secrets) == 0 {
		t.Fatalf("secrets %v %v", secrets, err)
	}
	for name, value := range secrets {
		if model.Contains(value) {
			t.Errorf("the value of secret %s reached the model", name)
		}
	}
	if n := len(model.Requests()); n != 6 {
		t.Errorf("%d model requests, want 6", n)
	}
}

// TestServeAgentsFlags checks the model flags are checked before serve
// starts, with the flag or field at fault named.
func TestServeAgentsFlags(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(bad, []byte(`{"providers": {"mistral": {"base_url": "https://x/v1"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-model-base-url", "http://127.0.0.1:4000/v1", "-model-api-key-env", "UNSET"}, "-model-api-key-env: the environment variable UNSET is not set or empty"},
		{[]string{"-model-base-url", "ftp://x"}, "-model-base-url: \"ftp://x\" must be an http or https URL"},
		{[]string{"-model-base-url", "http://x/v1", "-agents-config", bad}, "use either -model-base-url or -agents-config, not both"},
		{[]string{"-agents-config", bad}, `providers.mistral: unknown provider "mistral"`},
		{[]string{"-agents-config", filepath.Join(t.TempDir(), "none.json")}, "-agents-config: open"},
		{[]string{"-agent-retry-schedule", "1m,soon"}, `"soon" is not a positive duration such as 5m or 2h`},
		{[]string{"-agent-retry-schedule", "1m,-5m"}, `"-5m" is not a positive duration`},
	} {
		var stderr serveBuffer
		c := &Command{Stdout: io.Discard, Stderr: &stderr, Context: context.Background()}
		db := filepath.Join(t.TempDir(), "x.db")
		args := append([]string{"serve", "-http", "127.0.0.1:0", "-db", db}, tc.args...)
		if code := c.Main(args); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %v = %d, want %d and %q; stderr:\n%s", tc.args, code, exitUsage, tc.want, stderr.String())
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("serve %v opened the store before refusing its flags", tc.args)
		}
	}
}

// TestServeWithoutModelReplays checks serve without a model endpoint says
// that reprocessing replays recorded answers.
func TestServeWithoutModelReplays(t *testing.T) {
	var stdout, stderr serveBuffer
	_, stop := startServe(t, &Command{Stdout: &stdout, Stderr: &stderr}, &stderr, "-http", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "r.db"))
	stop()
	if !strings.Contains(stderr.String(), "agents: no model endpoint (-model-base-url or -agents-config): an agent run replays the agent's recorded answer, so new mail fails with no_recorded_output until a model is configured") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestServeSaysTheRetrySchedule: serve tells when an e-mail whose model
// was unavailable is tried again, the default or -agent-retry-schedule's.
func TestServeSaysTheRetrySchedule(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "agents: a run that fails because the model is unavailable, rate-limited or slow is tried again after 1m0s, 5m0s, 15m0s, 30m0s, 1h0m0s, 2h0m0s, 4h0m0s, 8h0m0s (8 more runs over 15h51m0s, -agent-retry-schedule)"},
		{[]string{"-agent-retry-schedule", "30s, 10m"}, "is tried again after 30s, 10m0s (2 more runs over 10m30s"},
		{[]string{"-agent-retry-schedule", "none"}, "fails its e-mail at once (-agent-retry-schedule none)"},
	} {
		var stdout, stderr serveBuffer
		_, stop := startServe(t, &Command{Stdout: &stdout, Stderr: &stderr}, &stderr, append([]string{"-http", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "r.db")}, tc.args...)...)
		stop()
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %v: stderr lacks %q:\n%s", tc.args, tc.want, stderr.String())
		}
	}
}
