package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/sqlite"
	"github.com/kobana/workflow/store/storetest"
)

// TestSQLite runs the conformance suite against the embedded store: a
// database is a file, and handles on the same file share it.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	storetest.Run(t, func(t *testing.T, name string, opts store.Options) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(dir, name+".db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
