package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/store"
)

// countEmails counts the demo workspace's e-mails.
func countEmails(t *testing.T, r inbox.Repo) int {
	t.Helper()
	n := 0
	if err := r.Emails.Each(context.Background(), demo.Workspace, store.Query{}, func(inbox.Email) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSeedAfterIdentity: a path that creates the demo organization first
// (demo.Identity, as another product's seed may) still gets the Inbox's
// demo records from Seed, which looks for its own records rather than for
// the organization.
func TestSeedAfterIdentity(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	if created, err := demo.Identity(ctx, st); err != nil || !created {
		t.Fatalf("Identity = %v, %v", created, err)
	}
	tokens, err := inbox.Seed(ctx, st, demoNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2 {
		t.Errorf("%d tokens, want the owner's and the viewer's", len(tokens))
	}
	r := inbox.NewRepo(st)
	if n := countEmails(t, r); n != 25 {
		t.Errorf("%d demo e-mails after Identity then Seed, want 25", n)
	}
	if _, err := r.Inboxes.Get(ctx, demo.Workspace, "ibx_invoices"); err != nil {
		t.Errorf("the demo inbox: %v", err)
	}
	if secrets, err := st.ListSecrets(ctx, demo.Workspace); err != nil || len(secrets) == 0 {
		t.Errorf("the demo secrets: %v, %v", secrets, err)
	}
}

// TestSeedIsIdempotent: a second Seed, later, keeps the records the first
// one made (it only mints new tokens).
func TestSeedIsIdempotent(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	if _, err := inbox.Seed(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	r := inbox.NewRepo(st)
	before, err := r.Emails.Get(ctx, demo.Workspace, "eml_inv_00")
	if err != nil {
		t.Fatal(err)
	}
	first := countEmails(t, r)
	tokens, err := inbox.Seed(ctx, st, demoNow.Add(72*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2 {
		t.Errorf("%d tokens from the second Seed, want 2", len(tokens))
	}
	after, err := r.Emails.Get(ctx, demo.Workspace, "eml_inv_00")
	if err != nil {
		t.Fatal(err)
	}
	if n := countEmails(t, r); n != first || !after.ReceivedAt.Equal(before.ReceivedAt) {
		t.Errorf("the second Seed changed the records: %d e-mails (was %d), eml_inv_00 received %v (was %v)", n, first, after.ReceivedAt, before.ReceivedAt)
	}
}
