package agent

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// TestSecretValuesNeverReachTheModel runs an agent on an e-mail as the
// Inbox's agent stage does — the workspace's secret names in its input,
// never their values — with the file inputs on: the model stand-in records
// every byte it is sent, and holds the secrets' names but none of their
// values, nor does the run's record. (That the stage hands the agent names
// only, and the workflow the values, the pipeline's tests check.)
func TestSecretValuesNeverReachTheModel(t *testing.T) {
	secrets := map[string]string{
		"FINANCE_TOKEN":     "fin-9c2e71d4b8a3f605",
		"SLACK_WEBHOOK_URL": "https://hooks.example.com/services/T0/B0/sk-6f1d2e9a",
		"ERP_PASSWORD":      "hunter2-but-longer-7731",
	}
	names := slices.Sorted(maps.Keys(secrets))
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	raw := []byte(examples.InvoiceEmail)
	e, err := inbox.ParseEmail(raw)
	if err != nil {
		t.Fatal(err)
	}
	e.ID, e.InboxID, e.Status, e.ReceivedAt = "eml_1", "inb_1", inbox.EmailPending, now
	ag := inbox.Agent{ID: "agt_1", Name: "Invoice reader", Model: "gpt-4.1-mini", Status: inbox.StatusActive, CreatedAt: now,
		SystemMessage: "Create a payable for each invoice.", Settings: inbox.AgentSettings{FileInputs: true}}
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
	res := h.run(t, inbox.AgentInput{Workspace: inbox.Workspace{ID: "ws_secrets", Name: "Secrets", Environment: "sandbox"},
		Inbox: inbox.Inbox{ID: "inb_1", Address: "financeiro@example.inbox.kobana.com.br", AgentID: ag.ID}, Agent: ag, Email: e,
		Message: inbox.BytesMessage(raw), SecretNames: names})
	if res.Status != inbox.RunSucceeded || res.PromptVersion == "" || len(res.Calls) != 1 {
		t.Fatalf("agent result %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if len(reqs[0].Messages[1].Files) == 0 {
		t.Error("the agent allows file inputs and its model reads them, yet no file was sent: the test would not see file data")
	}
	for n, v := range secrets {
		if h.srv.Contains(v) {
			t.Errorf("the value of secret %s reached the model", n)
		}
		if !strings.Contains(reqs[0].Messages[0].Text, n) {
			t.Errorf("the system message does not name secret %s", n)
		}
	}
	run, _ := inbox.NewAgentRun(ag, e, res, now)
	b, _ := json.Marshal(run)
	for n, v := range secrets {
		if strings.Contains(string(b), v) {
			t.Errorf("the value of secret %s is in the agent run record", n)
		}
	}
	if run.PromptVersion == "" || len(run.Calls) != 1 || run.Tokens.Input == 0 {
		t.Errorf("the run lacks what the runner recorded: %s", b)
	}
}
