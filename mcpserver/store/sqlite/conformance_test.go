package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/mcpserver/store/storetest"
)

// opener opens the databases of the shared suites as files in dir: handles
// on the same file share it.
func opener(dir string) storetest.Open {
	return func(t testing.TB, name string, opts store.Options) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(dir, name+".db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// TestConformance runs the conformance suite against the embedded store.
func TestConformance(t *testing.T) {
	storetest.Run(t, "sqlite", opener(t.TempDir()))
}

// BenchmarkStore runs the shared benchmarks (the reads of every request)
// against the embedded store.
func BenchmarkStore(b *testing.B) {
	storetest.Benchmark(b, opener(b.TempDir()))
}
