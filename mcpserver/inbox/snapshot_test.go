package inbox_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
)

// TestSnapshots compares what each role of the demo workspace sees of Inbox
// (tools with their schemas and annotations, resources, templates,
// prompts) with testdata/snapshots/<role>.json. After adding or changing a
// tool, resource or prompt: go test ./mcpserver/inbox -run TestSnapshots
// -update, and review the diff.
func TestSnapshots(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "inbox.db"), store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	demo, err := inbox.Seed(ctx, st, now)
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{"owner": demo[0].Token, "viewer": demo[1].Token}
	if err := st.PutPerson(ctx, store.Person{ID: "per_olga", Organization: inbox.DemoOrganization, Name: "Olga"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMembership(ctx, inbox.DemoWorkspace, "per_olga", "operator"); err != nil {
		t.Fatal(err)
	}
	if tokens["operator"], err = st.CreateToken(ctx, store.NewToken{Person: "per_olga", Workspace: inbox.DemoWorkspace, Scopes: []string{"read", "write"}}); err != nil {
		t.Fatal(err)
	}
	p, _, err := inbox.New(inbox.Options{
		Store: st,
		Lint:  func([]byte) (json.RawMessage, bool) { return json.RawMessage(`[]`), true },
		Now:   func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{p}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"owner", "operator", "viewer"} {
		t.Run(role, func(t *testing.T) {
			cs := mcptest.Connect(t, mcptest.Stdio(t, srv, tokens[role]), mcptest.Legacy, nil)
			mcptest.Snapshot(t, cs, filepath.Join("testdata", "snapshots", role+".json"))
		})
	}
}
