package inbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/sqlite"
)

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

func TestRepoRecords(t *testing.T) {
	ctx := context.Background()
	r := inbox.Repo{Store: openStore(t)}
	for i, id := range []string{"ibx_a", "ibx_b", "ibx_c"} {
		ib := inbox.Inbox{ID: id, Name: id, AgentID: "agt_1", Status: inbox.StatusActive, Recipients: []string{}, CreatedAt: demoNow.Add(time.Duration(i) * time.Minute)}
		if err := r.Put(ctx, "ws1", ib); err != nil {
			t.Fatal(err)
		}
	}
	got, err := inbox.Get[inbox.Inbox](ctx, r, "ws1", "ibx_b")
	if err != nil || got.Name != "ibx_b" || got.AgentID != "agt_1" {
		t.Fatalf("Get: %+v %v", got, err)
	}
	// Another workspace does not see it.
	_, err = inbox.Get[inbox.Inbox](ctx, r, "ws2", "ibx_b")
	var nf *inbox.NotFoundError
	if !errors.As(err, &nf) || nf.Kind != inbox.KindInbox || nf.ID != "ibx_b" || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
	// Key columns filter listings: parent is the agent, most recent first.
	page, next, err := inbox.List[inbox.Inbox](ctx, r, "ws1", store.Query{Parent: "agt_1", Limit: 2})
	if err != nil || len(page) != 2 || page[0].ID != "ibx_c" || page[1].ID != "ibx_b" || next == "" {
		t.Fatalf("first page: %v next=%q err=%v", ids(page), next, err)
	}
	var all []string
	if err := inbox.Each(ctx, r, "ws1", store.Query{Limit: 1}, func(ib inbox.Inbox) error { all = append(all, ib.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[2] != "ibx_a" {
		t.Fatalf("Each: %v", all)
	}
	if err := r.Create(ctx, "ws1", inbox.Inbox{ID: "ibx_a"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Create over an existing record: %v", err)
	}
	if err := inbox.Delete[inbox.Inbox](ctx, r, "ws1", "ibx_a"); err != nil {
		t.Fatal(err)
	}
	if err := inbox.Delete[inbox.Inbox](ctx, r, "ws1", "ibx_a"); !errors.As(err, &nf) {
		t.Fatalf("deleting twice: %v", err)
	}
}

func ids(ibs []inbox.Inbox) []string {
	var out []string
	for _, ib := range ibs {
		out = append(out, ib.ID)
	}
	return out
}

func TestCostAndCatalog(t *testing.T) {
	if c := inbox.Cost("gpt-4.1-mini", inbox.Tokens{Input: 1_000_000, Output: 500_000}); c != 1.2 {
		t.Errorf("gpt-4.1-mini cost = %v, want 1.2", c)
	}
	if c := inbox.Cost("claude-sonnet-4-5", inbox.Tokens{Input: 3333, Output: 7}); c != 0.010104 {
		t.Errorf("rounded cost = %v, want 0.010104", c)
	}
	if c := inbox.Cost("no-such-model", inbox.Tokens{Input: 1e6}); c != 0 {
		t.Errorf("unknown model cost = %v", c)
	}
	m := inbox.Models()
	m[0].InputUSDPerMTok = 0
	if inbox.Models()[0].InputUSDPerMTok == 0 {
		t.Error("Models hands out the catalog itself")
	}
	if len(inbox.ModelIDs()) != len(m) {
		t.Error("ModelIDs and Models disagree")
	}
}

// The demo's e-mails obey their inboxes' rules, and its automatic reply is
// rejected by the same Screen the intake uses.
func TestSeedFollowsInboxRules(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	if _, err := inbox.Seed(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	r := inbox.Repo{Store: st}
	ws, err := inbox.Get[inbox.Workspace](ctx, r, demo.Workspace, demo.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	inboxes := map[string]inbox.Inbox{}
	inbox.Each(ctx, r, demo.Workspace, store.Query{}, func(ib inbox.Inbox) error { inboxes[ib.ID] = ib; return nil })
	n := 0
	err = inbox.Each(ctx, r, demo.Workspace, store.Query{}, func(e inbox.Email) error {
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
