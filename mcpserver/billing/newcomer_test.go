package billing_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/billing"
)

// The "done when", with go-sdk clients: one server serving Inbox
// and Billing side by side; a 2026-07-28 client reads an invoice PDF,
// completes a customer id, runs review_pending_nfes and is asked to confirm
// billing_invoices_cancel; an era-2025 client cancels directly.
func TestNewcomerPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	var mu sync.Mutex
	var questions []string
	answer := func(r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		questions = append(questions, r.Params.Message)
		mu.Unlock()
		return accept(r)
	}
	modern := e.Connect("owner", "2026-07-28", answer)

	rl, err := modern.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, " "); !strings.Contains(got, "kobana://inbox/models") || !strings.Contains(got, "kobana://billing/organization") {
		t.Errorf("resources side by side: %s", got)
	}
	checkPDF(t, "invoice PDF", read(t, modern, "kobana://billing/invoices/inv_1003/pdf").Blob)
	if got := complete(t, modern, promptRef("customer_overview"), "customer_id", "cus_gl"); strings.Join(got, " ") != "cus_globex" {
		t.Errorf("completion: %v", got)
	}
	pr, err := modern.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review_pending_nfes"})
	if err != nil || !strings.Contains(promptText(pr), "Rejected NF-e") {
		t.Fatalf("review_pending_nfes: %v", err)
	}
	if len(questions) != 0 {
		t.Fatal("reads asked for confirmation")
	}
	var inv billing.Invoice
	e.OK(modern, "billing_invoices_cancel", map[string]any{"id": "inv_1006"}, &inv)
	if len(questions) != 1 || !strings.Contains(questions[0], "billing_invoices_cancel") || !strings.Contains(questions[0], `{"id":"inv_1006"}`) {
		t.Fatalf("questions %q", questions)
	}
	if inv.Status != billing.InvoiceCancelled || e.invoice("inv_1006").Status != billing.InvoiceCancelled {
		t.Fatal("the confirmed cancel did not run")
	}

	legacy := e.Connect("owner", "2025-06-18", answer)
	e.OK(legacy, "billing_invoices_cancel", map[string]any{"id": "inv_1011"}, &inv)
	if len(questions) != 1 || e.invoice("inv_1011").Status != billing.InvoiceCancelled {
		t.Fatalf("era 2025: asked %d times, status %s", len(questions), e.invoice("inv_1011").Status)
	}
}
