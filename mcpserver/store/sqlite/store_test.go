package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/mcpserver/store/storetest"
)

// The conformance suite and the shared benchmarks run against this store in
// conformance_test.go; these are the SQLite store's own tests.

func open(t testing.TB, now func() time.Time) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := sqlite.Open(context.Background(), path, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// The file never holds a token or a secret value in clear.
func TestFileHoldsNoTokenOrSecret(t *testing.T) {
	st, path := open(t, nil)
	storetest.SeedIdentity(t, st)
	ctx := context.Background()
	tok, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	const value = "sk_live_very_secret_value_123"
	if err := st.SetSecret(ctx, "w1", "API_KEY", value); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.RevealSecrets(ctx, "w1"); got["API_KEY"] != value {
		t.Fatal("secret does not round-trip")
	}
	st.Close()
	for _, f := range []string{path, path + "-wal"} {
		raw, _ := os.ReadFile(f)
		if bytes.Contains(raw, []byte(tok)) || bytes.Contains(raw, []byte(value)) {
			t.Errorf("%s holds a token or a secret in clear", filepath.Base(f))
		}
	}
}

// A key given from outside must open what it sealed; another key cannot.
func TestSecretKeyOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	st, err := sqlite.Open(ctx, path, store.Options{SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	st.SetSecret(ctx, "w1", "A", "v")
	st.Close()
	other, err := sqlite.Open(ctx, path, store.Options{SecretKey: bytes.Repeat([]byte{8}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.RevealSecrets(ctx, "w1"); err == nil {
		t.Error("another key opened the secret")
	}
	if _, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "x.db"), store.Options{SecretKey: []byte("short")}); err == nil {
		t.Error("a short key was accepted")
	}
}

func TestOpenAddsCountersToAnOlderFile(t *testing.T) {
	st, path := open(t, nil)
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE counters`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err = sqlite.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.NextNumber(context.Background(), "w1", "invoice", 7); err != nil || n != 7 {
		t.Errorf("NextNumber on a migrated file = %d %v, want 7", n, err)
	}
}

// Prefixes match bytes, also at the edges of the byte range (SQLite keeps
// any bytes in TEXT; PostgreSQL, which refuses invalid UTF-8, cannot be
// asked this in the shared suite).
func TestPrefixMatchesBytes(t *testing.T) {
	st, _ := open(t, nil)
	ctx := context.Background()
	for _, id := range []string{"a", "a\xff", "a\xff\xffz", "b", "\xff", "\xff\xffq"} {
		if err := st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: id, Data: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string]int{"a": 3, "a\xff": 2, "a\xff\xff": 1, "\xff": 2, "\xff\xff": 1, "\xff\xff\xff": 0, "b": 1} {
		recs, err := st.ListRecords(ctx, "w1", "k", store.Query{Prefix: prefix})
		if err != nil || len(recs) != want {
			t.Errorf("prefix %q: %d records %v, want %d", prefix, len(recs), err, want)
		}
	}
}

// Handles opened at once on a new file without a configured secret key
// (each creates the "secrets" signing key if there is none) end up with one
// key: a secret set through one handle is revealed by every other.
func TestConcurrentOpenSharesSecretKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	ctx := context.Background()
	handles := make([]*sqlite.Store, 6)
	errs := make([]error, len(handles))
	var wg sync.WaitGroup
	for i := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			handles[i], errs[i] = sqlite.Open(ctx, path, store.Options{})
		}()
	}
	wg.Wait()
	for i, h := range handles {
		if errs[i] != nil {
			t.Fatalf("open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { h.Close() })
	}
	for i, h := range handles {
		if err := h.SetSecret(ctx, "w1", "K", "v"); err != nil {
			t.Fatal(err)
		}
		for j, o := range handles {
			if got, err := o.RevealSecrets(ctx, "w1"); err != nil || got["K"] != "v" {
				t.Errorf("secret set through handle %d, revealed by handle %d: %q %v", i, j, got, err)
			}
		}
	}
}
