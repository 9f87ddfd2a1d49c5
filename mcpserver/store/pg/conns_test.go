package pg_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
)

// TestTerminatedBackendsAreNotRetriedInto: when the server terminates every
// backend of a full pool at once (a restart, an operator), the pool is left
// with that many dead idle connections. Each operation afterwards — reads,
// idempotent writes, authentication, the ledger, a transaction — succeeds on
// its first call: its retry never lands on a second dead connection. Both
// ways a dead connection fails are covered: on the server's Unix socket the
// write fails (nothing was sent), through a TCP proxy the write succeeds and
// the answer is the server's farewell or the end of the stream.
func TestTerminatedBackendsAreNotRetriedInto(t *testing.T) {
	const size = 4
	schema := pgtest.FreshSchema(t, "dead")
	ctx := context.Background()
	admin := pgtest.Admin(t)
	tok := seed(t, open(t, pgtest.DSN(t, "", 0, map[string]string{"search_path": schema, "application_name": "setup"}), pg.Options{}))
	px := pgtest.StartProxy(t)
	dsn := map[string]func(app string) string{
		"unix socket": func(app string) string {
			return pgtest.DSN(t, "", 0, map[string]string{"search_path": schema, "application_name": app})
		},
		"tcp proxy": func(app string) string { return px.DSN(schema, app) },
	}

	// fresh opens a store whose connections are named app and whose pool
	// holds size idle connections, all checked out at once a moment ago (so
	// that pgxpool's own ping of connections idle for over a second does
	// not apply).
	fresh := func(dsn string) *pg.Store {
		t.Helper()
		s := open(t, dsn+fmt.Sprintf(" pool_max_conns=%d", size), pg.Options{})
		held := make(chan struct{}, size)
		release := make(chan struct{})
		errs := make(chan error, size)
		for range size {
			go func() {
				errs <- s.WithTx(ctx, func(tx store.Tx) error {
					if _, err := tx.GetRecord(ctx, "w1", "note", "none"); !errors.Is(err, store.ErrNotFound) {
						return err
					}
					held <- struct{}{}
					<-release
					return nil
				})
			}()
		}
		for range size {
			select {
			case <-held:
			case err := <-errs:
				close(release)
				t.Fatalf("filling the pool: %v", err)
			}
		}
		close(release)
		for range size {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	// kill terminates the backends named app and waits until they are gone.
	kill := func(app string) {
		t.Helper()
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != size {
			t.Fatalf("terminated %d backends, want the pool's %d", n, size)
		}
		if err := testwait.Until(10*time.Second, func() error {
			var left int
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&left); err != nil {
				return err
			}
			if left > 0 {
				return fmt.Errorf("%d terminated backends still there", left)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	exp := time.Now().Add(time.Minute)
	// Each round: a store whose every pooled connection is dead, one call.
	for _, op := range []struct {
		name string
		run  func(s *pg.Store, round int) error
	}{
		{"read", func(s *pg.Store, _ int) error {
			if _, err := s.GetRecord(ctx, "w1", "note", "none"); !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return nil
		}},
		{"idempotent write", func(s *pg.Store, round int) error {
			return s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "note", ID: fmt.Sprint("n", round), Data: []byte(`{}`)})
		}},
		// A statement that must not be sent twice is sent again only when
		// it never reached the server, so the first one may fail; but once
		// any call has seen a connection die, the pool checks every
		// connection idle since before that, and the next call runs.
		{"create after a create", func(s *pg.Store, round int) error {
			if err := s.CreateRecord(ctx, store.Record{Workspace: "w1", Kind: "note", ID: fmt.Sprint("c", round), Data: []byte(`{}`)}); err != nil {
				t.Logf("the first create after the terminations: %v", err)
			}
			return s.CreateRecord(ctx, store.Record{Workspace: "w1", Kind: "note", ID: fmt.Sprint("d", round), Data: []byte(`{}`)})
		}},
		{"authenticate", func(s *pg.Store, _ int) error { _, err := s.Authenticate(ctx, tok); return err }},
		{"signing key", func(s *pg.Store, _ int) error { _, err := s.SigningKey(ctx, "confirm"); return err }},
		// The first key of a purpose is created in a transaction under the
		// keys lock, which is sent again whole: it looks again first.
		{"first key of a purpose", func(s *pg.Store, round int) error {
			_, err := s.SigningKey(ctx, fmt.Sprint("first-", round))
			return err
		}},
		{"ledger", func(s *pg.Store, round int) error { return s.Consume(ctx, fmt.Sprint("nonce-", round), exp) }},
		{"transaction", func(s *pg.Store, round int) error {
			return s.WithTx(ctx, func(tx store.Tx) error {
				return tx.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "note", ID: fmt.Sprint("t", round), Data: []byte(`{}`)})
			})
		}},
	} {
		for i, path := range []string{"unix socket", "tcp proxy"} {
			for round := range 3 {
				app := fmt.Sprintf("%s_%s_%c_%d", schema, op.name[:4], path[0], round)
				s := fresh(dsn[path](app))
				kill(app)
				if err := op.run(s, 10*i+round); err != nil {
					t.Errorf("%s over the %s after the pool's %d backends were terminated (round %d): %v", op.name, path, size, round, err)
				}
			}
		}
	}
	if n := count(t, schema, `SELECT count(*) FROM S.confirmation_ledger`); n != 6 {
		t.Errorf("%d ledger rows, want 6", n)
	}
}
