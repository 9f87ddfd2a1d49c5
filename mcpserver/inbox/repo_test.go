package inbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
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
	r := inbox.NewRepo(openStore(t))
	for i, id := range []string{"ibx_a", "ibx_b", "ibx_c"} {
		ib := inbox.Inbox{ID: id, Name: id, AgentID: "agt_1", Status: inbox.StatusActive, Recipients: []string{}, CreatedAt: demoNow.Add(time.Duration(i) * time.Minute)}
		if err := r.Inboxes.Put(ctx, "ws1", ib); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Inboxes.Get(ctx, "ws1", "ibx_b")
	if err != nil || got.Name != "ibx_b" || got.AgentID != "agt_1" {
		t.Fatalf("Get: %+v %v", got, err)
	}
	// Another workspace does not see it; the error names kind and id.
	_, err = r.Inboxes.Get(ctx, "ws2", "ibx_b")
	var re *store.RecordError
	if !errors.As(err, &re) || re.ID != "ibx_b" || !errors.Is(err, store.ErrNotFound) || err.Error() != `inbox "ibx_b" not found` {
		t.Fatalf("other workspace: %v", err)
	}
	// Key columns filter listings: parent is the agent, most recent first,
	// and the cursor continues.
	page, err := r.Inboxes.List(ctx, "ws1", store.Query{Parent: "agt_1", Limit: 2})
	if err != nil || len(page.Items) != 2 || page.Items[0].ID != "ibx_c" || page.Items[1].ID != "ibx_b" || page.Next == "" {
		t.Fatalf("first page: %+v err=%v", page, err)
	}
	rest, err := r.Inboxes.List(ctx, "ws1", store.Query{Parent: "agt_1", Limit: 2, After: page.Next})
	if err != nil || len(rest.Items) != 1 || rest.Items[0].ID != "ibx_a" || rest.Next != "" {
		t.Fatalf("second page: %+v err=%v", rest, err)
	}
	if err := r.Inboxes.Create(ctx, "ws1", inbox.Inbox{ID: "ibx_a"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Create over an existing record: %v", err)
	}
	if err := r.Inboxes.Delete(ctx, "ws1", "ibx_a"); err != nil {
		t.Fatal(err)
	}
	if err := r.Inboxes.Delete(ctx, "ws1", "ibx_a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
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
