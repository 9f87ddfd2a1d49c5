package inboxdemo_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// demoNow anchors the demo's dates in these tests.
var demoNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "inbox.db"), store.Options{Now: func() time.Time { return demoNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// countEmails counts the demo workspace's e-mails.
func countEmails(t *testing.T, r inbox.Repo) int {
	t.Helper()
	n := 0
	if err := r.Emails.Each(context.Background(), demo.Workspace, store.Query{}, func(inbox.Email) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLoadAfterIdentity: a path that creates the demo organization first
// (demo.Identity, as another product's demo data may) still gets the Inbox's
// demo records from Load, which looks for its own records rather than for
// the organization.
func TestLoadAfterIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	if created, err := demo.Identity(ctx, st); err != nil || !created {
		t.Fatalf("Identity = %v, %v", created, err)
	}
	tokens, err := inboxdemo.Load(ctx, st, demoNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2 {
		t.Errorf("%d tokens, want the owner's and the viewer's", len(tokens))
	}
	r := inbox.NewRepo(st)
	if n := countEmails(t, r); n != 25 {
		t.Errorf("%d demo e-mails after Identity then Load, want 25", n)
	}
	if _, err := r.Inboxes.Get(ctx, demo.Workspace, "ibx_invoices"); err != nil {
		t.Errorf("the demo inbox: %v", err)
	}
	if secrets, err := st.ListSecrets(ctx, demo.Workspace); err != nil || len(secrets) == 0 {
		t.Errorf("the demo secrets: %v, %v", secrets, err)
	}
}

// TestLoadIsIdempotent: a second Load, later, keeps the records the first
// one made (it only mints new tokens).
func TestLoadIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	if _, err := inboxdemo.Load(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	r := inbox.NewRepo(st)
	before, err := r.Emails.Get(ctx, demo.Workspace, "eml_inv_00")
	if err != nil {
		t.Fatal(err)
	}
	first := countEmails(t, r)
	tokens, err := inboxdemo.Load(ctx, st, demoNow.Add(72*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2 {
		t.Errorf("%d tokens from the second Load, want 2", len(tokens))
	}
	after, err := r.Emails.Get(ctx, demo.Workspace, "eml_inv_00")
	if err != nil {
		t.Fatal(err)
	}
	if n := countEmails(t, r); n != first || !after.ReceivedAt.Equal(before.ReceivedAt) {
		t.Errorf("the second Load changed the records: %d e-mails (was %d), eml_inv_00 received %v (was %v)", n, first, after.ReceivedAt, before.ReceivedAt)
	}
}

// The demo's e-mails obey their inboxes' rules, and its automatic reply is
// rejected by the same Screen the intake uses.
func TestLoadFollowsInboxRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	if _, err := inboxdemo.Load(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	r := inbox.NewRepo(st)
	ws, err := r.Workspaces.Get(ctx, demo.Workspace, demo.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	inboxes := map[string]inbox.Inbox{}
	r.Inboxes.Each(ctx, demo.Workspace, store.Query{}, func(ib inbox.Inbox) error { inboxes[ib.ID] = ib; return nil })
	n := 0
	err = r.Emails.Each(ctx, demo.Workspace, store.Query{}, func(e inbox.Email) error {
		n++
		rej := inbox.Screen(inboxes[e.InboxID], ws.Limits, e)
		if e.Status == inbox.EmailRejected {
			if rej == nil || rej.Reason != inbox.RejectAutoReply || e.StatusDetail != rej.Error() {
				t.Errorf("%s is recorded rejected (%s) but Screen says %v", e.ID, e.StatusDetail, rej)
			}
		} else if rej != nil {
			t.Errorf("%s was accepted but breaks a rule: %v", e.ID, rej)
		}
		return nil
	})
	if err != nil || n != 25 {
		t.Fatalf("%d e-mails, %v", n, err)
	}
}
