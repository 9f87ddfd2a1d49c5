package pg_test

import (
	"context"
	"sort"
	"sync"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store/pg"
)

// TestNextNumberIsUniqueAcrossReplicas: three handles hand out numbers at
// once; every number is handed out once and none is skipped.
func TestNextNumberIsUniqueAcrossReplicas(t *testing.T) {
	dsn, _ := pgtest.SchemaDSN(t, "num", "num")
	ctx := context.Background()
	stores := []*pg.Store{open(t, dsn, pg.Options{}), open(t, dsn, pg.Options{}), open(t, dsn, pg.Options{})}
	if n, err := stores[0].NextNumber(ctx, "w1", "invoice", 1000); err != nil || n != 1000 {
		t.Fatalf("first number = %d %v, want the start 1000", n, err)
	}
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for i := range 90 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := stores[i%3].NextNumber(ctx, "w1", "invoice", 1000)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	for i, n := range got {
		if n != int64(1001+i) {
			t.Fatalf("numbers %v: want 1001…1090, each once", got)
		}
	}
	// Counters are per workspace and name; a higher start moves the counter.
	if n, _ := stores[1].NextNumber(ctx, "w2", "invoice", 1); n != 1 {
		t.Errorf("another workspace's first number = %d, want 1", n)
	}
	if n, _ := stores[1].NextNumber(ctx, "w1", "nfe", 7); n != 7 {
		t.Errorf("another counter's first number = %d, want 7", n)
	}
	if n, _ := stores[2].NextNumber(ctx, "w1", "invoice", 5000); n != 5000 {
		t.Errorf("raised start = %d, want 5000", n)
	}
	if n, _ := stores[0].NextNumber(ctx, "w1", "invoice", 1000); n != 5001 {
		t.Errorf("after a raised start = %d, want 5001", n)
	}
}
