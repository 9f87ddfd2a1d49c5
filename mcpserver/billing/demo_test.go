package billing

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

func TestSeedDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "demo.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := SeedDemo(ctx, st, now); err != nil {
		t.Fatal(err)
	}
	_, p, err := New(Options{Store: st, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	invs, err := p.invoices(ctx, demo.Organization, InvoiceListArg{})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]int{}
	for _, inv := range invs {
		status[inv.Status]++
	}
	if status[InvoiceOpen] != 3 || status[InvoiceOverdue] != 4 || status[InvoicePaid] != 5 || status[InvoiceCancelled] != 1 || status[InvoiceRefunded] != 1 {
		t.Errorf("invoices by status %v", status)
	}
	without, _ := p.invoices(ctx, demo.Organization, InvoiceListArg{WithoutNFe: true})
	nfes, _ := p.repo.nfes.All(ctx, demo.Organization, store.Query{})
	nstatus := map[string]int{}
	for _, n := range nfes {
		nstatus[n.Status]++
		if !ValidAccessKey(n.AccessKey) {
			t.Errorf("%s access key %s", n.ID, n.AccessKey)
		}
		if n.Status == NFeRejected && (n.Rejection == nil || n.Rejection.Code == "") {
			t.Errorf("%s rejected without a reason", n.ID)
		}
	}
	if len(without) == 0 || nstatus[NFeAuthorized] != 5 || nstatus[NFeRejected] != 3 || nstatus[NFePending] != 1 || nstatus[NFeCancelled] != 1 {
		t.Errorf("%d invoices without NF-e; NF-e by status %v", len(without), nstatus)
	}
	subs, _ := p.repo.subscriptions.All(ctx, demo.Organization, store.Query{})
	if len(subs) != 3 {
		t.Errorf("%d subscriptions", len(subs))
	}
	org, _ := p.organization(ctx, demo.Organization)
	if !org.FiscalProfileComplete {
		t.Errorf("demo issuer profile incomplete: %+v", org)
	}
	// Seeding again changes nothing, even at another time.
	before, _ := st.ListRecords(ctx, demo.Organization, KindInvoice, store.Query{Limit: 1000})
	if err := SeedDemo(ctx, st, now.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	after, _ := st.ListRecords(ctx, demo.Organization, KindInvoice, store.Query{Limit: 1000})
	if len(after) != len(before) || string(after[0].Data) != string(before[0].Data) {
		t.Error("a second SeedDemo changed the invoices")
	}
}
