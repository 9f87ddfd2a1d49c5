package inbox_test

import (
	"context"
	"testing"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// seeded returns a store holding the demo organization (package demo) and,
// in its Finance workspace, three received e-mails — eml_inv_00, eml_inv_01
// and eml_inv_02, each the sample invoice e-mail (a PDF and an XML
// attachment) — their records and their raw messages.
func seeded(t *testing.T) (*sqlite.Store, inbox.Repo) {
	t.Helper()
	ctx := context.Background()
	st := openStore(t)
	if _, err := demo.Identity(ctx, st); err != nil {
		t.Fatal(err)
	}
	r := inbox.NewRepo(st)
	raw := []byte(examples.InvoiceEmail)
	for _, id := range []string{"eml_inv_00", "eml_inv_01", "eml_inv_02"} {
		e, err := inbox.ParseEmail(raw)
		if err != nil {
			t.Fatal(err)
		}
		e.ID, e.InboxID, e.ReceivedAt, e.Status = id, "ibx_invoices", demoNow, inbox.EmailProcessed
		if err := r.Emails.Put(ctx, demo.Workspace, e); err != nil {
			t.Fatal(err)
		}
		if err := st.PutBlob(ctx, demo.Workspace, e.ID, raw); err != nil {
			t.Fatal(err)
		}
	}
	return st, r
}
