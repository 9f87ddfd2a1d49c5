package storetest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/storetest"
)

// TestSQLite runs the conformance suite against the embedded store: a
// database is a file, and handles on the same file share it.
func TestSQLite(t *testing.T) {
	dir := t.TempDir()
	storetest.Run(t, func(t *testing.T, name string, opts store.Options) store.Store {
		s, err := store.Open(context.Background(), filepath.Join(dir, name+".db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
