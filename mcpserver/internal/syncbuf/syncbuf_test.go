package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: what goroutines write at once is all there, each
// write whole (run with -race to see the lock at work).
func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("line\n", 800) {
		t.Errorf("%d bytes, want %d", len(got), 800*5)
	}
}
