package inbox_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/store/sqlite"
)

// seeded returns a store holding the demo organization (package demo) and,
// in its Finance workspace, the Inbox records these tests read: two inboxes
// with their agents (invoices, receipts), the workspace's two secrets and a
// webhook's signing secret (not a user secret), and four received e-mails —
// eml_inv_00 (already processed: its agent run arun_inv_00 holds an
// answer), eml_inv_01, eml_inv_02 and eml_rcp_00 — each the sample invoice
// e-mail (a PDF and an XML attachment), stored whole.
func seeded(t *testing.T) (*sqlite.Store, inbox.Repo) {
	t.Helper()
	ctx := context.Background()
	st := openStore(t)
	if _, err := demo.Identity(ctx, st); err != nil {
		t.Fatal(err)
	}
	r := inbox.NewRepo(st)
	ws := demo.Workspace
	for name, value := range map[string]string{
		"ERP_TOKEN":                        "erp_test_token",
		"CHAT_WEBHOOK_URL":                 "https://chat.example.com/hooks/test",
		inbox.WebhookSecretName("whk_erp"): "whsec_test",
	} {
		if err := st.SetSecret(ctx, ws, name, value); err != nil {
			t.Fatal(err)
		}
	}
	invoices := inbox.Agent{ID: "agt_invoices", Name: "Invoice reader", Model: "claude-sonnet-4-5", Status: "active", CreatedAt: demoNow, UpdatedAt: demoNow}
	receipts := inbox.Agent{ID: "agt_receipts", Name: "Receipt classifier", Model: "gpt-4.1-mini", Status: "active", CreatedAt: demoNow, UpdatedAt: demoNow}
	must(t, r.Agents.Put(ctx, ws, invoices))
	must(t, r.Agents.Put(ctx, ws, receipts))
	must(t, r.Inboxes.Put(ctx, ws, inbox.Inbox{ID: "ibx_invoices", Name: "Supplier invoices", Address: "invoices@finance.in.kobana.email",
		AgentID: invoices.ID, Recipients: []string{}, Status: "active", CreatedAt: demoNow, UpdatedAt: demoNow}))
	must(t, r.Inboxes.Put(ctx, ws, inbox.Inbox{ID: "ibx_receipts", Name: "Expense receipts", Address: "receipts@finance.in.kobana.email",
		AgentID: receipts.ID, Recipients: []string{}, Status: "active", CreatedAt: demoNow, UpdatedAt: demoNow}))
	raw := []byte(examples.InvoiceEmail)
	for _, m := range []struct{ id, inbox, run string }{
		{"eml_inv_00", "ibx_invoices", "arun_inv_00"}, {"eml_inv_01", "ibx_invoices", ""},
		{"eml_inv_02", "ibx_invoices", ""}, {"eml_rcp_00", "ibx_receipts", ""},
	} {
		e, err := inbox.ParseEmail(raw)
		if err != nil {
			t.Fatal(err)
		}
		e.ID, e.InboxID, e.ReceivedAt, e.Status, e.AgentRunID = m.id, m.inbox, demoNow, inbox.EmailProcessed, m.run
		if m.run != "" {
			must(t, r.AgentRuns.Put(ctx, ws, inbox.AgentRun{ID: m.run, AgentID: invoices.ID, EmailID: e.ID, InboxID: e.InboxID, Model: invoices.Model,
				Status: inbox.RunSucceeded, Output: json.RawMessage(workflowDoc), StartedAt: demoNow, FinishedAt: demoNow}))
		}
		must(t, r.Emails.Put(ctx, ws, e))
		must(t, st.PutBlob(ctx, ws, e.ID, raw))
	}
	// The workspace's record comes last, as in the demo.
	must(t, r.Workspaces.Put(ctx, ws, inbox.Workspace{ID: ws, OrganizationID: demo.Organization, Name: "Finance", Slug: "finance",
		ExternalID: "erp-7781", Plan: "business", Environment: "sandbox", CreatedAt: demoNow,
		Limits: inbox.Limits{EmailsPerMonth: 5000, Inboxes: 10, Agents: 10, Webhooks: 10, MaxAttachmentBytes: 25 << 20, RetentionDays: 90}}))
	return st, r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
