package pg_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/storetest"
)

// opener opens the databases of the shared suites as schemas of the test
// database, dropped when tb ends: handles on the same schema share it.
func opener(tb testing.TB) storetest.Open {
	pgtest.BaseDSN(tb)
	var mu sync.Mutex
	schemas := map[string]string{}
	return func(st testing.TB, name string, opts store.Options) store.Store {
		mu.Lock()
		schema, ok := schemas[name]
		if !ok {
			sum := sha256.Sum256([]byte(name))
			schema = pgtest.FreshSchema(tb, "c"+hex.EncodeToString(sum[:4]))
			schemas[name] = schema
		}
		mu.Unlock()
		dsn := pgtest.DSN(st, "", 0, map[string]string{"search_path": schema, "application_name": "conformance"})
		s, err := pg.Open(context.Background(), dsn, pg.Options{Options: opts, PurgeInterval: -1})
		if err != nil {
			st.Fatal(err)
		}
		return s
	}
}

// TestConformance runs the store suite against PostgreSQL.
func TestConformance(t *testing.T) {
	storetest.Run(t, "pg", opener(t))
}

// BenchmarkStore runs the shared benchmarks (the reads of every request)
// against PostgreSQL.
func BenchmarkStore(b *testing.B) {
	storetest.Benchmark(b, opener(b))
}
