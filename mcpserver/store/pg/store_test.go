package pg_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/storetest"
)

func open(t *testing.T, dsn string, opts pg.Options) *pg.Store {
	t.Helper()
	if opts.PurgeInterval == 0 {
		opts.PurgeInterval = -1
	}
	s, err := pg.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// seed creates the suite's identities (storetest.SeedIdentity) and a
// read-write token of p1 in w1.
func seed(t *testing.T, s store.Store) (token string) {
	t.Helper()
	storetest.SeedIdentity(t, s)
	tok, err := s.CreateToken(context.Background(), store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read", "write"}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func count(t *testing.T, schema, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pgtest.Admin(t).QueryRow(context.Background(), strings.ReplaceAll(query, "S.", schema+"."), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestOpenRejectsBadInput needs no database.
func TestOpenRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	dsn := "host=127.0.0.1 port=1 user=x dbname=x sslmode=disable"
	if _, err := pg.Open(ctx, dsn, pg.Options{Options: store.Options{SecretKey: []byte("short")}}); err == nil || !strings.Contains(err.Error(), "32 bytes") {
		t.Errorf("short secret key: %v", err)
	}
	_, err := pg.Open(ctx, "postgres://kobana:hunter2@[::1/x", pg.Options{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("malformed DSN: %v (must not quote the password)", err)
	}
	// A server that is not there fails Open with a clear error, in bounded time.
	start := time.Now()
	_, err = pg.Open(ctx, "host=127.0.0.1 port=1 user=x dbname=x connect_timeout=2 sslmode=disable", pg.Options{})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("unreachable server: %v after %v", err, time.Since(start))
	}
}

func TestTokensAndSecretsAreNotStoredInClear(t *testing.T) {
	dsn, schema := pgtest.SchemaDSN(t, "clear", "clear")
	s := open(t, dsn, pg.Options{})
	tok := seed(t, s)
	const value = "sk_live_very_secret_value_123"
	if err := s.SetSecret(context.Background(), "w1", "API_KEY", value); err != nil {
		t.Fatal(err)
	}
	if n := count(t, schema, `SELECT count(*) FROM S.tokens t WHERE t::text LIKE '%'||$1||'%'`, tok[len(store.TokenPrefix):]); n != 0 {
		t.Error("the token itself is in the tokens table")
	}
	if n := count(t, schema, `SELECT count(*) FROM S.tokens WHERE hash = $1`, store.HashToken(tok)); n != 1 {
		t.Error("the token's hash is not stored")
	}
	if n := count(t, schema, `SELECT count(*) FROM S.secrets s WHERE position(convert_to($1, 'UTF8') in s.sealed) > 0 OR s::text LIKE '%'||$1||'%'`, value); n != 0 {
		t.Error("the secret is stored in clear")
	}
	if n := count(t, schema, `SELECT count(*) FROM S.secrets`); n != 1 {
		t.Errorf("%d secrets rows", n)
	}
}

func TestConcurrentStartsMigrateOnceAndShareOneKey(t *testing.T) {
	dsn, schema := pgtest.SchemaDSN(t, "start", "start")
	ctx := context.Background()
	// Six replicas start at once on an empty database, none with a
	// configured secret key.
	const n = 6
	stores := make([]*pg.Store, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = pg.Open(ctx, dsn, pg.Options{PurgeInterval: -1})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	if got, max := count(t, schema, `SELECT count(*) FROM S.schema_migrations`), count(t, schema, `SELECT max(version) FROM S.schema_migrations`); got != max || got < 1 {
		t.Errorf("schema_migrations has %d rows up to version %d", got, max)
	}
	// They generated one secrets key between them: any reveals what any sealed.
	if k := count(t, schema, `SELECT count(*) FROM S.signing_keys WHERE purpose = 'secrets'`); k != 1 {
		t.Errorf("%d secrets keys", k)
	}
	if err := stores[0].SetSecret(ctx, "w1", "K", "v"); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if got, err := s.RevealSecrets(ctx, "w1"); err != nil || got["K"] != "v" {
			t.Errorf("replica %d reveals %v %v", i, got, err)
		}
	}
	// The first confirm key, asked for by everyone at once: exactly one row.
	ids := make(chan string, 10*n)
	for i := range 10 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := stores[i%n].SigningKey(ctx, "confirm")
			if err != nil {
				t.Error(err)
				return
			}
			ids <- k.ID
		}()
	}
	wg.Wait()
	close(ids)
	first := ""
	for id := range ids {
		if first == "" {
			first = id
		}
		if id != first {
			t.Errorf("replicas got keys %s and %s", first, id)
		}
	}
	if k := count(t, schema, `SELECT count(*) FROM S.signing_keys WHERE purpose = 'confirm'`); k != 1 {
		t.Errorf("%d confirm keys created", k)
	}
	// Concurrent rotations queue up: every one retires the previous key, one
	// active key remains, and every rotated key still verifies.
	rotated := make(chan store.Key, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := stores[i].RotateKey(ctx, "confirm")
			if err != nil {
				t.Error(err)
				return
			}
			rotated <- k
		}()
	}
	wg.Wait()
	close(rotated)
	if a := count(t, schema, `SELECT count(*) FROM S.signing_keys WHERE purpose = 'confirm' AND retired_at = 0`); a != 1 {
		t.Errorf("%d active confirm keys after concurrent rotations", a)
	}
	if k := count(t, schema, `SELECT count(*) FROM S.signing_keys WHERE purpose = 'confirm'`); k != n+1 {
		t.Errorf("%d confirm keys after %d rotations, want %d", k, n, n+1)
	}
	for k := range rotated {
		if v, err := stores[0].VerifyingKey(ctx, "confirm", k.ID); err != nil || !bytes.Equal(v.Secret, k.Secret) {
			t.Errorf("rotated key %s: %v", k.ID, err)
		}
	}
}

func TestLedgerPurge(t *testing.T) {
	dsn, schema := pgtest.SchemaDSN(t, "purge", "purge")
	s := open(t, dsn, pg.Options{LedgerRetention: time.Hour})
	ctx := context.Background()
	exp := time.Now().Add(5 * time.Minute)
	if err := s.Consume(ctx, "fresh", exp); err != nil {
		t.Fatal(err)
	}
	// 2500 entries consumed two hours ago (by the database's clock), and one
	// a minute short of the retention.
	admin := pgtest.Admin(t)
	if _, err := admin.Exec(ctx, `INSERT INTO `+schema+`.confirmation_ledger
		SELECT 'old' || g, floor(extract(epoch FROM now() - interval '2 hours') * 1000)::bigint, 0 FROM generate_series(1, 2500) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `INSERT INTO `+schema+`.confirmation_ledger
		VALUES ('recent', floor(extract(epoch FROM now() - interval '59 minutes') * 1000)::bigint, 0)`); err != nil {
		t.Fatal(err)
	}
	n, err := s.PurgeLedger(ctx)
	if err != nil || n != 2500 {
		t.Fatalf("purge deleted %d (%v), want 2500", n, err)
	}
	for nonce, want := range map[string]bool{"fresh": true, "recent": true, "old1": false, "old2500": false} {
		if used, _ := s.ConsumedNonce(ctx, nonce); used != want {
			t.Errorf("%s consumed=%v after purge, want %v", nonce, used, want)
		}
	}
	// Rows another transaction holds are skipped, not waited for; callers
	// are not blocked by the purge.
	if _, err := admin.Exec(ctx, `INSERT INTO `+schema+`.confirmation_ledger
		SELECT 'old' || g, floor(extract(epoch FROM now() - interval '2 hours') * 1000)::bigint, 0 FROM generate_series(1, 10) g`); err != nil {
		t.Fatal(err)
	}
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM `+schema+`.confirmation_ledger WHERE nonce IN ('old1', 'old2', 'old3') FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	quick, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	n, err = s.PurgeLedger(quick)
	if err != nil || n != 7 {
		t.Errorf("purge with 3 rows locked deleted %d (%v) in %v, want 7 at once", n, err, time.Since(start))
	}
	if err := s.Consume(quick, "during", exp); err != nil {
		t.Errorf("consume while a purge holds nothing and a reader holds old rows: %v", err)
	}
	tx.Rollback(ctx)
	if n, err := s.PurgeLedger(ctx); err != nil || n != 3 {
		t.Errorf("second purge deleted %d (%v), want 3", n, err)
	}
	// The background loop purges by itself.
	open(t, dsn, pg.Options{LedgerRetention: time.Hour, PurgeInterval: 20 * time.Millisecond})
	if _, err := admin.Exec(ctx, `INSERT INTO `+schema+`.confirmation_ledger
		VALUES ('loop', floor(extract(epoch FROM now() - interval '2 hours') * 1000)::bigint, 0)`); err != nil {
		t.Fatal(err)
	}
	if err := testwait.Until(5*time.Second, func() error {
		if n := count(t, schema, `SELECT count(*) FROM S.confirmation_ledger WHERE nonce = 'loop'`); n != 0 {
			return fmt.Errorf("the purge loop has not deleted an old entry")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if used, _ := s.ConsumedNonce(ctx, "fresh"); !used {
		t.Error("the loop purged a fresh entry")
	}
}

func TestConsumeIsBoundedWhenTheLedgerIsStuck(t *testing.T) {
	schema := pgtest.FreshSchema(t, "stuck")
	app := "stuck_" + schema
	dsn := pgtest.DSN(t, "", 0, map[string]string{"search_path": schema, "application_name": app})
	s := open(t, dsn, pg.Options{LedgerTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	admin := pgtest.Admin(t)
	// Warm up, so that the statement is prepared on the connection and the
	// stuck attempt below is an execution, not a preparation.
	for i := range 5 {
		if err := s.Consume(ctx, fmt.Sprintf("warm-%d", i), time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE `+schema+`.confirmation_ledger IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.Consume(ctx, "n1", time.Now().Add(time.Minute))
	took := time.Since(start)
	if err == nil || errors.Is(err, store.ErrReplayed) || took > 1500*time.Millisecond {
		t.Fatalf("consume on a locked ledger: %v after %v, want a non-replay error within ~300ms", err, took)
	}
	// The store's backends that are inside a transaction now: the abandoned
	// insert, if it is still queued behind the lock on the server.
	var inTx []int32
	rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL`, app)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pid int32
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		inTx = append(inTx, pid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
	// Wait until each of those transactions has ended (its backend gone, or
	// idle outside a transaction): only then is the outcome of the abandoned
	// insert settled, committed or not.
	if err := testwait.Until(10*time.Second, func() error {
		var open int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1) AND xact_start IS NOT NULL`, inTx).Scan(&open); err != nil {
			return err
		}
		if open > 0 {
			return fmt.Errorf("%d of the store's transactions from the stuck consume are still open", open)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if used, err := s.ConsumedNonce(ctx, "n1"); err != nil || used {
		t.Errorf("a timed-out consume recorded the nonce after it had reported failure (consumed=%v, %v)", used, err)
	}
	if err := s.Consume(ctx, "n1", time.Now().Add(time.Minute)); err != nil {
		t.Errorf("consume after the lock is gone: %v", err)
	}
}

// TestUnreachableDatabase cuts the network to the database (refused, then
// hanging), and terminates the store's backends: the ledger fails fast with
// errors that are not ErrReplayed, recently seen tokens still authenticate,
// and everything works again once the database is back, without reopening.
func TestUnreachableDatabase(t *testing.T) {
	_, schema := pgtest.SchemaDSN(t, "down", "setup")
	px := pgtest.StartProxy(t)
	app := "down_" + schema
	s := open(t, px.DSN(schema, app)+" connect_timeout=1", pg.Options{LedgerTimeout: 400 * time.Millisecond, AuthGrace: time.Minute})
	brief := open(t, px.DSN(schema, app)+" connect_timeout=1", pg.Options{LedgerTimeout: 400 * time.Millisecond, AuthGrace: 50 * time.Millisecond})
	ctx := context.Background()
	tok := seed(t, s)
	revoked, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Authenticate(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := brief.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	rp, _ := s.Authenticate(ctx, revoked)
	if err := s.RevokeToken(ctx, rp.TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, revoked); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked: %v", err)
	}
	exp := time.Now().Add(time.Minute)

	for _, mode := range []pgtest.Mode{pgtest.Refuse, pgtest.Hang} {
		name := mode.String()
		px.Set(mode)
		start := time.Now()
		err := s.Consume(ctx, "during-"+name, exp)
		if took := time.Since(start); err == nil || errors.Is(err, store.ErrReplayed) || took > 2*time.Second {
			t.Errorf("%s: consume = %v after %v, want a non-replay error within the ledger timeout", name, err, took)
		}
		if _, err := s.SigningKey(ctx, "confirm"); err == nil {
			t.Errorf("%s: signing key without a database", name)
		}
		if got, err := s.Authenticate(ctx, tok); err != nil || got.TokenID != p.TokenID {
			t.Errorf("%s: a token seen a moment ago: %+v %v", name, got, err)
		}
		if _, err := s.Authenticate(ctx, revoked); err == nil {
			t.Errorf("%s: a revoked token authenticated", name)
		}
		if _, err := s.Authenticate(ctx, "kbn_never_seen"); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: unknown token = %v, want an unavailability error (not ErrNotFound)", name, err)
		}
		time.Sleep(60 * time.Millisecond)
		if _, err := brief.Authenticate(ctx, tok); err == nil {
			t.Errorf("%s: authenticated past AuthGrace", name)
		}
		if _, err := s.GetRecord(ctx, "w1", "k", "x"); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: get record = %v, want an error that is not ErrNotFound", name, err)
		}
		px.Set(pgtest.Up)
		if err := testwait.Until(5*time.Second, func() error { return s.Consume(ctx, "after-"+name, exp) }); err != nil {
			t.Errorf("%s: consume after recovery: %v", name, err)
		}
		if used, _ := s.ConsumedNonce(ctx, "during-"+name); used {
			t.Errorf("%s: the failed consume was recorded", name)
		}
	}

	// Terminated backends: the next statements reconnect by themselves, the
	// first call after the terminations included.
	for round := range 3 {
		if _, err := pgtest.Admin(t).Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1`, app); err != nil {
			t.Fatal(err)
		}
		if err := s.Consume(ctx, fmt.Sprintf("after-terminate-%d", round), exp); err != nil {
			t.Fatalf("consume after terminate: %v", err)
		}
		if _, err := s.Authenticate(ctx, tok); err != nil {
			t.Fatalf("authenticate after terminate: %v", err)
		}
	}
	if n := count(t, schema, `SELECT count(*) FROM S.confirmation_ledger`); n != 5 {
		t.Errorf("%d ledger rows, want 5 (two after recoveries, three after terminates)", n)
	}
}
