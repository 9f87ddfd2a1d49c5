package mailstore_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
)

// testPool returns a pool on a fresh schema of the test database, or skips
// when KOBANA_TEST_POSTGRES is not set.
func testPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	dsn, _ := pgtest.SchemaDSN(t, "mailstore", "kobana-mailstore-test")
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Large objects belong to the database, not to the schema.
		pool.Exec(ctx, "SELECT lo_unlink(object) FROM inbox_messages")
		pool.Close()
	})
	return pool
}

// pgxTx is a bare pgx transaction in the shape of a store/pg one: what
// KeepTx and PurgeTx use of it is PgxTx.
type pgxTx struct {
	store.Tx
	tx pgx.Tx
}

func (p pgxTx) PgxTx() pgx.Tx { return p.tx }

func objectExists(t *testing.T, pool *pgxpool.Pool, oid uint32) bool {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_largeobject_metadata WHERE oid = $1", oid).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestLargeObjectsCommitReadPurge(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	s := mailstore.NewLargeObjects(pool, t.TempDir())
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	content := message(3<<20 + 17) // more than one lo_get chunk
	in := incoming(t, s.NewSpool, content)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return s.KeepTx(ctx, pgxTx{tx: tx}, in, "ws", "e1") })
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Open(ctx, "ws", "e1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Size() != int64(len(content)) {
		t.Fatalf("Size = %d, want %d", m.Size(), len(content))
	}
	if got := readAll(t, m, 32<<10+3); !bytes.Equal(got, content) {
		t.Fatalf("read back %d bytes differing from the %d stored", len(got), len(content))
	}
	mid := make([]byte, 2<<20)
	if n, err := m.ReadAt(mid, 1<<20); err != nil || n != len(mid) || !bytes.Equal(mid, content[1<<20:3<<20]) {
		t.Fatalf("ranged read across chunks: n=%d err=%v", n, err)
	}
	var oid uint32
	pool.QueryRow(ctx, "SELECT object FROM inbox_messages WHERE id = 'e1'").Scan(&oid)
	if err := s.Delete(ctx, "ws", "e1"); err != nil {
		t.Fatal(err)
	}
	if objectExists(t, pool, oid) {
		t.Fatal("the large object survived Delete")
	}
	// The open snapshot keeps reading what it opened.
	if got := readAll(t, m, 1<<20); !bytes.Equal(got, content) {
		t.Fatal("an open snapshot changed after Delete")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "ws", "e1"); !errors.Is(err, mailstore.ErrNotFound) {
		t.Fatalf("Open after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "ws", "e1"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
}

func TestLargeObjectsRollbackLeavesNothing(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	s := mailstore.NewLargeObjects(pool, t.TempDir())
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	in := incoming(t, s.NewSpool, message(100_000))
	failing := errors.New("the record did not commit")
	// Large objects are shared by the whole database, where other packages'
	// tests write theirs meanwhile: look for this transaction's own.
	var oid uint32
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := s.KeepTx(ctx, pgxTx{tx: tx}, in, "ws", "e1"); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT object FROM inbox_messages WHERE id = 'e1'").Scan(&oid); err != nil {
			return err
		}
		return failing
	})
	if !errors.Is(err, failing) {
		t.Fatalf("transaction: %v", err)
	}
	if objectExists(t, pool, oid) {
		t.Fatalf("after rollback: large object %d still exists; want it gone", oid)
	}
	var rows int
	pool.QueryRow(ctx, "SELECT count(*) FROM inbox_messages").Scan(&rows)
	if rows != 0 {
		t.Fatalf("after rollback: %d rows; want nothing left", rows)
	}
	if _, err := s.Open(ctx, "ws", "e1"); !errors.Is(err, mailstore.ErrNotFound) {
		t.Fatalf("Open after rollback: %v, want ErrNotFound", err)
	}
	// The same name can be stored afterwards, once.
	keep := func() error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return s.KeepTx(ctx, pgxTx{tx: tx}, in, "ws", "e1") })
	}
	if err := keep(); err != nil {
		t.Fatal(err)
	}
	if err := keep(); err == nil {
		t.Fatal("a second message under the same name was stored")
	}
}

// Snapshots hold a pooled connection each: at most half the pool is held
// by them, so their holders can still write (the pipeline records a run's
// progress while its message is open). One more Open waits for a Close.
func TestLargeObjectsSnapshotsLeaveHalfThePool(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	s := mailstore.NewLargeObjects(pool, t.TempDir())
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	in := incoming(t, s.NewSpool, message(1000))
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return s.KeepTx(ctx, pgxTx{tx: tx}, in, "ws", "e1") }); err != nil {
		t.Fatal(err)
	}
	half := int(max(1, pool.Config().MaxConns/2))
	var open []mailstore.Message
	for range half {
		m, err := s.Open(ctx, "ws", "e1")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, m)
	}
	// The rest of the pool still serves other work.
	var one int
	if err := pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	waiting, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := s.Open(waiting, "ws", "e1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open beyond half the pool: %v, want it to wait until its context ends", err)
	}
	done := make(chan error, 1)
	go func() {
		m, err := s.Open(ctx, "ws", "e1")
		if err == nil {
			err = m.Close()
		}
		done <- err
	}()
	if err := open[0].Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Open after a Close: %v", err)
	}
	for _, m := range open[1:] {
		m.Close()
	}
}
