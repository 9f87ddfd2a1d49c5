package pg

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
)

// TestMigrationsApplyOnceAcrossConcurrentStarts: replicas of a newer
// release start together on a database at the previous version; the new
// migration runs exactly once, and an older release still starts on it.
func TestMigrationsApplyOnceAcrossConcurrentStarts(t *testing.T) {
	dsn, schema := pgtest.SchemaDSN(t, "mig", "mig")
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if n, err := migrate(ctx, pool, migrations); err != nil || n != len(migrations) {
		t.Fatalf("first migration applied %d (%v), want %d", n, err, len(migrations))
	}
	if n, err := migrate(ctx, pool, migrations); err != nil || n != 0 {
		t.Fatalf("second run applied %d (%v), want 0", n, err)
	}
	next := append(append([][]string{}, migrations...), []string{
		`CREATE TABLE extra (id INTEGER PRIMARY KEY)`,
		`INSERT INTO extra VALUES (1)`,
	})
	var applied atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := migrate(ctx, pool, next)
			if err != nil {
				t.Error(err)
			}
			applied.Add(int64(n))
		}()
	}
	wg.Wait()
	if applied.Load() != 1 {
		t.Errorf("the new migration was applied %d times, want 1", applied.Load())
	}
	var rows, version int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.extra`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("extra has %d rows (%v)", rows, err)
	}
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM `+schema+`.schema_migrations`).Scan(&version); err != nil || version != len(next) {
		t.Errorf("schema version %d (%v), want %d", version, err, len(next))
	}
	// An older release (a rolling upgrade) starts on the newer schema.
	if n, err := migrate(ctx, pool, migrations); err != nil || n != 0 {
		t.Errorf("older release on a newer schema: applied %d, %v", n, err)
	}
	// A failing migration leaves the version where it was.
	broken := append(append([][]string{}, next...), []string{`CREATE TABLE extra2 (id INTEGER)`, `SELECT nonsense FROM nowhere`})
	if _, err := migrate(ctx, pool, broken); err == nil {
		t.Fatal("a broken migration succeeded")
	}
	var exists bool
	pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, schema+".extra2").Scan(&exists)
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM `+schema+`.schema_migrations`).Scan(&version); err != nil || version != len(next) || exists {
		t.Errorf("after a failed migration: version %d, half-applied table %v", version, exists)
	}
}
