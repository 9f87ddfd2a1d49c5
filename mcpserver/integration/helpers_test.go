package integration_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store/pg"
)

// openPG opens a PostgreSQL store closed when the test ends, without the
// ledger's purge loop unless opts asks for one.
func openPG(t testing.TB, dsn string, opts pg.Options) *pg.Store {
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

// count runs a count query in which "S." names the test's schema.
func count(t testing.TB, schema, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pgtest.Admin(t).QueryRow(context.Background(), strings.ReplaceAll(query, "S.", schema+"."), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
