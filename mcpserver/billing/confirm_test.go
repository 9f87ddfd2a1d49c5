package billing_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/confirm"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
)

// On 2026-07-28 with form support: a question first, one run on yes.
func TestConfirmOnModernFormClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := map[string]any{"id": "inv_1006", "reason": "acordo comercial"}
	r := e.RawCall("owner", "billing_invoices_cancel", args, formCaps, "", nil)
	if !inputRequired(r) {
		t.Fatalf("first call: %v", r)
	}
	q := r["inputRequests"].(map[string]any)["confirm"].(map[string]any)
	params := q["params"].(map[string]any)
	if q["method"] != "elicitation/create" || params["mode"] != "form" || !strings.Contains(params["message"].(string), `"id":"inv_1006"`) {
		t.Errorf("question %v", q)
	}
	if e.invoice("inv_1006").Status != billing.InvoiceOpen {
		t.Fatal("asking ran the tool")
	}
	state := r["requestState"].(string)
	r = e.RawCall("owner", "billing_invoices_cancel", args, formCaps, state, yesAnswer)
	if r["isError"] == true {
		t.Fatalf("confirmed call: %v", r)
	}
	got := e.invoice("inv_1006")
	if got.Status != billing.InvoiceCancelled || got.CancelReason != "acordo comercial" {
		t.Fatalf("stored %+v", got)
	}
	// The same confirmed call again is a replay and runs nothing.
	updated := got.UpdatedAt
	e.clock.Advance(1)
	r = e.RawCall("owner", "billing_invoices_cancel", args, formCaps, state, yesAnswer)
	if r["isError"] != true || !strings.Contains(resultText(r), "confirmation_replayed") {
		t.Fatalf("replay: %v", r)
	}
	if !e.invoice("inv_1006").UpdatedAt.Equal(updated) {
		t.Fatal("the replay wrote the invoice")
	}
}

func TestDeclineAnswersUSER_DECLINED(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := map[string]any{"id": "inv_1002", "reason": "cliente desistiu"}
	for _, answer := range []map[string]any{
		{"confirm": map[string]any{"action": "decline"}},
		{"confirm": map[string]any{"action": "cancel"}},
		{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": false}}},
	} {
		r := e.RawCall("owner", "billing_invoices_refund", args, formCaps, "", nil)
		r = e.RawCall("owner", "billing_invoices_refund", args, formCaps, r["requestState"].(string), answer)
		if r["isError"] != true || !strings.Contains(resultText(r), "USER_DECLINED") || strings.Contains(resultText(r), "user_declined") {
			t.Errorf("answer %v: %v", answer, r)
		}
	}
	if e.invoice("inv_1002").Status != billing.InvoicePaid {
		t.Fatal("a declined refund ran")
	}
}

// The confirmation is bound: another invoice, tool or person, an expired
// or a forged state only asks again.
func TestConfirmationIsBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := map[string]any{"id": "inv_1006"}
	state := e.RawCall("owner", "billing_invoices_cancel", args, formCaps, "", nil)["requestState"].(string)
	// Calls that could run, so that only the binding differs: a customer
	// with the same id (deletable), an invoice with the same id in the
	// other organization.
	ctx := context.Background()
	inv, err := e.st.GetRecord(ctx, demo.Organization, billing.KindInvoice, "inv_1006")
	if err != nil {
		t.Fatal(err)
	}
	inv.Workspace = otherOrg
	if err := e.st.PutRecord(ctx, inv); err != nil {
		t.Fatal(err)
	}
	if err := e.st.PutRecord(ctx, store.Record{Workspace: demo.Organization, Kind: billing.KindCustomer, ID: "inv_1006", Created: time.Now(),
		Data: json.RawMessage(`{"id":"inv_1006","name":"Same id, another kind"}`)}); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]map[string]any{
		"other invoice": e.RawCall("owner", "billing_invoices_cancel", map[string]any{"id": "inv_1011"}, formCaps, state, yesAnswer),
		"other person":  e.RawCall("owner2", "billing_invoices_cancel", args, formCaps, state, yesAnswer),
		"other org":     e.RawCall("other", "billing_invoices_cancel", args, formCaps, state, yesAnswer),
		"forged":        e.RawCall("owner", "billing_invoices_cancel", args, formCaps, state[:len(state)-4]+"AAAA", yesAnswer),
	} {
		if !inputRequired(r) {
			t.Errorf("%s: %v, want the question again", name, r)
		}
	}
	// Another tool: its schema refuses an invoice id as a customer id before
	// any confirmation is looked at (the binding to the tool itself is the
	// framework's, tested there).
	if r := e.RawCall("owner", "billing_customers_delete", args, formCaps, state, yesAnswer); mcptest.ResultCode(r) != "invalid_arguments" {
		t.Errorf("other tool: %v, want invalid_arguments", r)
	}
	e.clock.Advance(confirm.TTL + 1)
	if r := e.RawCall("owner", "billing_invoices_cancel", args, formCaps, state, yesAnswer); !inputRequired(r) {
		t.Errorf("expired: %v", r)
	}
	if e.invoice("inv_1006").Status != billing.InvoiceOpen || e.invoice("inv_1011").Status != billing.InvoiceOpen {
		t.Fatal("a mismatched confirmation ran the tool")
	}
}

// Era 2025, or 2026 without form support: Billing runs destructive tools
// directly (the client confirms on its side).
func TestLegacyClientsRunDirectly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	asked := 0
	count := func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { asked++; return accept(nil) }
	cs := e.Connect("owner", "2025-11-25", count)
	e.OK(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1006"}, nil)
	e.OK(e.ConnectStdio("owner", "2025-11-25", nil), "billing_invoices_refund", map[string]any{"id": "inv_1002", "reason": "duplicada"}, nil)
	// 2026 without elicitation, and 2026 declaring only URL elicitation.
	e.OK(e.Connect("owner", "2026-07-28", nil), "billing_subscriptions_cancel", map[string]any{"id": "sub_maria"}, nil)
	r := e.RawCall("owner", "billing_invoices_cancel", map[string]any{"id": "inv_1011"}, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, "", nil)
	if r["isError"] == true || inputRequired(r) {
		t.Fatalf("url-only client: %v", r)
	}
	if asked != 0 {
		t.Errorf("an era-2025 client was asked %d times", asked)
	}
	var sub billing.Subscription
	e.stored(demo.Organization, billing.KindSubscription, "sub_maria", &sub)
	if e.invoice("inv_1006").Status != billing.InvoiceCancelled || e.invoice("inv_1002").Status != billing.InvoiceRefunded ||
		e.invoice("inv_1011").Status != billing.InvoiceCancelled || sub.Status != billing.SubscriptionCancelled {
		t.Fatal("a direct run did not change the store")
	}
}

// Non-destructive writes never ask, and every destructive tool asks.
func TestWhatIsConfirmed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.RawCall("owner", "billing_invoices_send_reminder", map[string]any{"id": "inv_1006"}, formCaps, "", nil)
	if inputRequired(r) || r["isError"] == true {
		t.Fatalf("send_reminder: %v", r)
	}
	for tool, args := range map[string]map[string]any{
		"billing_customers_delete":     {"id": "cus_umbrella"},
		"billing_subscriptions_cancel": {"id": "sub_acme"},
		"billing_invoices_cancel":      {"id": "inv_1009"},
		"billing_invoices_refund":      {"id": "inv_1008", "reason": "teste"},
		"billing_nfes_cancel":          {"id": "nfe_0010", "reason": "emitida por engano"},
	} {
		if r := e.RawCall("owner", tool, args, formCaps, "", nil); !inputRequired(r) {
			t.Errorf("%s was not confirmed: %v", tool, r)
		}
	}
	if !e.stored(demo.Organization, billing.KindCustomer, "cus_umbrella", &billing.Customer{}) || e.invoice("inv_1009").Status != billing.InvoiceOpen {
		t.Fatal("a question ran its tool")
	}
}

// One confirmed refund sent twenty times at once refunds once.
func TestConfirmedRefundRunsOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := map[string]any{"id": "inv_1008", "reason": "licença devolvida"}
	state := e.RawCall("owner", "billing_invoices_refund", args, formCaps, "", nil)["requestState"].(string)
	ok, replayed := e.ToolCall("owner", "billing_invoices_refund", args, formCaps, state, yesAnswer).Concurrently(t, 20, "confirmation_replayed")
	if ok != 1 || replayed != 19 {
		t.Fatalf("ok=%d replayed=%d, want 1 and 19", ok, replayed)
	}
	if e.invoice("inv_1008").Status != billing.InvoiceRefunded {
		t.Fatal("not refunded")
	}
}

// Billing works per organization, and its question says so.
func TestQuestionNamesTheOrganization(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.RawCall("owner", "billing_invoices_cancel", map[string]any{"id": "inv_1006"}, formCaps, "", nil)
	b, _ := json.Marshal(r["inputRequests"])
	if !inputRequired(r) || !strings.Contains(string(b), "in organization "+demo.Organization) || strings.Contains(string(b), "workspace") {
		t.Fatalf("question: %s", b)
	}
}

// A destructive call that cannot run — a record that does not exist, or
// one whose state refuses the action — answers at once: nobody confirms a
// call only to be told it could never have run.
func TestRefusalsAreAnsweredBeforeAsking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rejected, err := e.st.ListRecords(context.Background(), demo.Organization, billing.KindNFe, store.Query{Status: billing.NFeRejected, Limit: 1})
	if err != nil || len(rejected) == 0 {
		t.Fatalf("no rejected NF-e in the demo: %v", err)
	}
	reason := "emitida com o valor errado"
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"billing_invoices_cancel", map[string]any{"id": "inv_nope"}, "not_found"},
		{"billing_invoices_cancel", map[string]any{"id": "inv_1001"}, "invalid_state"},                        // paid
		{"billing_invoices_refund", map[string]any{"id": "inv_1006", "reason": "duplicada"}, "invalid_state"}, // open
		{"billing_invoices_refund", map[string]any{"id": "inv_nope", "reason": "duplicada"}, "not_found"},
		{"billing_subscriptions_cancel", map[string]any{"id": "sub_umbrella"}, "invalid_state"}, // already cancelled
		{"billing_subscriptions_cancel", map[string]any{"id": "sub_nope"}, "not_found"},
		{"billing_customers_delete", map[string]any{"id": "cus_acme"}, "customer_has_subscriptions"},
		{"billing_customers_delete", map[string]any{"id": "cus_nope"}, "not_found"},
		{"billing_nfes_cancel", map[string]any{"id": rejected[0].ID, "reason": reason}, "invalid_state"},
		{"billing_nfes_cancel", map[string]any{"id": "nfe_nope", "reason": reason}, "not_found"},
	} {
		r := e.RawCall("owner", c.tool, c.args, formCaps, "", nil)
		if inputRequired(r) || r["isError"] != true || !strings.Contains(resultText(r), `"`+c.code+": ") {
			t.Errorf("%s %v: %s, want %s without a question", c.tool, c.args, resultText(r), c.code)
		}
	}
}
