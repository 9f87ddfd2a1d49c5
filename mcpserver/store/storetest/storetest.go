package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// Opener returns a new, empty store using now as its clock.
type Opener func(t *testing.T, now func() time.Time) store.Store

// clock is a settable clock shared with the store under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Run runs the conformance suite, one subtest per behaviour.
func Run(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T, store.Store, *clock)
	}{
		{"Records", records}, {"KeysetPaging", keysetPaging}, {"Blobs", blobs}, {"Identity", identity},
		{"Secrets", secrets}, {"Keys", keys}, {"Ledger", ledger},
	} {
		name, f := tc.name, tc.f
		t.Run(name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
			f(t, open(t, c.now), c)
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func records(t *testing.T, st store.Store, c *clock) {
	ctx := context.Background()
	base := c.now()
	for i, id := range []string{"a_1", "a%2", "ab3", "a_4"} {
		must(t, st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: id, Parent: "p" + id[len(id)-1:], Status: "s", Created: base.Add(time.Duration(i) * time.Hour), Data: json.RawMessage(`{"n":1}`)}))
	}
	must(t, st.PutRecord(ctx, store.Record{Workspace: "w2", Kind: "k", ID: "a_9", Data: json.RawMessage(`{}`)}))
	must(t, st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "other", ID: "a_8", Data: json.RawMessage(`{}`)}))
	ids := func(q store.Query) string {
		t.Helper()
		recs, err := st.ListRecords(ctx, "w1", "k", q)
		must(t, err)
		var out []string
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return strings.Join(out, " ")
	}
	for q, want := range map[*store.Query]string{
		{}:                                "a_4 ab3 a%2 a_1",
		{Prefix: "a_"}:                    "a_4 a_1",
		{Prefix: "a%"}:                    "a%2",
		{Prefix: `a\`}:                    "",
		{Parent: "p3"}:                    "ab3",
		{Since: base.Add(2 * time.Hour)}:  "a_4 ab3",
		{Before: base.Add(2 * time.Hour)}: "a%2 a_1",
		{Before: base.Add(3 * time.Hour), Limit: 1}: "ab3",
	} {
		if got := ids(*q); got != want {
			t.Errorf("ListRecords(%+v) = %q, want %q (most recent first, this workspace and kind only, prefix literal)", *q, got, want)
		}
	}
	r, err := st.GetRecord(ctx, "w1", "k", "a_1")
	if err != nil || !r.Created.Equal(base) || r.Parent != "p1" || r.Status != "s" {
		t.Errorf("GetRecord = %+v %v", r, err)
	}
	var v map[string]int
	if json.Unmarshal(r.Data, &v) != nil || v["n"] != 1 {
		t.Errorf("data = %s", r.Data)
	}
	if _, err := st.GetRecord(ctx, "w2", "k", "a_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another workspace's record: %v, want ErrNotFound", err)
	}
	// Replacing keeps the creation time when Created is zero.
	must(t, st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: "a_1", Status: "x", Data: json.RawMessage(`{"n":2}`)}))
	r, _ = st.GetRecord(ctx, "w1", "k", "a_1")
	if !r.Created.Equal(base) || r.Status != "x" || !strings.Contains(string(r.Data), "2") {
		t.Errorf("replaced = %+v", r)
	}
	must(t, st.DeleteRecord(ctx, "w1", "k", "a_1"))
	if err := st.DeleteRecord(ctx, "w1", "k", "a_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := st.PutRecord(ctx, store.Record{Kind: "k", ID: "x"}); err == nil {
		t.Error("a record without workspace was stored")
	}
}

func blobs(t *testing.T, st store.Store, _ *clock) {
	ctx := context.Background()
	content := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
	must(t, st.PutBlob(ctx, "w1", "b", content))
	got, err := st.GetBlob(ctx, "w1", "b")
	if err != nil || !bytes.Equal(got, content) {
		t.Errorf("GetBlob = %d bytes %v", len(got), err)
	}
	if _, err := st.GetBlob(ctx, "w2", "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another workspace's blob: %v", err)
	}
	must(t, st.DeleteBlob(ctx, "w1", "b"))
	if err := st.DeleteBlob(ctx, "w1", "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

func seedIdentity(t *testing.T, st store.Store) {
	ctx := context.Background()
	must(t, st.PutOrganization(ctx, store.Organization{ID: "o1", Name: "O"}))
	must(t, st.PutOrganization(ctx, store.Organization{ID: "o2", Name: "P"}))
	must(t, st.PutWorkspace(ctx, store.Workspace{ID: "w1", Organization: "o1", Name: "W", Slug: "w"}))
	must(t, st.PutPerson(ctx, store.Person{ID: "p1", Organization: "o1", Name: "Ana", Email: "ana@x.example"}))
	must(t, st.PutPerson(ctx, store.Person{ID: "p2", Organization: "o2", Name: "Zed"}))
	must(t, st.SetMembership(ctx, "w1", "p1", "operator"))
}

func identity(t *testing.T, st store.Store, c *clock) {
	ctx := context.Background()
	seedIdentity(t, st)
	if w, err := st.GetWorkspace(ctx, "w1"); err != nil || w.Organization != "o1" || w.Slug != "w" {
		t.Errorf("GetWorkspace = %+v %v", w, err)
	}
	if p, err := st.GetPerson(ctx, "p1"); err != nil || p.Email != "ana@x.example" {
		t.Errorf("GetPerson = %+v %v", p, err)
	}
	if err := st.SetMembership(ctx, "w1", "p2", "owner"); err == nil {
		t.Error("a person joined a workspace of another organization")
	}
	if _, err := st.CreateToken(ctx, store.NewToken{Person: "p2", Workspace: "w1", Scopes: []string{"read"}}); err == nil {
		t.Error("a token for a non-member")
	}
	if _, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"admin"}}); err == nil {
		t.Error("a token with an unknown scope")
	}
	tok, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"write"}, Expires: c.now().Add(time.Hour)})
	must(t, err)
	if !strings.HasPrefix(tok, store.TokenPrefix) || len(tok) < 40 {
		t.Errorf("token %q", tok)
	}
	p, err := st.Authenticate(ctx, tok)
	if err != nil || p.Person != "p1" || p.PersonName != "Ana" || p.Organization != "o1" || p.Workspace != "w1" || p.Role != "operator" ||
		strings.Join(p.Scopes, ",") != "read,write" || p.TokenID == "" {
		t.Fatalf("Authenticate = %+v %v (write implies read)", p, err)
	}
	must(t, st.SetMembership(ctx, "w1", "p1", "viewer"))
	if p, _ := st.Authenticate(ctx, tok); p.Role != "viewer" {
		t.Errorf("role change not seen: %s", p.Role)
	}
	if _, err := st.Authenticate(ctx, tok+"0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown token: %v", err)
	}
	c.add(time.Hour)
	if _, err := st.Authenticate(ctx, tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired token: %v", err)
	}
	tok2, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	must(t, err)
	p, err = st.Authenticate(ctx, tok2)
	must(t, err)
	must(t, st.RevokeToken(ctx, p.TokenID))
	if _, err := st.Authenticate(ctx, tok2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked token: %v", err)
	}
	if err := st.RevokeToken(ctx, p.TokenID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
}

func secrets(t *testing.T, st store.Store, _ *clock) {
	ctx := context.Background()
	must(t, st.SetSecret(ctx, "w1", "B_KEY", "value-b"))
	must(t, st.SetSecret(ctx, "w1", "A_KEY", "value-a"))
	must(t, st.SetSecret(ctx, "w1", "A_KEY", "value-a2"))
	must(t, st.SetSecret(ctx, "w2", "A_KEY", "other"))
	list, err := st.ListSecrets(ctx, "w1")
	must(t, err)
	if len(list) != 2 || list[0].Name != "A_KEY" || list[1].Name != "B_KEY" {
		t.Errorf("ListSecrets = %+v (names only, sorted)", list)
	}
	all, err := st.RevealSecrets(ctx, "w1")
	if err != nil || len(all) != 2 || all["A_KEY"] != "value-a2" || all["B_KEY"] != "value-b" {
		t.Errorf("RevealSecrets = %v %v", all, err)
	}
	must(t, st.DeleteSecret(ctx, "w1", "B_KEY"))
	if err := st.DeleteSecret(ctx, "w1", "B_KEY"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if all, _ := st.RevealSecrets(ctx, "w3"); len(all) != 0 {
		t.Errorf("empty workspace reveals %v", all)
	}
}

func keys(t *testing.T, st store.Store, c *clock) {
	ctx := context.Background()
	k1, err := st.SigningKey(ctx, "confirm")
	must(t, err)
	if len(k1.Secret) < 32 || k1.ID == "" {
		t.Fatalf("key %+v", k1)
	}
	if again, _ := st.SigningKey(ctx, "confirm"); again.ID != k1.ID {
		t.Error("the signing key changed without rotation")
	}
	c.add(time.Minute)
	k2, err := st.RotateKey(ctx, "confirm")
	must(t, err)
	if cur, _ := st.SigningKey(ctx, "confirm"); cur.ID != k2.ID || k2.ID == k1.ID {
		t.Error("rotation did not switch the signing key")
	}
	old, err := st.VerifyingKey(ctx, "confirm", k1.ID)
	if err != nil || old.Retired.IsZero() || !bytes.Equal(old.Secret, k1.Secret) {
		t.Errorf("retired key = %+v %v", old, err)
	}
	if _, err := st.VerifyingKey(ctx, "download", k1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Error("a key verifies for another purpose")
	}
	if other, _ := st.SigningKey(ctx, "download"); other.ID == k2.ID {
		t.Error("purposes share a key")
	}
	c.add(time.Minute)
	must(t, st.PruneKeys(ctx, "confirm", c.now()))
	if _, err := st.VerifyingKey(ctx, "confirm", k1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Error("a pruned key still verifies")
	}
	if _, err := st.VerifyingKey(ctx, "confirm", k2.ID); err != nil {
		t.Error("the active key was pruned")
	}
}

func ledger(t *testing.T, st store.Store, c *clock) {
	ctx := context.Background()
	exp := c.now().Add(5 * time.Minute)
	var ok, replayed atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := st.Consume(ctx, "nonce-1", exp); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, store.ErrReplayed):
				replayed.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || replayed.Load() != 49 {
		t.Fatalf("50 concurrent Consume: ok=%d replayed=%d, want 1 and 49", ok.Load(), replayed.Load())
	}
	if used, err := st.ConsumedNonce(ctx, "nonce-1"); err != nil || !used {
		t.Errorf("ConsumedNonce = %v %v", used, err)
	}
	if used, _ := st.ConsumedNonce(ctx, "nonce-2"); used {
		t.Error("an unused nonce is reported consumed")
	}
	// An entry whose expiry (by the caller's clock) is long past is still
	// single-use: cleanup must go by the store's own notion of age.
	past := c.now().Add(-30 * 24 * time.Hour)
	must(t, st.Consume(ctx, "nonce-3", past))
	must(t, st.Consume(ctx, "nonce-4", past))
	if err := st.Consume(ctx, "nonce-3", past); !errors.Is(err, store.ErrReplayed) {
		t.Errorf("replay of an entry with a past expiry: %v", err)
	}
}

// keysetPaging: records sharing a creation time are neither skipped nor
// repeated when paging with Before and BeforeID.
func keysetPaging(t *testing.T, st store.Store, c *clock) {
	ctx := context.Background()
	at := c.now()
	for _, id := range []string{"r1", "r2", "r3", "r4", "r5"} {
		must(t, st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: id, Created: at, Data: json.RawMessage(`{}`)}))
	}
	must(t, st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: "r0", Created: at.Add(-time.Second), Data: json.RawMessage(`{}`)}))
	var seen []string
	q := store.Query{Limit: 2}
	for range 10 {
		recs, err := st.ListRecords(ctx, "w1", "k", q)
		must(t, err)
		for _, r := range recs {
			seen = append(seen, r.ID)
		}
		if len(recs) < q.Limit {
			break
		}
		last := recs[len(recs)-1]
		q.Before, q.BeforeID = last.Created, last.ID
	}
	if got := strings.Join(seen, " "); got != "r5 r4 r3 r2 r1 r0" {
		t.Errorf("paged %q, want every record once, newest first, ties by id descending", got)
	}
}
