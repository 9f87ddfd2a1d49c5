package pg_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/kobana/workflow/internal/pgtest"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/pg"
	"github.com/kobana/workflow/store/storetest"
)

// TestConformance runs the store suite against PostgreSQL: a database is a
// schema of the test database, and handles on the same schema share it.
func TestConformance(t *testing.T) {
	pgtest.BaseDSN(t)
	var mu sync.Mutex
	schemas := map[string]string{}
	storetest.Run(t, func(st *testing.T, name string, opts store.Options) store.Store {
		mu.Lock()
		schema, ok := schemas[name]
		if !ok {
			sum := sha256.Sum256([]byte(name))
			schema = pgtest.FreshSchema(t, "c"+hex.EncodeToString(sum[:4]))
			schemas[name] = schema
		}
		mu.Unlock()
		dsn := pgtest.DSN(st, "", 0, map[string]string{"search_path": schema, "application_name": "conformance"})
		s, err := pg.Open(context.Background(), dsn, pg.Options{Options: opts, PurgeInterval: -1})
		if err != nil {
			st.Fatal(err)
		}
		return s
	})
}
