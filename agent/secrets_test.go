package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/agent/standin"
	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/sqlite"
)

// TestSecretValuesNeverReachTheModel reprocesses an e-mail through the
// Inbox's own stages (inbox.Inline) over a real store whose workspace has
// secrets: the model stand-in records every byte it is sent, and holds the
// secrets' names but none of their values, while the workflow runner that
// follows is handed the values it needs.
func TestSecretValuesNeverReachTheModel(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const ws = "ws_secrets"
	secrets := map[string]string{
		"FINANCE_TOKEN":     "fin-9c2e71d4b8a3f605",
		"SLACK_WEBHOOK_URL": "https://hooks.example.com/services/T0/B0/sk-6f1d2e9a",
		"ERP_PASSWORD":      "hunter2-but-longer-7731",
	}
	for n, v := range secrets {
		if err := st.SetSecret(ctx, ws, n, v); err != nil {
			t.Fatal(err)
		}
	}
	repo := inbox.NewRepo(st)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	raw := []byte(examples.InvoiceEmail)
	e, err := inbox.ParseEmail(raw)
	if err != nil {
		t.Fatal(err)
	}
	e.ID, e.InboxID, e.Status, e.ReceivedAt = "eml_1", "inb_1", inbox.EmailPending, now
	ag := inbox.Agent{ID: "agt_1", Name: "Invoice reader", Model: "gpt-4.1-mini", Status: inbox.StatusActive, CreatedAt: now,
		SystemMessage: "Create a payable for each invoice.", Settings: inbox.AgentSettings{FileInputs: true}}
	for _, err := range []error{
		repo.Workspaces.Put(ctx, ws, inbox.Workspace{ID: ws, Name: "Secrets", Environment: "sandbox", CreatedAt: now}),
		repo.Inboxes.Put(ctx, ws, inbox.Inbox{ID: "inb_1", Address: "financeiro@example.inbox.kobana.com.br", AgentID: ag.ID, Status: inbox.StatusActive, CreatedAt: now}),
		repo.Agents.Put(ctx, ws, ag),
		repo.Emails.Put(ctx, ws, e),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutBlob(ctx, ws, e.ID, raw); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, standin.Always(standin.Answer(seedAnswer)))
	var handed map[string]string
	p := &inbox.Inline{Store: st, Messages: inbox.BlobMessages{Blobs: st}, Agents: h.runner,
		Workflows: inbox.WorkflowRunnerFunc(func(_ context.Context, in inbox.WorkflowInput) (json.RawMessage, error) {
			handed = in.Secrets
			return json.RawMessage(`{"status": "succeeded", "steps": []}`), nil
		}),
		Now: func() time.Time { return now }}
	out, err := p.Reprocess(ctx, inbox.ReprocessRequest{Workspace: ws, EmailID: e.ID, Actor: "person:test"})
	if err != nil {
		t.Fatal(err)
	}
	if out.AgentRun == nil || out.AgentRun.Status != inbox.RunSucceeded || out.AgentRun.PromptVersion == "" || len(out.AgentRun.Calls) != 1 {
		t.Fatalf("agent run %+v", out.AgentRun)
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
		if handed[n] != v {
			t.Errorf("the workflow runner was not handed secret %s", n)
		}
	}
	stored, err := repo.AgentRuns.Get(ctx, ws, out.AgentRun.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(stored)
	for n, v := range secrets {
		if strings.Contains(string(b), v) {
			t.Errorf("the value of secret %s is in the agent run record", n)
		}
	}
	if stored.PromptVersion == "" || len(stored.Calls) != 1 || stored.Tokens.Input == 0 {
		t.Errorf("the stored run lacks what the runner recorded: %s", b)
	}
}
