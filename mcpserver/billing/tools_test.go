package billing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
)

func billingTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		if strings.HasPrefix(tl.Name, "billing_") {
			out[tl.Name] = tl
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return strings.Join(k, " ")
}

// snapshotTools are the Billing tools a role sees, as its reviewed snapshot
// (testdata/snapshots, TestSnapshots) says.
func snapshotTools(t *testing.T, role string) *mcptest.Listing {
	t.Helper()
	l, err := mcptest.ReadListing(filepath.Join("testdata", "snapshots", role+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Every era shows each role the tools of its snapshot (read-only tokens of
// an owner, the viewer's), and the annotations say what the tools do.
func TestToolSetsAndAnnotations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	viewer, owner := snapshotTools(t, "viewer"), snapshotTools(t, "owner")
	readOnlyTools := strings.Join(viewer.ToolNames(), " ")
	for _, era := range eras {
		for _, who := range []string{"viewer", "owner-ro"} {
			if got := sortedKeys(billingTools(t, e.Connect(who, era, nil))); got != readOnlyTools {
				t.Errorf("%s %s sees\n%s\nwant the viewer snapshot's\n%s", era, who, got, readOnlyTools)
			}
		}
		if n := len(billingTools(t, e.Connect("guest", era, nil))); n != 0 {
			t.Errorf("%s guest sees %d billing tools", era, n)
		}
		tools := billingTools(t, e.Connect("owner", era, nil))
		if got, want := sortedKeys(tools), strings.Join(owner.ToolNames(), " "); got != want {
			t.Fatalf("%s owner sees\n%s\nwant the owner snapshot's\n%s", era, got, want)
		}
		for name, tl := range tools {
			a := tl.Annotations
			readOnly := slices.Contains(viewer.ToolNames(), name)
			destructive := a.DestructiveHint != nil && *a.DestructiveHint
			if a.ReadOnlyHint != readOnly {
				t.Errorf("%s readOnlyHint=%v", name, a.ReadOnlyHint)
			}
			// Billing's destructive tools are the ones that delete, cancel or refund.
			verb := regexp.MustCompile(`_(delete|cancel|refund)$`).MatchString(name)
			if destructive != verb {
				t.Errorf("%s destructiveHint=%v", name, destructive)
			}
			if !readOnly && a.DestructiveHint == nil {
				t.Errorf("%s: a write tool must state destructiveHint", name)
			}
			if tl.InputSchema == nil || tl.OutputSchema == nil || len(tl.Description) < 60 {
				t.Errorf("%s lacks schemas or an actionable description", name)
			}
		}
	}
	// A viewer's write is refused and changes nothing.
	cs := e.Connect("viewer", "2026-07-28", nil)
	e.Fails(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1006"}, "permission_denied")
	if e.invoice("inv_1006").Status != billing.InvoiceOpen {
		t.Fatal("a denied cancel changed the invoice")
	}
}

func TestInvoiceStateRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("owner", "2025-11-25", nil)
	// Overdue is an open invoice past its due date, reported, not stored.
	var inv billing.Invoice
	e.OK(cs, "billing_invoices_get", map[string]any{"id": "inv_1005"}, &inv)
	if inv.Status != billing.InvoiceOverdue || inv.DaysOverdue != 40 || inv.PDF == nil || inv.PDF.MIMEType != "application/pdf" ||
		inv.PDF.URI != "kobana://billing/invoices/inv_1005/pdf" || inv.PDF.SizeBytes < 1000 {
		t.Errorf("inv_1005 = %+v (pdf %+v)", inv, inv.PDF)
	}
	if e.invoice("inv_1005").Status != billing.InvoiceOpen {
		t.Error("overdue must be stored as open")
	}
	msg := e.Fails(cs, "billing_invoices_refund", map[string]any{"id": "inv_1006", "reason": "cliente pediu"}, "invalid_state")
	if !strings.Contains(msg, "unpaid invoice cannot be refunded") {
		t.Errorf("refund unpaid: %s", msg)
	}
	msg = e.Fails(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1002"}, "invalid_state")
	if !strings.Contains(msg, "is paid and cannot be cancelled") || !strings.Contains(msg, "billing_invoices_refund") {
		t.Errorf("cancel paid: %s", msg)
	}
	e.Fails(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1012"}, "invalid_state")
	e.Fails(cs, "billing_invoices_refund", map[string]any{"id": "inv_1013", "reason": "de novo"}, "invalid_state")
	// inv_1003 has an authorized NF-e: cancel that first.
	e.Fails(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1003"}, "nfe_authorized")
	// inv_1014's NF-e is pending at SEFAZ.
	e.Fails(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1014"}, "nfe_pending")
	for _, id := range []string{"inv_1006", "inv_1002", "inv_1003", "inv_1014"} {
		if s := e.invoice(id).Status; s != billing.InvoiceOpen && s != billing.InvoicePaid {
			t.Errorf("a refused call changed %s to %s", id, s)
		}
	}
	// Allowed transitions, read back from the store.
	e.OK(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1006", "reason": "renegociada"}, &inv)
	if got := e.invoice("inv_1006"); got.Status != billing.InvoiceCancelled || got.CancelReason != "renegociada" || !got.CancelledAt.Equal(demoNow) {
		t.Errorf("cancelled invoice stored as %+v", got)
	}
	e.OK(cs, "billing_invoices_refund", map[string]any{"id": "inv_1002", "reason": "serviço não prestado"}, &inv)
	if got := e.invoice("inv_1002"); got.Status != billing.InvoiceRefunded || got.RefundReason != "serviço não prestado" {
		t.Errorf("refunded invoice stored as %+v", got)
	}
	e.Fails(cs, "billing_invoices_refund", map[string]any{"id": "inv_1002", "reason": "de novo"}, "invalid_state")
}

func TestInvoiceCreateAndReminders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("owner", "2026-07-28", nil)
	e.Fails(cs, "billing_invoices_create", map[string]any{"customer_id": "cus_maria", "description": "x", "amount_cents": 100, "due_date": "2026-11-01"}, "invalid_arguments")
	e.Fails(cs, "billing_invoices_create", map[string]any{"customer_id": "cus_maria", "description": "x", "amount_cents": -5, "due_date": "2026-12-01"}, "invalid_arguments")
	e.Fails(cs, "billing_invoices_create", map[string]any{"customer_id": "cus_maria", "description": "x", "due_date": "2026-12-01"}, "invalid_arguments")
	e.Fails(cs, "billing_invoices_create", map[string]any{"customer_id": "cus_nobody", "description": "x", "amount_cents": 100, "due_date": "2026-12-01"}, "not_found")
	e.Fails(cs, "billing_invoices_create", map[string]any{"customer_id": "cus_maria", "subscription_id": "sub_acme", "description": "x", "amount_cents": 100, "due_date": "2026-12-01"}, "invalid_arguments")
	var inv billing.Invoice
	e.OK(cs, "billing_invoices_create", map[string]any{"customer_id": "cus_maria", "description": "Serviços de dezembro", "due_date": "2026-12-10",
		"items": []map[string]any{{"description": "Hora técnica", "quantity": 3, "unit_price_cents": 12550}, {"description": "Deslocamento", "quantity": 1, "unit_price_cents": 4000}}}, &inv)
	if inv.AmountCents != 3*12550+4000 || inv.Number != "FAT-001015" || inv.Status != billing.InvoiceOpen || inv.IssueDate != "2026-11-20" || inv.CustomerName != "Maria Oliveira" {
		t.Errorf("created %+v", inv)
	}
	if got := e.invoice(inv.ID); got.AmountCents != inv.AmountCents || len(got.Items) != 2 || got.Items[0].AmountCents != 37650 {
		t.Errorf("stored %+v", got)
	}
	// Reminders: only open or overdue, needs an e-mail, one per 24 hours.
	e.Fails(cs, "billing_invoices_send_reminder", map[string]any{"id": "inv_1001"}, "invalid_state")
	e.Fails(cs, "billing_invoices_send_reminder", map[string]any{"id": "inv_1011"}, "customer_without_email")
	before := e.count(demo.Organization, billing.KindReminder, store.Query{Parent: "inv_1005"})
	var rr billing.ReminderResult
	e.OK(cs, "billing_invoices_send_reminder", map[string]any{"id": "inv_1005", "message": "Podemos parcelar."}, &rr)
	if rr.Reminder.To != "contas@globex.example" || !strings.Contains(rr.Reminder.Body, "Podemos parcelar.") || !strings.Contains(rr.Reminder.Body, "40 dia(s) em atraso") {
		t.Errorf("reminder %+v", rr.Reminder)
	}
	e.Fails(cs, "billing_invoices_send_reminder", map[string]any{"id": "inv_1005"}, "reminder_too_soon")
	e.clock.Advance(25 * time.Hour)
	e.OK(cs, "billing_invoices_send_reminder", map[string]any{"id": "inv_1005"}, nil)
	if n := e.count(demo.Organization, billing.KindReminder, store.Query{Parent: "inv_1005"}); n != before+2 {
		t.Errorf("reminders of inv_1005: %d, want %d", n, before+2)
	}
	if got := e.invoice("inv_1005"); got.RemindersSent != 4 || !got.LastReminderAt.Equal(e.clock.Now()) {
		t.Errorf("inv_1005 reminders_sent=%d last=%s", got.RemindersSent, got.LastReminderAt)
	}
}

func TestNFeLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("owner", "2025-11-25", nil)
	// Globex's stored CNPJ has wrong check digits: SEFAZ rejects the NF-e.
	var n billing.NFe
	e.OK(cs, "billing_nfes_emit", map[string]any{"invoice_id": "inv_1006"}, &n)
	if n.Status != billing.NFeRejected || n.Rejection == nil || n.Rejection.Code != "208" || n.Number != 11 || !billing.ValidAccessKey(n.AccessKey) || n.PDF != nil {
		t.Fatalf("emit for Globex: %+v", n)
	}
	// A wrong document is refused by the tool itself…
	e.Fails(cs, "billing_customers_update", map[string]any{"id": "cus_globex", "document": "33.445.566/0001-00"}, "invalid_arguments")
	// …a valid one fixes the cause, and the next emission is authorized.
	e.OK(cs, "billing_customers_update", map[string]any{"id": "cus_globex", "document": "11.222.333/0001-81"}, nil)
	e.OK(cs, "billing_nfes_emit", map[string]any{"invoice_id": "inv_1006"}, &n)
	if n.Status != billing.NFeAuthorized || n.Protocol == "" || n.Number != 12 || n.Recipient.Document != "11222333000181" ||
		n.PDF == nil || n.PDF.SizeBytes == 0 || n.XML == nil || n.XML.SizeBytes == 0 || n.AccessKey[20:22] != "55" {
		t.Fatalf("second emit: %+v", n)
	}
	if e.invoice("inv_1006").NFeID != n.ID {
		t.Error("the invoice does not point at its NF-e")
	}
	e.Fails(cs, "billing_nfes_emit", map[string]any{"invoice_id": "inv_1006"}, "nfe_exists")
	e.Fails(cs, "billing_nfes_emit", map[string]any{"invoice_id": "inv_1012"}, "invalid_state")
	// Cancellation: a justification of 15 characters or more, authorized
	// NF-e only, within 24 hours of authorization.
	reason := "valor faturado com erro"
	e.Fails(cs, "billing_nfes_cancel", map[string]any{"id": "nfe_0010", "reason": "erro"}, "invalid_arguments")
	e.Fails(cs, "billing_nfes_cancel", map[string]any{"id": "nfe_0004", "reason": reason}, "invalid_state")
	e.Fails(cs, "billing_nfes_cancel", map[string]any{"id": "nfe_0009", "reason": reason}, "invalid_state")
	e.Fails(cs, "billing_nfes_cancel", map[string]any{"id": "nfe_0007", "reason": reason}, "invalid_state")
	e.Fails(cs, "billing_nfes_cancel", map[string]any{"id": "nfe_0001", "reason": reason}, "cancel_window_closed")
	e.OK(cs, "billing_nfes_cancel", map[string]any{"id": "nfe_0010", "reason": reason}, &n)
	var stored billing.NFe
	e.stored(demo.Organization, billing.KindNFe, "nfe_0010", &stored)
	if stored.Status != billing.NFeCancelled || stored.CancelReason != reason || stored.CancelProtocol == "" {
		t.Fatalf("cancelled NF-e stored as %+v", stored)
	}
	// With its NF-e cancelled, the invoice can be cancelled too.
	e.OK(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1004"}, nil)
	if e.invoice("inv_1004").Status != billing.InvoiceCancelled {
		t.Fatal("inv_1004 not cancelled")
	}
}

func TestCustomersAndSubscriptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("owner", "2025-11-25", nil)
	e.Fails(cs, "billing_customers_create", map[string]any{"name": "X", "document": "529.982.247-24"}, "invalid_arguments")
	e.Fails(cs, "billing_customers_create", map[string]any{"name": "X", "email": "not an e-mail"}, "invalid_arguments")
	e.Fails(cs, "billing_customers_create", map[string]any{"name": "X", "address": map[string]any{"state": "XX"}}, "invalid_arguments")
	var cu billing.Customer
	e.OK(cs, "billing_customers_create", map[string]any{"name": " Ana Costa ", "email": "ana@example.com", "document": "529.982.247-25",
		"address": map[string]any{"street": "Rua A", "number": "1", "city": "Campinas", "city_code": "3509502", "state": "sp", "zip": "13010-000"}}, &cu)
	if cu.Name != "Ana Costa" || cu.Document != "52998224725" || cu.DocumentType != "cpf" || cu.Address.State != "SP" || cu.Address.ZIP != "13010000" {
		t.Fatalf("created %+v", cu)
	}
	var sub billing.Subscription
	e.Fails(cs, "billing_subscriptions_create", map[string]any{"customer_id": cu.ID, "description": "Plano", "amount_cents": 1000, "interval": "weekly"}, "invalid_arguments")
	e.OK(cs, "billing_subscriptions_create", map[string]any{"customer_id": cu.ID, "description": "Plano Pessoal", "amount_cents": 4990, "start_date": "2026-12-05"}, &sub)
	if sub.Status != billing.SubscriptionActive || sub.Interval != "monthly" || sub.NextBillingDate != "2026-12-05" {
		t.Fatalf("subscription %+v", sub)
	}
	// A customer with an active subscription or an open invoice stays.
	e.Fails(cs, "billing_customers_delete", map[string]any{"id": cu.ID}, "customer_has_subscriptions")
	e.Fails(cs, "billing_customers_delete", map[string]any{"id": "cus_globex"}, "customer_has_open_invoices")
	e.OK(cs, "billing_subscriptions_cancel", map[string]any{"id": sub.ID, "reason": "mudou de ideia"}, &sub)
	e.Fails(cs, "billing_subscriptions_cancel", map[string]any{"id": sub.ID}, "invalid_state")
	var stored billing.Subscription
	e.stored(demo.Organization, billing.KindSubscription, sub.ID, &stored)
	if stored.Status != billing.SubscriptionCancelled || stored.NextBillingDate != "" || stored.CancelReason != "mudou de ideia" {
		t.Fatalf("cancelled subscription stored as %+v", stored)
	}
	e.OK(cs, "billing_customers_delete", map[string]any{"id": cu.ID}, nil)
	if e.stored(demo.Organization, billing.KindCustomer, cu.ID, &cu) {
		t.Fatal("the deleted customer is still stored")
	}
	e.Fails(cs, "billing_customers_get", map[string]any{"id": cu.ID}, "not_found")
}

func TestListingFiltersSortAndPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("viewer", "2026-07-28", nil)
	var l billing.InvoiceList
	e.OK(cs, "billing_invoices_list", map[string]any{"status": "overdue", "sort": "-days_overdue"}, &l)
	var got []string
	for _, inv := range l.Invoices {
		got = append(got, inv.ID)
	}
	if strings.Join(got, " ") != "inv_1005 inv_1011 inv_1006 inv_1003" {
		t.Errorf("overdue by days overdue = %v", got)
	}
	e.OK(cs, "billing_invoices_list", map[string]any{"status": "open"}, &l)
	for _, inv := range l.Invoices {
		if inv.Status != "open" || inv.DueDate < "2026-11-20" {
			t.Errorf("open listing has %s %s due %s", inv.ID, inv.Status, inv.DueDate)
		}
	}
	if len(l.Invoices) != 3 {
		t.Errorf("open invoices: %d, want 3", len(l.Invoices))
	}
	e.OK(cs, "billing_invoices_list", map[string]any{"without_nfe": true}, &l)
	got = got[:0]
	for _, inv := range l.Invoices {
		got = append(got, inv.ID)
	}
	slices.Sort(got)
	if strings.Join(got, " ") != "inv_1005 inv_1006 inv_1007 inv_1008 inv_1009 inv_1011 inv_1012 inv_1013" {
		t.Errorf("without NF-e = %v", got)
	}
	// Pages of 5 by amount cover everything once, in order.
	var all []billing.Invoice
	cursor := ""
	for range 10 {
		args := map[string]any{"limit": 5, "sort": "amount_cents"}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var pg billing.InvoiceList
		e.OK(cs, "billing_invoices_list", args, &pg)
		all = append(all, pg.Invoices...)
		if cursor = pg.NextCursor; cursor == "" {
			break
		}
	}
	if len(all) != 14 || !slices.IsSortedFunc(all, func(a, b billing.Invoice) int { return int(a.AmountCents - b.AmountCents) }) {
		t.Errorf("paged %d invoices, sorted=%v", len(all), slices.IsSortedFunc(all, func(a, b billing.Invoice) int { return int(a.AmountCents - b.AmountCents) }))
	}
	msg := e.Fails(cs, "billing_invoices_list", map[string]any{"sort": "customer_name"}, "invalid_arguments")
	if !strings.Contains(msg, "due_date") {
		t.Errorf("unsortable field: %s", msg)
	}
	e.Fails(cs, "billing_invoices_list", map[string]any{"status": "late"}, "invalid_arguments")
	var nl billing.NFeList
	e.OK(cs, "billing_nfes_list", map[string]any{"status": "rejected"}, &nl)
	if len(nl.NFes) != 3 {
		t.Errorf("rejected NF-e: %d, want 3", len(nl.NFes))
	}
	var cl billing.CustomerList
	e.OK(cs, "billing_customers_list", map[string]any{"search": "oliveira", "sort": "name"}, &cl)
	if len(cl.Customers) != 1 || cl.Customers[0].ID != "cus_maria" {
		t.Errorf("search: %+v", cl.Customers)
	}
}

// A record of another organization is not found — by id, in listings, as
// a resource or as a completion — and the other way round.
func TestOtherOrganizationIsInvisible(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, era := range eras {
		other := e.Connect("other", era, nil)
		for tool, args := range map[string]map[string]any{
			"billing_customers_get":     {"id": "cus_acme"},
			"billing_invoices_get":      {"id": "inv_1001"},
			"billing_nfes_get":          {"id": "nfe_0001"},
			"billing_subscriptions_get": {"id": "sub_acme"},
		} {
			msg := e.Fails(other, tool, args, "not_found")
			if strings.Contains(msg, "org_demo") || strings.Contains(msg, "ACME") {
				t.Errorf("%s leaks: %s", tool, msg)
			}
		}
		e.Fails(other, "billing_invoices_cancel", map[string]any{"id": "inv_1006"}, "not_found")
		e.Fails(other, "billing_nfes_emit", map[string]any{"invoice_id": "inv_1006"}, "not_found")
		var cl billing.CustomerList
		e.OK(other, "billing_customers_list", nil, &cl)
		if len(cl.Customers) != 1 || cl.Customers[0].ID != otherCustomer {
			t.Errorf("%s other org lists %+v", era, cl.Customers)
		}
		var il billing.InvoiceList
		e.OK(other, "billing_invoices_list", nil, &il)
		if len(il.Invoices) != 0 {
			t.Errorf("%s other org lists %d invoices", era, len(il.Invoices))
		}
		var org billing.Organization
		e.OK(other, "billing_organization_get", nil, &org)
		if org.ID != otherOrg || org.CNPJ != "" || org.FiscalProfileComplete {
			t.Errorf("other org profile %+v", org)
		}
		_, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: "kobana://billing/invoices/inv_1001/pdf"})
		want := int64(-32002)
		if era == "2026-07-28" {
			want = -32602
		}
		if rpcCode(err) != want {
			t.Errorf("%s other org reads the demo PDF: %v", era, err)
		}
		c, err := other.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "kobana://billing/customers/{id}"},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: "cus_"}})
		if err != nil || strings.Join(c.Completion.Values, " ") != otherCustomer {
			t.Errorf("%s other org completes %v, %v", era, c, err)
		}
		// And the demo organization does not see the other one's customer,
		// whichever of its workspaces the token names.
		for _, who := range []string{"owner", "sandbox"} {
			e.Fails(e.Connect(who, era, nil), "billing_customers_get", map[string]any{"id": otherCustomer}, "not_found")
		}
	}
	// The sandbox workspace belongs to the demo organization: same billing data.
	var inv billing.Invoice
	e.OK(e.Connect("sandbox", "2026-07-28", nil), "billing_invoices_get", map[string]any{"id": "inv_1001"}, &inv)
	if e.invoice("inv_1006").Status != billing.InvoiceOpen || e.count(demo.Organization, billing.KindNFe, store.Query{}) != 10 {
		t.Fatal("the other organization changed demo records")
	}
}

// Numbers stay unique when invoices are created at the same time.
func TestConcurrentInvoiceNumbers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("owner", "2026-07-28", nil)
	seen := createInvoicesConcurrently(t, []*mcp.ClientSession{cs}, 12)
	if len(seen) != 12 || !seen["FAT-001015"] || !seen["FAT-001026"] {
		t.Errorf("numbers %v", seen)
	}
}

// Two replicas (two store handles on one file, each with its own Billing
// product) creating invoices at the same time never hand out a number twice.
func TestInvoiceNumbersAcrossReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sessions := []*mcp.ClientSession{e.Connect("owner", "2026-07-28", nil), e.replica().Connect("owner", "2026-07-28", nil)}
	seen := createInvoicesConcurrently(t, sessions, 24)
	for i := 1015; i < 1015+24; i++ {
		if n := fmt.Sprintf("FAT-%06d", i); !seen[n] {
			t.Errorf("number %s not handed out (got %d numbers: %v)", n, len(seen), seen)
		}
	}
}

// A counter that an earlier version kept as a record is continued, not
// restarted at the first number.
func TestLegacyCounterRecordIsContinued(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.st.PutRecord(context.Background(), store.Record{Workspace: otherOrg, Kind: billing.KindCounter, ID: "invoice",
		Created: demoNow, Data: json.RawMessage(`{"value":1500}`)}); err != nil {
		t.Fatal(err)
	}
	cs := e.Connect("other", "2026-07-28", nil)
	for _, want := range []string{"FAT-001501", "FAT-001502"} {
		var inv billing.Invoice
		e.OK(cs, "billing_invoices_create", map[string]any{"customer_id": otherCustomer, "description": "Consultoria", "amount_cents": 5000, "due_date": "2026-12-20"}, &inv)
		if inv.Number != want {
			t.Errorf("invoice number %s, want %s", inv.Number, want)
		}
	}
}

// Concurrent emissions for one invoice, spread over two replicas sharing the
// store, issue one NF-e: the others are told one exists or is being issued,
// and no number is burnt by the losers.
func TestOneNFePerInvoiceAcrossReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sessions := []*mcp.ClientSession{e.Connect("owner", "2026-07-28", nil), e.replica().Connect("owner", "2026-07-28", nil)}
	issued, refused := mcptest.CallConcurrently(t, sessions, &mcp.CallToolParams{Name: "billing_nfes_emit", Arguments: map[string]any{"invoice_id": "inv_1011"}}, 20, "nfe_exists")
	if issued != 1 || refused != 19 {
		t.Fatalf("%d issued, %d refused; want 1 and 19", issued, refused)
	}
	recs, err := e.st.ListRecords(context.Background(), demo.Organization, billing.KindNFe, store.Query{Parent: "inv_1011"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Status != string(billing.NFeAuthorized) {
		t.Fatalf("NF-e of inv_1011 in the store: %+v", recs)
	}
	// The next NF-e of the series follows without a gap.
	var first, next billing.NFe
	if err := json.Unmarshal(recs[0].Data, &first); err != nil {
		t.Fatal(err)
	}
	e.OK(sessions[0], "billing_nfes_emit", map[string]any{"invoice_id": "inv_1006"}, &next)
	if next.Number != first.Number+1 {
		t.Errorf("numbers %d then %d: the refused emissions burnt numbers", first.Number, next.Number)
	}
}

// createInvoicesConcurrently creates n invoices at once, spread over
// sessions, and returns the numbers handed out; a number given twice fails
// the test.
func createInvoicesConcurrently(t *testing.T, sessions []*mcp.ClientSession, n int) map[string]bool {
	t.Helper()
	var wg sync.WaitGroup
	numbers := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := sessions[i%len(sessions)].CallTool(context.Background(), &mcp.CallToolParams{Name: "billing_invoices_create",
				Arguments: map[string]any{"customer_id": "cus_acme", "description": "Hora extra", "amount_cents": 18000, "due_date": "2026-12-20"}})
			if err != nil || r.IsError {
				t.Errorf("create: %v %v", err, r)
				return
			}
			numbers <- r.StructuredContent.(map[string]any)["number"].(string)
		}()
	}
	wg.Wait()
	close(numbers)
	seen := map[string]bool{}
	for num := range numbers {
		if seen[num] {
			t.Errorf("number %s given twice", num)
		}
		seen[num] = true
	}
	return seen
}
