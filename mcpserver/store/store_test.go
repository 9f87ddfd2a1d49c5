package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

func open(t testing.TB, now func() time.Time) (*store.SQL, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(context.Background(), path, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func seedIdentity(t testing.TB, st *store.SQL) {
	t.Helper()
	ctx := context.Background()
	for _, err := range []error{
		st.PutOrganization(ctx, store.Organization{ID: "o1", Name: "O"}),
		st.PutOrganization(ctx, store.Organization{ID: "o2", Name: "P"}),
		st.PutWorkspace(ctx, store.Workspace{ID: "w1", Organization: "o1", Name: "W"}),
		st.PutPerson(ctx, store.Person{ID: "p1", Organization: "o1", Name: "Ana"}),
		st.PutPerson(ctx, store.Person{ID: "p2", Organization: "o2", Name: "Zed"}),
		st.SetMembership(ctx, "w1", "p1", "operator"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecordsScopedOrderedAndPrefixLiteral(t *testing.T) {
	st, _ := open(t, nil)
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"a_1", "a%2", "ab3", "a_4"} {
		if err := st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: id, Parent: "p", Created: base.Add(time.Duration(i) * time.Hour), Data: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	st.PutRecord(ctx, store.Record{Workspace: "w2", Kind: "k", ID: "a_9", Data: json.RawMessage(`{}`)})
	ids := func(q store.Query) string {
		recs, err := st.ListRecords(ctx, "w1", "k", q)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, r := range recs {
			b.WriteString(r.ID + " ")
		}
		return b.String()
	}
	if got := ids(store.Query{Prefix: "a_"}); got != "a_4 a_1 " {
		t.Errorf("prefix a_ = %q (underscore must be literal, most recent first, workspace-scoped)", got)
	}
	if got := ids(store.Query{Prefix: "a%"}); got != "a%2 " {
		t.Errorf("prefix a%% = %q", got)
	}
	if got := ids(store.Query{Before: base.Add(2 * time.Hour), Limit: 1}); got != "a%2 " {
		t.Errorf("before/limit = %q", got)
	}
	if _, err := st.GetRecord(ctx, "w2", "k", "a_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cross-workspace get: %v", err)
	}
	// Updating keeps the creation time.
	st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: "a_1", Status: "x", Data: json.RawMessage(`{"v":2}`)})
	r, _ := st.GetRecord(ctx, "w1", "k", "a_1")
	if !r.Created.Equal(base) || r.Status != "x" || string(r.Data) != `{"v":2}` {
		t.Errorf("update = %+v", r)
	}
	if err := st.DeleteRecord(ctx, "w1", "k", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete missing: %v", err)
	}
}

func TestTokensAreHashedAndFollowMembership(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st, path := open(t, clock)
	seedIdentity(t, st)
	ctx := context.Background()
	if _, err := st.CreateToken(ctx, store.NewToken{Person: "p2", Workspace: "w1", Scopes: []string{"read"}}); err == nil {
		t.Error("token for a non-member")
	}
	if _, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"admin"}}); err == nil {
		t.Error("token with an unknown scope")
	}
	if err := st.SetMembership(ctx, "w1", "p2", "owner"); err == nil {
		t.Error("membership across organizations")
	}
	tok, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read", "write"}, Expires: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Authenticate(ctx, tok)
	if err != nil || p.Person != "p1" || p.Organization != "o1" || p.Role != "operator" || len(p.Scopes) != 2 {
		t.Fatalf("authenticate = %+v %v", p, err)
	}
	st.SetMembership(ctx, "w1", "p1", "viewer")
	if p, _ := st.Authenticate(ctx, tok); p.Role != "viewer" {
		t.Errorf("role change not seen: %s", p.Role)
	}
	raw, _ := os.ReadFile(path)
	wal, _ := os.ReadFile(path + "-wal")
	if bytes.Contains(raw, []byte(tok)) || bytes.Contains(wal, []byte(tok)) {
		t.Error("the token itself is in the database file")
	}
	if _, err := st.Authenticate(ctx, tok+"x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("wrong token: %v", err)
	}
	now = now.Add(2 * time.Hour)
	if _, err := st.Authenticate(ctx, tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired token: %v", err)
	}
	tok2, _ := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	p, _ = st.Authenticate(ctx, tok2)
	if err := st.RevokeToken(ctx, p.TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Authenticate(ctx, tok2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked token: %v", err)
	}
}

func TestSecretsEncryptedAtRest(t *testing.T) {
	st, path := open(t, nil)
	ctx := context.Background()
	const value = "sk_live_very_secret_value_123"
	if err := st.SetSecret(ctx, "w1", "API_KEY", value); err != nil {
		t.Fatal(err)
	}
	list, _ := st.ListSecrets(ctx, "w1")
	if len(list) != 1 || list[0].Name != "API_KEY" {
		t.Errorf("list = %+v", list)
	}
	got, err := st.RevealSecrets(ctx, "w1")
	if err != nil || got["API_KEY"] != value {
		t.Errorf("reveal = %v %v", got, err)
	}
	if other, _ := st.RevealSecrets(ctx, "w2"); len(other) != 0 {
		t.Errorf("another workspace sees %v", other)
	}
	st.Close()
	for _, f := range []string{path, path + "-wal"} {
		raw, _ := os.ReadFile(f)
		if bytes.Contains(raw, []byte(value)) {
			t.Errorf("%s holds the secret in clear", filepath.Base(f))
		}
	}
}

func TestKeysRotate(t *testing.T) {
	st, _ := open(t, nil)
	ctx := context.Background()
	k1, err := st.SigningKey(ctx, "confirm")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := st.SigningKey(ctx, "confirm"); again.ID != k1.ID {
		t.Error("signing key changed without rotation")
	}
	k2, _ := st.RotateKey(ctx, "confirm")
	if cur, _ := st.SigningKey(ctx, "confirm"); cur.ID != k2.ID || k2.ID == k1.ID {
		t.Error("rotation did not switch the signing key")
	}
	if old, err := st.VerifyingKey(ctx, "confirm", k1.ID); err != nil || old.Retired.IsZero() || !bytes.Equal(old.Secret, k1.Secret) {
		t.Errorf("retired key: %+v %v", old, err)
	}
	if _, err := st.VerifyingKey(ctx, "download", k1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Error("a key verifies for another purpose")
	}
	st.PruneKeys(ctx, "confirm", time.Now().Add(time.Hour))
	if _, err := st.VerifyingKey(ctx, "confirm", k1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Error("pruned key still verifies")
	}
	if _, err := st.VerifyingKey(ctx, "confirm", k2.ID); err != nil {
		t.Error("active key was pruned")
	}
}

func TestLedgerConsumesOnceAcrossConnections(t *testing.T) {
	st, path := open(t, nil)
	// A second handle on the same file stands in for another replica.
	other, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	exp := time.Now().Add(5 * time.Minute)
	var ok, replayed atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := st
			if i%2 == 1 {
				s = other
			}
			switch err := s.Consume(ctx, "nonce-1", exp); {
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
	if ok.Load() != 1 || replayed.Load() != 39 {
		t.Fatalf("ok=%d replayed=%d", ok.Load(), replayed.Load())
	}
	// A caller whose clock is far behind cannot make its fresh entry vanish.
	past := time.Now().Add(-30 * 24 * time.Hour)
	if err := st.Consume(ctx, "nonce-2", past); err != nil {
		t.Fatal(err)
	}
	if err := st.Consume(ctx, "nonce-3", past); err != nil {
		t.Fatal(err)
	}
	if err := st.Consume(ctx, "nonce-2", past); !errors.Is(err, store.ErrReplayed) {
		t.Errorf("replay after cleanup: %v", err)
	}
	if used, _ := st.ConsumedNonce(ctx, "nonce-1"); !used {
		t.Error("ConsumedNonce does not see nonce-1")
	}
}
