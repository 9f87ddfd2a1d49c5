package billing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

// Listing, filtering, sorting and completion see every record, not a recent
// window: with 1 200 invoices, the oldest one is found by its filter, by
// completion, and on the last page of a listing that pages through all of
// them (Billing used to consider only the 1 000 most recent).
func TestListingsSeeEveryRecord(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 1 200 invoices")
	}
	e := newEnv(t)
	ctx := context.Background()
	const n = 1200
	base := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	err := e.st.WithTx(ctx, func(tx store.Tx) error {
		for i := range n {
			inv := billing.Invoice{ID: fmt.Sprintf("inv_bulk_%04d", i), Number: fmt.Sprintf("BLK-%06d", i), CustomerID: "cus_bulk", CustomerName: "Bulk",
				Description: "bulk", Items: []billing.InvoiceItem{}, AmountCents: int64(100 + (i*7919)%5000), Currency: "BRL",
				IssueDate: "2025-01-01", DueDate: base.AddDate(0, 0, i%300).Format("2006-01-02"), Status: billing.InvoicePaid,
				CreatedAt: base.Add(time.Duration(i) * time.Minute), UpdatedAt: base}
			if i == 0 {
				inv.SubscriptionID = "sub_oldest"
			}
			b, _ := json.Marshal(inv)
			if err := tx.PutRecord(ctx, store.Record{Workspace: demo.Organization, Kind: billing.KindInvoice, ID: inv.ID, Parent: inv.CustomerID,
				Status: inv.Status, Created: inv.CreatedAt, Data: b}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cs := e.Connect("viewer", "2026-07-28", nil)
	// A filter matching only the oldest invoice.
	var l billing.InvoiceList
	e.OK(cs, "billing_invoices_list", map[string]any{"subscription_id": "sub_oldest"}, &l)
	if len(l.Invoices) != 1 || l.Invoices[0].ID != "inv_bulk_0000" {
		t.Fatalf("the oldest invoice by its filter: %+v", l.Invoices)
	}
	// Completion by a prefix only the oldest has.
	if got := complete(t, cs, resourceRef("kobana://billing/invoices/{id}"), "id", "inv_bulk_0000"); strings.Join(got, " ") != "inv_bulk_0000" {
		t.Fatalf("completion of the oldest: %v", got)
	}
	// Paging through the customer's invoices by amount, ascending: every
	// invoice once, in order, across pages.
	var amounts []int64
	seen := map[string]bool{}
	args := map[string]any{"customer_id": "cus_bulk", "sort": "amount_cents", "limit": 100}
	for page := 0; ; page++ {
		if page > n/100+1 {
			t.Fatal("the listing does not end")
		}
		e.OK(cs, "billing_invoices_list", args, &l)
		for _, inv := range l.Invoices {
			if seen[inv.ID] {
				t.Fatalf("%s on two pages", inv.ID)
			}
			seen[inv.ID] = true
			amounts = append(amounts, inv.AmountCents)
		}
		if l.NextCursor == "" {
			break
		}
		args["cursor"] = l.NextCursor
	}
	if len(seen) != n || !slices.IsSorted(amounts) {
		t.Fatalf("paged %d of %d invoices, sorted: %v", len(seen), n, slices.IsSorted(amounts))
	}
	// The cursor belongs to its listing.
	e.Fails(cs, "billing_invoices_list", map[string]any{"customer_id": "cus_bulk", "sort": "-amount_cents", "cursor": args["cursor"]}, "invalid_arguments")
	e.Fails(cs, "billing_invoices_list", map[string]any{"cursor": "12"}, "invalid_arguments")
}

// Status and due-date filters run in the store: overdue is an open invoice
// due before today, and an invoice stored before nfe_status existed is
// still judged by its NF-e.
func TestInvoiceFiltersInTheStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("viewer", "2026-07-28", nil)
	var all, overdue, open, without billing.InvoiceList
	e.OK(cs, "billing_invoices_list", map[string]any{"limit": 100}, &all)
	e.OK(cs, "billing_invoices_list", map[string]any{"status": "overdue", "limit": 100}, &overdue)
	e.OK(cs, "billing_invoices_list", map[string]any{"status": "open", "limit": 100}, &open)
	e.OK(cs, "billing_invoices_list", map[string]any{"without_nfe": true, "limit": 100}, &without)
	count := map[string]int{}
	for _, inv := range all.Invoices {
		count[inv.Status]++
	}
	if len(overdue.Invoices) != count[billing.InvoiceOverdue] || len(open.Invoices) != count[billing.InvoiceOpen] || len(overdue.Invoices) == 0 {
		t.Fatalf("overdue %d open %d, the whole listing says %v", len(overdue.Invoices), len(open.Invoices), count)
	}
	for _, inv := range overdue.Invoices {
		if inv.Status != billing.InvoiceOverdue || inv.DaysOverdue < 1 {
			t.Errorf("%s listed as overdue: %s, %d days", inv.ID, inv.Status, inv.DaysOverdue)
		}
	}
	for _, inv := range without.Invoices {
		if inv.NFeStatus == billing.NFeAuthorized || inv.NFeStatus == billing.NFePending {
			t.Errorf("%s listed without NF-e has a %s one", inv.ID, inv.NFeStatus)
		}
	}
	// inv_1001 has an authorized NF-e; stored the old way (no nfe_status) it
	// must still be left out.
	inv := e.invoice("inv_1001")
	if inv.NFeID == "" || inv.NFeStatus != billing.NFeAuthorized {
		t.Fatalf("inv_1001: %+v", inv)
	}
	inv.NFeStatus = ""
	b, _ := json.Marshal(inv)
	rec, _ := e.st.GetRecord(context.Background(), demo.Organization, billing.KindInvoice, "inv_1001")
	rec.Data = b
	if err := e.st.PutRecord(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	var again billing.InvoiceList
	e.OK(cs, "billing_invoices_list", map[string]any{"without_nfe": true, "limit": 100}, &again)
	if len(again.Invoices) != len(without.Invoices) || slices.ContainsFunc(again.Invoices, func(i billing.Invoice) bool { return i.ID == "inv_1001" }) {
		t.Errorf("a legacy invoice with an authorized NF-e is listed without NF-e")
	}
	// Cancelling an NF-e updates its invoice's copy of the status.
	nfeID := e.invoice("inv_1004").NFeID
	owner := e.Connect("owner", "2025-11-25", nil)
	e.OK(owner, "billing_nfes_cancel", map[string]any{"id": nfeID, "reason": "valor emitido com erro na nota"}, nil)
	if st := e.invoice("inv_1004").NFeStatus; st != billing.NFeCancelled {
		t.Errorf("inv_1004 after its NF-e was cancelled: nfe_status %q", st)
	}
	e.OK(cs, "billing_invoices_list", map[string]any{"without_nfe": true, "limit": 100}, &again)
	if !slices.ContainsFunc(again.Invoices, func(i billing.Invoice) bool { return i.ID == "inv_1004" }) {
		t.Errorf("inv_1004 is not listed without NF-e after its NF-e was cancelled")
	}
}
