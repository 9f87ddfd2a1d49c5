package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// Open opens a handle on the database called name, creating the database
// empty on its first use. Handles opened with the same name share one
// database, as replicas do; the names Run (or Benchmark) passes are unique
// within one Run. Open reports its own failures with t.Fatal. Run closes
// every handle.
type Open func(t testing.TB, name string, opts store.Options) store.Store

// Run checks every method of the store interfaces against its documented
// contract, each test on a database of its own. impl is the
// implementation's name, with which its errors start ("sqlite", "pg").
func Run(t *testing.T, impl string, open Open) {
	e := &env{impl: impl, open: open}
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"RecordsRoundTrip", testRecordsRoundTrip},
		{"RecordsListing", testRecordsListing},
		{"RecordsPrefixCase", testRecordsPrefixCase},
		{"Blobs", testBlobs},
		{"Identity", testIdentity},
		{"Tokens", testTokens},
		{"AccessList", testAccessList},
		{"OAuth", testOAuth},
		{"Passkeys", testPasskeys},
		{"Secrets", testSecrets},
		{"SecretsAcrossHandles", testSecretsAcrossHandles},
		{"Keys", testKeys},
		{"KeysAcrossHandles", testKeysAcrossHandles},
		{"Ledger", testLedger},
		{"LedgerAcrossHandles", testLedgerAcrossHandles},
		{"CreateRecord", testCreateRecord},
		{"CreateRecordAcrossHandles", testCreateRecordAcrossHandles},
		{"Counters", testCounters},
		{"CountersAcrossHandles", testCountersAcrossHandles},
		// From the store package's former suite: one behaviour each, on a
		// store whose clock the test moves.
		{"RecordsQueries", testRecordsQueries},
		{"KeysetPaging", testKeysetPaging},
		{"BlobsBinary", testBlobsBinary},
		{"IdentityTokens", testIdentityTokens},
		{"SecretsWorkspaces", testSecretsWorkspaces},
		{"KeysRotation", testKeysRotation},
		{"LedgerConcurrent", testLedgerConcurrent},
		// Listings with filters, orders and cursors; transactions; the
		// typed repository.
		{"QueryFilters", testQueryFilters},
		{"QueryOrder", testQueryOrder},
		{"QueryCounts", testQueryCounts},
		{"QueryCursors", testQueryCursors},
		{"QueryCursorValidation", testQueryCursorValidation},
		{"QueryInvalid", testQueryInvalid},
		{"QueryScale", testQueryScale},
		{"Transactions", testTransactions},
		{"TransactionsConcurrent", testTransactionsConcurrent},
		{"Repo", testRepo},
		{"ErrorsNameTheDatabase", testErrorsNameTheDatabase},
		// An operator's tools: the directory, the secret key.
		{"Directory", testDirectory},
		{"SecretKeys", testSecretKeys},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}
}

// env hands the tests databases and handles.
type env struct {
	impl string
	open Open
	seq  atomic.Int64
}

// db returns a database name no other test of this Run uses.
func (e *env) db(t *testing.T) string {
	return fmt.Sprintf("%s_%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_")), e.seq.Add(1))
}

// handle opens a handle on the named database, closed when the test ends.
func (e *env) handle(t *testing.T, name string, opts store.Options) store.Store {
	t.Helper()
	s := e.open(t, name, opts)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// fresh opens a handle on a new database.
func (e *env) fresh(t *testing.T, opts store.Options) store.Store {
	t.Helper()
	return e.handle(t, e.db(t), opts)
}

// clocked opens a handle on a new database whose clock starts at
// 2026-11-01 12:00 UTC, and returns the clock for the test to move.
func (e *env) clocked(t *testing.T) (store.Store, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	return e.fresh(t, store.Options{Now: c.Now}), c
}

// clock is a settable clock for store.Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

var base = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testRecordsRoundTrip(t *testing.T, e *env) {
	clk := &clock{t: base}
	s := e.fresh(t, store.Options{Now: clk.Now})
	ctx := context.Background()
	if _, err := s.GetRecord(ctx, "w1", "inbox", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get missing: %v, want ErrNotFound", err)
	}
	// Data is kept byte for byte (spacing, key order, escapes).
	data := json.RawMessage("{\"z\": 1,  \"a\":[ ],\"s\":\"caf\u00e9 \\u00e9 <&>\"}")
	created := base.Add(-time.Hour).Add(1234567 * time.Nanosecond)
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "inbox", ID: "ibx_1", Parent: "p", Status: "active", Created: created, Data: data}))
	r, err := s.GetRecord(ctx, "w1", "inbox", "ibx_1")
	must(t, err)
	if r.Workspace != "w1" || r.Kind != "inbox" || r.ID != "ibx_1" || r.Parent != "p" || r.Status != "active" || !bytes.Equal(r.Data, data) {
		t.Errorf("round trip = %+v (data %s)", r, r.Data)
	}
	if !r.Created.Equal(created.Truncate(time.Millisecond)) {
		t.Errorf("created = %v, want %v (millisecond precision)", r.Created, created.Truncate(time.Millisecond))
	}
	// Scoped by workspace and kind.
	if _, err := s.GetRecord(ctx, "w2", "inbox", "ibx_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("other workspace: %v", err)
	}
	if _, err := s.GetRecord(ctx, "w1", "email", "ibx_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("other kind: %v", err)
	}
	// Zero Created takes the store's clock.
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "inbox", ID: "ibx_2", Data: json.RawMessage(`{}`)}))
	if r, _ := s.GetRecord(ctx, "w1", "inbox", "ibx_2"); !r.Created.Equal(base) {
		t.Errorf("zero Created = %v, want the clock's %v", r.Created, base)
	}
	// Replacing keeps the creation time and replaces the rest.
	clk.Add(time.Hour)
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "inbox", ID: "ibx_1", Status: "paused", Data: json.RawMessage(`{"v":2}`)}))
	r, _ = s.GetRecord(ctx, "w1", "inbox", "ibx_1")
	if !r.Created.Equal(created.Truncate(time.Millisecond)) || r.Status != "paused" || r.Parent != "" || string(r.Data) != `{"v":2}` {
		t.Errorf("replaced = %+v", r)
	}
	for _, bad := range []store.Record{{Kind: "k", ID: "i"}, {Workspace: "w", ID: "i"}, {Workspace: "w", Kind: "k"}} {
		if err := s.PutRecord(ctx, bad); err == nil {
			t.Errorf("put %+v: no error", bad)
		}
	}
	// Delete: scoped, once.
	if err := s.DeleteRecord(ctx, "w2", "inbox", "ibx_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete from another workspace: %v", err)
	}
	must(t, s.DeleteRecord(ctx, "w1", "inbox", "ibx_1"))
	if _, err := s.GetRecord(ctx, "w1", "inbox", "ibx_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get deleted: %v", err)
	}
	if err := s.DeleteRecord(ctx, "w1", "inbox", "ibx_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	if _, err := s.GetRecord(ctx, "w1", "inbox", "ibx_2"); err != nil {
		t.Errorf("a delete took another record: %v", err)
	}
}

func testRecordsListing(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	put := func(ws, kind, id, parent, status string, at time.Time) {
		t.Helper()
		must(t, s.PutRecord(ctx, store.Record{Workspace: ws, Kind: kind, ID: id, Parent: parent, Status: status, Created: at, Data: json.RawMessage(`{"id":"` + id + `"}`)}))
	}
	h := func(n int) time.Time { return base.Add(time.Duration(n) * time.Hour) }
	put("w1", "k", "a_1", "p1", "open", h(0))
	put("w1", "k", "a%2", "p1", "closed", h(1))
	put("w1", "k", "ab3", "p2", "open", h(2))
	put("w1", "k", "a_4", "p2", "open", h(3))
	put("w1", "k", `a\5`, "p2", "open", h(4))
	put("w1", "k", "a!6", "p2", "open", h(4)) // same time as a\5: ties by id, descending
	put("w1", "k", "B7", "p2", "open", h(4))
	put("w1", "other", "a_8", "p1", "open", h(5))
	put("w2", "k", "a_9", "p1", "open", h(5))
	ids := func(q store.Query) string {
		t.Helper()
		recs, err := s.ListRecords(ctx, "w1", "k", q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			if r.Workspace != "w1" || r.Kind != "k" || string(r.Data) != `{"id":"`+r.ID+`"}` {
				t.Errorf("listed %+v", r)
			}
			out = append(out, r.ID)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		q    store.Query
		want string
	}{
		{store.Query{}, `a\5 a!6 B7 a_4 ab3 a%2 a_1`},
		{store.Query{Prefix: "a_"}, `a_4 a_1`},
		{store.Query{Prefix: "a%"}, `a%2`},
		{store.Query{Prefix: `a\`}, `a\5`},
		{store.Query{Prefix: "a!"}, `a!6`},
		{store.Query{Parent: "p1"}, `a%2 a_1`},
		{store.Query{Status: "open", Parent: "p2"}, `a\5 a!6 B7 a_4 ab3`},
		{store.Query{Since: h(3)}, `a\5 a!6 B7 a_4`},
		{store.Query{Before: h(2)}, `a%2 a_1`},
		{store.Query{Since: h(1), Before: h(3)}, `ab3 a%2`},
		{store.Query{Limit: 2}, `a\5 a!6`},
		{store.Query{Before: h(4), Limit: 1}, `a_4`},
		// Keyset pagination: after (h(4), "a\5") in listing order.
		{store.Query{Before: h(4), BeforeID: `a\5`}, `a!6 B7 a_4 ab3 a%2 a_1`},
		{store.Query{Before: h(4), BeforeID: "B7", Limit: 2}, `a_4 ab3`},
		{store.Query{Before: h(4), BeforeID: "a!6", Parent: "p2"}, `B7 a_4 ab3`},
	} {
		if got := ids(c.q); got != c.want {
			t.Errorf("list %+v = %q, want %q", c.q, got, c.want)
		}
	}
	if recs, err := s.ListRecords(ctx, "w3", "k", store.Query{}); err != nil || len(recs) != 0 {
		t.Errorf("empty workspace: %v %v", recs, err)
	}
	// Limit: 50 by default, at most 1000.
	for i := range 1005 {
		put("w4", "n", fmt.Sprintf("r%04d", i), "", "", h(0).Add(time.Duration(i)*time.Millisecond))
	}
	if recs, _ := s.ListRecords(ctx, "w4", "n", store.Query{}); len(recs) != 50 || recs[0].ID != "r1004" {
		t.Errorf("default limit: %d records", len(recs))
	}
	if recs, _ := s.ListRecords(ctx, "w4", "n", store.Query{Limit: 5000}); len(recs) != 1000 {
		t.Errorf("limit 5000 gave %d records, want 1000", len(recs))
	}
}

// testRecordsPrefixCase: a prefix matches bytes, so case matters.
func testRecordsPrefixCase(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	for _, id := range []string{"Eml_1", "eml_2", "EML_3", "é", "émile", "Émile", "f"} {
		must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "k", ID: id, Data: json.RawMessage(`{}`)}))
	}
	for prefix, want := range map[string]int{"eml": 1, "Eml": 1, "EML": 1, "e": 1, "E": 2, "é": 2, "ém": 1, "É": 1, "émile": 1, "émilex": 0, "f": 1} {
		if recs, err := s.ListRecords(ctx, "w1", "k", store.Query{Prefix: prefix}); err != nil || len(recs) != want {
			t.Errorf("prefix %q: %d records (%v), want %d", prefix, len(recs), err, want)
		}
	}
}

func testBlobs(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	content := []byte("From: a@b\r\n\r\n\x00\xff\xfe binary")
	must(t, s.PutBlob(ctx, "w1", "eml_1", content))
	got, err := s.GetBlob(ctx, "w1", "eml_1")
	if err != nil || !bytes.Equal(got, content) {
		t.Errorf("get = %q %v", got, err)
	}
	if _, err := s.GetBlob(ctx, "w2", "eml_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("other workspace: %v", err)
	}
	must(t, s.PutBlob(ctx, "w1", "eml_1", []byte("replaced")))
	if got, _ := s.GetBlob(ctx, "w1", "eml_1"); string(got) != "replaced" {
		t.Errorf("replaced = %q", got)
	}
	must(t, s.PutBlob(ctx, "w1", "empty", []byte{}))
	if got, err := s.GetBlob(ctx, "w1", "empty"); err != nil || len(got) != 0 {
		t.Errorf("empty blob = %q %v", got, err)
	}
	if err := s.DeleteBlob(ctx, "w2", "eml_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete from another workspace: %v", err)
	}
	must(t, s.DeleteBlob(ctx, "w1", "eml_1"))
	if _, err := s.GetBlob(ctx, "w1", "eml_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get deleted: %v", err)
	}
	if err := s.DeleteBlob(ctx, "w1", "eml_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

// SeedIdentity creates organizations o1 and o2, workspace w1 (in o1, slug
// "finance"), people p1 (o1, Ana, operator of w1) and p2 (o2), failing t
// when it cannot: the identities the suite's tests, and an
// implementation's own, start from.
func SeedIdentity(t testing.TB, s store.Store) {
	t.Helper()
	ctx := context.Background()
	must(t, s.PutOrganization(ctx, store.Organization{ID: "o1", Name: "Org One"}))
	must(t, s.PutOrganization(ctx, store.Organization{ID: "o2", Name: "Org Two"}))
	must(t, s.PutWorkspace(ctx, store.Workspace{ID: "w1", Organization: "o1", Name: "Finance", Slug: "finance"}))
	must(t, s.PutPerson(ctx, store.Person{ID: "p1", Organization: "o1", Name: "Ana", Email: "ana@example.com"}))
	must(t, s.PutPerson(ctx, store.Person{ID: "p2", Organization: "o2", Name: "Zed", Email: "zed@example.com"}))
	must(t, s.SetMembership(ctx, "w1", "p1", "operator"))
}

func testIdentity(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	SeedIdentity(t, s)
	if w, err := s.GetWorkspace(ctx, "w1"); err != nil || w != (store.Workspace{ID: "w1", Organization: "o1", Name: "Finance", Slug: "finance"}) {
		t.Errorf("workspace = %+v %v", w, err)
	}
	if p, err := s.GetPerson(ctx, "p1"); err != nil || p != (store.Person{ID: "p1", Organization: "o1", Name: "Ana", Email: "ana@example.com"}) {
		t.Errorf("person = %+v %v", p, err)
	}
	if _, err := s.GetWorkspace(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing workspace: %v", err)
	}
	if _, err := s.GetPerson(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing person: %v", err)
	}
	// Puts replace.
	must(t, s.PutWorkspace(ctx, store.Workspace{ID: "w1", Organization: "o1", Name: "Finance BR", Slug: "fin"}))
	must(t, s.PutPerson(ctx, store.Person{ID: "p1", Organization: "o1", Name: "Ana S.", Email: "ana@example.org"}))
	if w, _ := s.GetWorkspace(ctx, "w1"); w.Name != "Finance BR" || w.Slug != "fin" {
		t.Errorf("replaced workspace = %+v", w)
	}
	if p, _ := s.GetPerson(ctx, "p1"); p.Name != "Ana S." || p.Email != "ana@example.org" {
		t.Errorf("replaced person = %+v", p)
	}
	// References must exist.
	if err := s.PutPerson(ctx, store.Person{ID: "p9", Organization: "o9", Name: "X"}); err == nil {
		t.Error("person in an unknown organization")
	}
	if err := s.PutWorkspace(ctx, store.Workspace{ID: "w9", Organization: "o9", Name: "X"}); err == nil {
		t.Error("workspace in an unknown organization")
	}
	if err := s.SetMembership(ctx, "w1", "p2", "owner"); err == nil {
		t.Error("membership across organizations")
	}
	if err := s.SetMembership(ctx, "w9", "p1", "owner"); err == nil {
		t.Error("membership in an unknown workspace")
	}
	if err := s.SetMembership(ctx, "w1", "p9", "owner"); err == nil {
		t.Error("membership of an unknown person")
	}
}

func testTokens(t *testing.T, e *env) {
	clk := &clock{t: base}
	s := e.fresh(t, store.Options{Now: clk.Now})
	ctx := context.Background()
	SeedIdentity(t, s)
	for name, nt := range map[string]store.NewToken{
		"non-member":    {Person: "p2", Workspace: "w1", Scopes: []string{"read"}},
		"unknown scope": {Person: "p1", Workspace: "w1", Scopes: []string{"admin"}},
		"no scopes":     {Person: "p1", Workspace: "w1"},
	} {
		if _, err := s.CreateToken(ctx, nt); err == nil {
			t.Errorf("token for %s", name)
		}
	}
	tok, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read", "write"}, Expires: base.Add(time.Hour), Label: "laptop"})
	must(t, err)
	other, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	must(t, err)
	if !strings.HasPrefix(tok, store.TokenPrefix) || len(tok) < len(store.TokenPrefix)+32 || tok == other {
		t.Errorf("tokens %q and %q", tok, other)
	}
	p, err := s.Authenticate(ctx, tok)
	must(t, err)
	want := store.Principal{TokenID: p.TokenID, Person: "p1", PersonName: "Ana", Organization: "o1", Workspace: "w1", Role: "operator",
		Scopes: []string{"read", "write"}, Expires: base.Add(time.Hour)}
	if p.TokenID == "" || p.Person != want.Person || p.PersonName != want.PersonName || p.Organization != want.Organization ||
		p.Workspace != want.Workspace || p.Role != want.Role || !slices.Equal(p.Scopes, want.Scopes) || !p.Expires.Equal(want.Expires) {
		t.Errorf("principal = %+v, want %+v", p, want)
	}
	if q, _ := s.Authenticate(ctx, other); q.TokenID == p.TokenID || !q.Expires.IsZero() || !slices.Equal(q.Scopes, []string{"read"}) {
		t.Errorf("second token's principal = %+v", q)
	}
	// Write implies read.
	wo, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"write"}})
	must(t, err)
	if q, _ := s.Authenticate(ctx, wo); !slices.Equal(q.Scopes, []string{"read", "write"}) {
		t.Errorf("write-only token's scopes = %v, want [read write]", q.Scopes)
	}
	// The role is the person's current one.
	must(t, s.SetMembership(ctx, "w1", "p1", "viewer"))
	if p, _ := s.Authenticate(ctx, tok); p.Role != "viewer" {
		t.Errorf("role after change = %q", p.Role)
	}
	for _, bad := range []string{"", tok + "x", tok[:len(tok)-1], store.TokenPrefix} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("authenticate %q: %v, want ErrNotFound", bad, err)
		}
	}
	// Expiry follows the store's clock.
	clk.Add(time.Hour - time.Millisecond)
	if _, err := s.Authenticate(ctx, tok); err != nil {
		t.Errorf("token just before expiry: %v", err)
	}
	clk.Add(time.Millisecond)
	if _, err := s.Authenticate(ctx, tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired token: %v", err)
	}
	// Revocation.
	q, _ := s.Authenticate(ctx, other)
	must(t, s.RevokeToken(ctx, q.TokenID))
	if _, err := s.Authenticate(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked token: %v", err)
	}
	if err := s.RevokeToken(ctx, q.TokenID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke twice: %v", err)
	}
	if err := s.RevokeToken(ctx, "tok_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
}

func testSecrets(t *testing.T, e *env) {
	clk := &clock{t: base}
	s := e.fresh(t, store.Options{Now: clk.Now, SecretKey: bytes.Repeat([]byte{7}, 32)})
	ctx := context.Background()
	if list, err := s.ListSecrets(ctx, "w1"); err != nil || len(list) != 0 {
		t.Errorf("empty list = %v %v", list, err)
	}
	if got, err := s.RevealSecrets(ctx, "w1"); err != nil || len(got) != 0 {
		t.Errorf("empty reveal = %v %v", got, err)
	}
	must(t, s.SetSecret(ctx, "w1", "ERP_TOKEN", "sk_live_1"))
	clk.Add(time.Minute)
	must(t, s.SetSecret(ctx, "w1", "API_KEY", "k\x00é"))
	must(t, s.SetSecret(ctx, "w2", "ERP_TOKEN", "other workspace"))
	list, err := s.ListSecrets(ctx, "w1")
	must(t, err)
	if len(list) != 2 || list[0].Name != "API_KEY" || list[1].Name != "ERP_TOKEN" ||
		!list[0].Updated.Equal(base.Add(time.Minute)) || !list[1].Updated.Equal(base) {
		t.Errorf("list = %+v", list)
	}
	got, err := s.RevealSecrets(ctx, "w1")
	if err != nil || len(got) != 2 || got["ERP_TOKEN"] != "sk_live_1" || got["API_KEY"] != "k\x00é" {
		t.Errorf("reveal = %q %v", got, err)
	}
	clk.Add(time.Minute)
	must(t, s.SetSecret(ctx, "w1", "ERP_TOKEN", "sk_live_2"))
	if got, _ := s.RevealSecrets(ctx, "w1"); got["ERP_TOKEN"] != "sk_live_2" {
		t.Errorf("replaced = %q", got["ERP_TOKEN"])
	}
	if list, _ := s.ListSecrets(ctx, "w1"); len(list) != 2 || !list[1].Updated.Equal(base.Add(2*time.Minute)) {
		t.Errorf("list after replace = %+v", list)
	}
	must(t, s.DeleteSecret(ctx, "w1", "ERP_TOKEN"))
	if err := s.DeleteSecret(ctx, "w1", "ERP_TOKEN"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	if got, _ := s.RevealSecrets(ctx, "w1"); len(got) != 1 || got["API_KEY"] == "" {
		t.Errorf("after delete = %q", got)
	}
	if got, _ := s.RevealSecrets(ctx, "w2"); got["ERP_TOKEN"] != "other workspace" {
		t.Errorf("w2 = %q", got)
	}
}

func testSecretsAcrossHandles(t *testing.T, e *env) {
	ctx := context.Background()
	// Without a configured key, handles on one database share the key the
	// first one generated.
	name := e.db(t)
	a := e.handle(t, name, store.Options{})
	must(t, a.SetSecret(ctx, "w1", "K", "v1"))
	b := e.handle(t, name, store.Options{})
	if got, err := b.RevealSecrets(ctx, "w1"); err != nil || got["K"] != "v1" {
		t.Errorf("second handle reveals %q %v", got, err)
	}
	// With a configured key: the same key opens, another refuses.
	name = e.db(t)
	key := bytes.Repeat([]byte{1}, 32)
	c := e.handle(t, name, store.Options{SecretKey: key})
	must(t, c.SetSecret(ctx, "w1", "K", "v2"))
	d := e.handle(t, name, store.Options{SecretKey: key})
	if got, err := d.RevealSecrets(ctx, "w1"); err != nil || got["K"] != "v2" {
		t.Errorf("same key reveals %q %v", got, err)
	}
	f := e.handle(t, name, store.Options{SecretKey: bytes.Repeat([]byte{2}, 32)})
	if got, err := f.RevealSecrets(ctx, "w1"); err == nil || strings.Contains(err.Error(), "v2") {
		t.Errorf("another key reveals %q %v, want an error without the value", got, err)
	}
}

func testKeys(t *testing.T, e *env) {
	clk := &clock{t: base}
	s := e.fresh(t, store.Options{Now: clk.Now, SecretKey: bytes.Repeat([]byte{7}, 32)})
	ctx := context.Background()
	k1, err := s.SigningKey(ctx, "confirm")
	must(t, err)
	if k1.ID == "" || strings.Contains(k1.ID, ".") || len(k1.Secret) < 32 || k1.Purpose != "confirm" || !k1.Retired.IsZero() {
		t.Errorf("first key = %+v", k1)
	}
	if again, _ := s.SigningKey(ctx, "confirm"); again.ID != k1.ID || !bytes.Equal(again.Secret, k1.Secret) {
		t.Errorf("signing key changed without rotation: %s → %s", k1.ID, again.ID)
	}
	d1, err := s.SigningKey(ctx, "download")
	must(t, err)
	if d1.ID == k1.ID || bytes.Equal(d1.Secret, k1.Secret) {
		t.Error("two purposes share a key")
	}
	if _, err := s.VerifyingKey(ctx, "download", k1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("key verifies for another purpose: %v", err)
	}
	if _, err := s.VerifyingKey(ctx, "confirm", "key_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown key: %v", err)
	}
	clk.Add(time.Minute)
	k2, err := s.RotateKey(ctx, "confirm")
	must(t, err)
	if k2.ID == k1.ID || bytes.Equal(k2.Secret, k1.Secret) {
		t.Fatal("rotation returned the same key")
	}
	if cur, _ := s.SigningKey(ctx, "confirm"); cur.ID != k2.ID {
		t.Errorf("signing key after rotation = %s, want %s", cur.ID, k2.ID)
	}
	old, err := s.VerifyingKey(ctx, "confirm", k1.ID)
	if err != nil || !bytes.Equal(old.Secret, k1.Secret) || !old.Retired.Equal(base.Add(time.Minute)) || !old.Created.Equal(base) {
		t.Errorf("retired key = %+v %v", old, err)
	}
	if cur, _ := s.VerifyingKey(ctx, "confirm", k2.ID); !cur.Retired.IsZero() || !bytes.Equal(cur.Secret, k2.Secret) {
		t.Errorf("active key = %+v", cur)
	}
	clk.Add(time.Minute)
	k3, err := s.RotateKey(ctx, "confirm")
	must(t, err)
	// Prune: keys retired strictly before the time go; the active key and
	// later retirements stay; other purposes are untouched.
	must(t, s.PruneKeys(ctx, "confirm", base.Add(90*time.Second)))
	if _, err := s.VerifyingKey(ctx, "confirm", k1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pruned key: %v", err)
	}
	if _, err := s.VerifyingKey(ctx, "confirm", k2.ID); err != nil {
		t.Errorf("key retired after the cut was pruned: %v", err)
	}
	must(t, s.PruneKeys(ctx, "confirm", base.Add(time.Hour)))
	if _, err := s.VerifyingKey(ctx, "confirm", k2.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pruned key: %v", err)
	}
	if _, err := s.VerifyingKey(ctx, "confirm", k3.ID); err != nil {
		t.Errorf("active key was pruned: %v", err)
	}
	must(t, s.PruneKeys(ctx, "download", base.Add(time.Hour)))
	if _, err := s.VerifyingKey(ctx, "download", d1.ID); err != nil {
		t.Errorf("active download key was pruned: %v", err)
	}
}

// testKeysAcrossHandles: handles asking at once for the first key of a
// purpose all get one and the same key; rotations are seen by every handle.
func testKeysAcrossHandles(t *testing.T, e *env) {
	ctx := context.Background()
	name := e.db(t)
	key := store.Options{SecretKey: bytes.Repeat([]byte{3}, 32)}
	handles := []store.Store{e.handle(t, name, key), e.handle(t, name, key), e.handle(t, name, key)}
	// Everyone asks for the first key at once.
	var mu sync.Mutex
	var got []store.Key
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := handles[i%3].SigningKey(ctx, "confirm")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, k)
			mu.Unlock()
		}()
	}
	wg.Wait()
	// One key was created: every caller got it.
	for _, k := range got {
		if k.ID != got[0].ID || !bytes.Equal(k.Secret, got[0].Secret) {
			t.Fatalf("concurrent first SigningKey created several keys: %s and %s", got[0].ID, k.ID)
		}
	}
	// Every key handed out verifies on every handle, and afterwards all
	// handles sign with one key.
	for _, k := range got {
		for i, h := range handles {
			if v, err := h.VerifyingKey(ctx, "confirm", k.ID); err != nil || !bytes.Equal(v.Secret, k.Secret) {
				t.Errorf("handle %d: key %s handed out but does not verify: %v", i, k.ID, err)
			}
		}
	}
	var ids []string
	for _, h := range handles {
		k, err := h.SigningKey(ctx, "confirm")
		must(t, err)
		ids = append(ids, k.ID)
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Errorf("handles sign with different keys: %v", ids)
	}
	// A rotation on one handle is seen by the others; the old key verifies.
	k2, err := handles[2].RotateKey(ctx, "confirm")
	must(t, err)
	for i, h := range handles {
		if k, _ := h.SigningKey(ctx, "confirm"); k.ID != k2.ID {
			t.Errorf("handle %d signs with %s after rotation to %s", i, k.ID, k2.ID)
		}
		if v, err := h.VerifyingKey(ctx, "confirm", ids[0]); err != nil || v.Retired.IsZero() {
			t.Errorf("handle %d: retired key %+v %v", i, v, err)
		}
	}
}

func testLedger(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{SecretKey: bytes.Repeat([]byte{7}, 32)})
	ctx := context.Background()
	exp := time.Now().Add(5 * time.Minute)
	if used, err := s.ConsumedNonce(ctx, "n1"); err != nil || used {
		t.Errorf("fresh nonce used=%v %v", used, err)
	}
	must(t, s.Consume(ctx, "n1", exp))
	if err := s.Consume(ctx, "n1", exp); !errors.Is(err, store.ErrReplayed) {
		t.Errorf("second consume: %v, want ErrReplayed", err)
	}
	if err := s.Consume(ctx, "n1", exp.Add(time.Hour)); !errors.Is(err, store.ErrReplayed) {
		t.Errorf("consume with another expiry: %v, want ErrReplayed", err)
	}
	if used, err := s.ConsumedNonce(ctx, "n1"); err != nil || !used {
		t.Errorf("consumed nonce used=%v %v", used, err)
	}
	must(t, s.Consume(ctx, "n2", exp))
	// A caller whose clock is far behind cannot make its entry vanish, nor
	// anyone else's.
	past := time.Now().Add(-30 * 24 * time.Hour)
	must(t, s.Consume(ctx, "n3", past))
	must(t, s.Consume(ctx, "n4", past))
	for _, n := range []string{"n1", "n2", "n3"} {
		if err := s.Consume(ctx, n, past); !errors.Is(err, store.ErrReplayed) {
			t.Errorf("replay of %s after an old-clock consume: %v", n, err)
		}
	}
}

func testLedgerAcrossHandles(t *testing.T, e *env) {
	ctx := context.Background()
	name := e.db(t)
	key := store.Options{SecretKey: bytes.Repeat([]byte{4}, 32)}
	a, b := e.handle(t, name, key), e.handle(t, name, key)
	exp := time.Now().Add(5 * time.Minute)
	for round := range 3 {
		nonce := fmt.Sprintf("nonce-%d", round)
		if ok, replayed := consumeConcurrently(t, []store.Ledger{a, b}, nonce, exp, 40); ok != 1 || replayed != 39 {
			t.Errorf("%s: ok=%d replayed=%d, want 1 and 39", nonce, ok, replayed)
		}
		if used, _ := b.ConsumedNonce(ctx, nonce); !used {
			t.Errorf("%s not seen by the other handle", nonce)
		}
	}
}

func testCounters(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{SecretKey: bytes.Repeat([]byte{5}, 32)})
	ctx := context.Background()
	next := func(ws, name string, start int64) int64 {
		t.Helper()
		n, err := s.NextNumber(ctx, ws, name, start)
		must(t, err)
		return n
	}
	for i, want := range []int64{1001, 1002, 1003} {
		if n := next("w1", "invoice", 1001); n != want {
			t.Errorf("call %d: %d, want %d (start, then one more each time)", i+1, n, want)
		}
	}
	// Counters are per workspace and per name.
	if n := next("w2", "invoice", 1001); n != 1001 {
		t.Errorf("another workspace's first number = %d, want 1001", n)
	}
	if n := next("w1", "nfe_series_1", 1); n != 1 {
		t.Errorf("another counter's first number = %d, want 1", n)
	}
	// A start above the last number moves the counter; one below does not.
	if n := next("w1", "invoice", 5000); n != 5000 {
		t.Errorf("raised start = %d, want 5000", n)
	}
	if n := next("w1", "invoice", 1); n != 5001 {
		t.Errorf("lower start = %d, want 5001", n)
	}
	// Concurrent callers get distinct numbers, each caller's increasing, and
	// together every number from 5002 on exactly once.
	const callers, each = 20, 10
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last int64
			for range each {
				n, err := s.NextNumber(ctx, "w1", "invoice", 1001)
				if err != nil {
					t.Error(err)
					return
				}
				if n <= last {
					t.Errorf("a caller got %d after %d", n, last)
				}
				last = n
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	checkRun(t, got, 5002, callers*each)
}

// checkRun fails unless got holds each of the n numbers from first on once.
func checkRun(t *testing.T, got []int64, first int64, n int) {
	t.Helper()
	slices.Sort(got)
	if len(got) != n {
		t.Fatalf("%d numbers handed out, want %d", len(got), n)
	}
	for i, v := range got {
		if v != first+int64(i) {
			t.Fatalf("numbers %v: want %d…%d, each once", got, first, first+int64(n)-1)
		}
	}
}

func testCountersAcrossHandles(t *testing.T, e *env) {
	ctx := context.Background()
	name := e.db(t)
	key := store.Options{SecretKey: bytes.Repeat([]byte{6}, 32)}
	handles := []store.Store{e.handle(t, name, key), e.handle(t, name, key), e.handle(t, name, key)}
	if n, err := handles[0].NextNumber(ctx, "w1", "invoice", 1); err != nil || n != 1 {
		t.Fatalf("first number = %d %v, want 1", n, err)
	}
	// Another handle continues the same sequence.
	if n, err := handles[1].NextNumber(ctx, "w1", "invoice", 1); err != nil || n != 2 {
		t.Fatalf("second handle's number = %d %v, want 2", n, err)
	}
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := handles[i%len(handles)].NextNumber(ctx, "w1", "invoice", 1)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	checkRun(t, got, 3, 60)
	if n, err := handles[2].NextNumber(ctx, "w1", "invoice", 1); err != nil || n != 63 {
		t.Errorf("number after the burst = %d %v, want 63", n, err)
	}
}

func testRecordsQueries(t *testing.T, e *env) {
	st, c := e.clocked(t)
	ctx := context.Background()
	base := c.Now()
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

func testBlobsBinary(t *testing.T, e *env) {
	st, _ := e.clocked(t)
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

func testIdentityTokens(t *testing.T, e *env) {
	st, c := e.clocked(t)
	ctx := context.Background()
	SeedIdentity(t, st)
	if w, err := st.GetWorkspace(ctx, "w1"); err != nil || w.Organization != "o1" || w.Slug != "finance" {
		t.Errorf("GetWorkspace = %+v %v", w, err)
	}
	if p, err := st.GetPerson(ctx, "p1"); err != nil || p.Email != "ana@example.com" {
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
	tok, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"write"}, Expires: c.Now().Add(time.Hour)})
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
	c.Add(time.Hour)
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

func testSecretsWorkspaces(t *testing.T, e *env) {
	st, _ := e.clocked(t)
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

func testKeysRotation(t *testing.T, e *env) {
	st, c := e.clocked(t)
	ctx := context.Background()
	k1, err := st.SigningKey(ctx, "confirm")
	must(t, err)
	if len(k1.Secret) < 32 || k1.ID == "" {
		t.Fatalf("key %+v", k1)
	}
	if again, _ := st.SigningKey(ctx, "confirm"); again.ID != k1.ID {
		t.Error("the signing key changed without rotation")
	}
	c.Add(time.Minute)
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
	c.Add(time.Minute)
	must(t, st.PruneKeys(ctx, "confirm", c.Now()))
	if _, err := st.VerifyingKey(ctx, "confirm", k1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Error("a pruned key still verifies")
	}
	if _, err := st.VerifyingKey(ctx, "confirm", k2.ID); err != nil {
		t.Error("the active key was pruned")
	}
}

func testLedgerConcurrent(t *testing.T, e *env) {
	st, c := e.clocked(t)
	ctx := context.Background()
	exp := c.Now().Add(5 * time.Minute)
	if ok, replayed := consumeConcurrently(t, []store.Ledger{st}, "nonce-1", exp, 50); ok != 1 || replayed != 49 {
		t.Fatalf("50 concurrent Consume: ok=%d replayed=%d, want 1 and 49", ok, replayed)
	}
	if used, err := st.ConsumedNonce(ctx, "nonce-1"); err != nil || !used {
		t.Errorf("ConsumedNonce = %v %v", used, err)
	}
	if used, _ := st.ConsumedNonce(ctx, "nonce-2"); used {
		t.Error("an unused nonce is reported consumed")
	}
	// An entry whose expiry (by the caller's clock) is long past is still
	// single-use: cleanup must go by the store's own notion of age.
	past := c.Now().Add(-30 * 24 * time.Hour)
	must(t, st.Consume(ctx, "nonce-3", past))
	must(t, st.Consume(ctx, "nonce-4", past))
	if err := st.Consume(ctx, "nonce-3", past); !errors.Is(err, store.ErrReplayed) {
		t.Errorf("replay of an entry with a past expiry: %v", err)
	}
}

// testCreateRecord: CreateRecord inserts once and never replaces.
func testCreateRecord(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	first := store.Record{Workspace: "w1", Kind: "nfe", ID: "nfe_1", Parent: "inv_1", Status: "pending", Data: json.RawMessage(`{"n":1}`)}
	must(t, s.CreateRecord(ctx, first))
	second := first
	second.Data = json.RawMessage(`{"n":2}`)
	if err := s.CreateRecord(ctx, second); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second create: %v, want ErrConflict", err)
	}
	r, err := s.GetRecord(ctx, "w1", "nfe", "nfe_1")
	must(t, err)
	if string(r.Data) != `{"n":1}` || r.Parent != "inv_1" || r.Status != "pending" {
		t.Errorf("the first record was changed: %+v %s", r, r.Data)
	}
	// The same id in another workspace or kind is another record.
	other := first
	other.Workspace = "w2"
	must(t, s.CreateRecord(ctx, other))
	other.Workspace, other.Kind = "w1", "invoice"
	must(t, s.CreateRecord(ctx, other))
	// PutRecord still replaces what CreateRecord made.
	must(t, s.PutRecord(ctx, second))
	if r, _ := s.GetRecord(ctx, "w1", "nfe", "nfe_1"); string(r.Data) != `{"n":2}` {
		t.Errorf("PutRecord after CreateRecord: %s", r.Data)
	}
	if err := s.CreateRecord(ctx, store.Record{Workspace: "w1", Kind: "nfe"}); err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("a record without an id: %v", err)
	}
}

// testCreateRecordAcrossHandles: handles racing to create one record get
// exactly one winner.
func testCreateRecordAcrossHandles(t *testing.T, e *env) {
	ctx := context.Background()
	name := e.db(t)
	key := store.Options{SecretKey: bytes.Repeat([]byte{5}, 32)}
	handles := []store.Store{e.handle(t, name, key), e.handle(t, name, key)}
	for round := range 3 {
		id := fmt.Sprintf("nfe_%d", round)
		var won, lost atomic.Int64
		var wg sync.WaitGroup
		for i := range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := store.Record{Workspace: "w1", Kind: "nfe", ID: id, Data: json.RawMessage(fmt.Sprintf(`{"by":%d}`, i))}
				switch err := handles[i%2].CreateRecord(ctx, r); {
				case err == nil:
					won.Add(1)
				case errors.Is(err, store.ErrConflict):
					lost.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if won.Load() != 1 || lost.Load() != 29 {
			t.Errorf("%s: %d created, %d conflicts; want 1 and 29", id, won.Load(), lost.Load())
		}
	}
}

// consumeConcurrently records nonce n times at once, spread over the
// handles, and counts the calls that recorded it and those told it was a
// replay; any other answer fails the test.
func consumeConcurrently(t *testing.T, handles []store.Ledger, nonce string, exp time.Time, n int) (ok, replayed int64) {
	t.Helper()
	var okN, replayedN atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := handles[i%len(handles)].Consume(context.Background(), nonce, exp); {
			case err == nil:
				okN.Add(1)
			case errors.Is(err, store.ErrReplayed):
				replayedN.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	return okN.Load(), replayedN.Load()
}

// testKeysetPaging: records sharing a creation time are neither skipped nor
// repeated when paging with Before and BeforeID.
func testKeysetPaging(t *testing.T, e *env) {
	st, c := e.clocked(t)
	ctx := context.Background()
	at := c.Now()
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

// testErrorsNameTheDatabase: errors start with the implementation's name, so
// that a log tells the stores apart; sentinel errors stay recognisable.
func testErrorsNameTheDatabase(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	prefix := e.impl + ": "
	for name, err := range map[string]error{
		"invalid record": s.PutRecord(ctx, store.Record{Kind: "k"}),
		"bad token":      func() error { _, err := s.CreateToken(ctx, store.NewToken{Scopes: []string{"admin"}}); return err }(),
		"membership":     s.SetMembership(ctx, "nope", "p", "owner"),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("%s: %v, want an error starting with %q", name, err, prefix)
		}
	}
	must(t, s.CreateRecord(ctx, store.Record{Workspace: "w", Kind: "k", ID: "i", Data: []byte(`{}`)}))
	err := s.CreateRecord(ctx, store.Record{Workspace: "w", Kind: "k", ID: "i", Data: []byte(`{}`)})
	if !errors.Is(err, store.ErrConflict) || !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("conflict: %v", err)
	}
	for name, err := range map[string]error{
		"revoke an unknown token":  s.RevokeToken(ctx, "tok_none"),
		"delete an unknown secret": s.DeleteSecret(ctx, "w", "NONE"),
		"delete an unknown record": s.DeleteRecord(ctx, "w", "k", "none"),
		"delete an unknown blob":   s.DeleteBlob(ctx, "w", "none"),
	} {
		if !errors.Is(err, store.ErrNotFound) || !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("%s: %v, want store.ErrNotFound in an error starting with %q", name, err, prefix)
		}
	}
}
