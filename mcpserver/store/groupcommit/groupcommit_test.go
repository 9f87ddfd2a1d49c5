package groupcommit

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// slowTransactor runs fn with no transaction (the writes under test write
// nothing), taking a little while, as a commit does, and counts how many run
// at once and how many ran.
type slowTransactor struct {
	running, most atomic.Int32
	txs           atomic.Int32
}

func (s *slowTransactor) WithTx(ctx context.Context, fn func(store.Tx) error) error {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	s.txs.Add(1)
	time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	return fn(nil)
}

// Many writes at once, over several lanes: each is applied and answered
// exactly once, failures stay each write's own, no more transactions run
// at once than the lanes, writes share them, and every lead is given back.
func TestWritesAreGroupedAndIsolated(t *testing.T) {
	t.Parallel()
	for _, lanes := range []int{1, 3} {
		st := &slowTransactor{}
		c := New[struct{}](st, lanes, nil)
		const n = 400
		var applied, readied [n]atomic.Int32
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				failing := i%17 == 0
				errs[i] = c.Do(context.Background(), Write[struct{}]{
					Apply: func(context.Context, store.Tx, struct{}) error {
						applied[i].Add(1)
						if failing {
							return errors.New("this write fails")
						}
						return nil
					},
					Ready: func() error { readied[i].Add(1); return nil },
				})
			}()
		}
		wg.Wait()
		for i := range n {
			if failing := i%17 == 0; (errs[i] != nil) != failing {
				t.Fatalf("lanes %d: write %d answered %v", lanes, i, errs[i])
			}
			if applied[i].Load() == 0 {
				t.Fatalf("lanes %d: write %d never applied", lanes, i)
			}
			if i%17 != 0 && readied[i].Load() == 0 {
				t.Fatalf("lanes %d: write %d committed without waiting for Ready", lanes, i)
			}
		}
		if most := st.most.Load(); most > int32(lanes) {
			t.Fatalf("lanes %d: %d transactions at once", lanes, most)
		}
		if st.txs.Load() >= 2*n {
			t.Fatalf("lanes %d: %d transactions for %d writes: none were shared", lanes, st.txs.Load(), n)
		}
		if c.leaders != 0 || len(c.queue) != 0 {
			t.Fatalf("lanes %d: %d leaders and %d queued after all answered", lanes, c.leaders, len(c.queue))
		}
	}
}

// Writers that keep writing, over several lanes, so that leads are handed
// to writes another lane may commit first: every write is answered (none
// waits for a lead that was lost) and every lead is given back.
func TestNoLeadIsLost(t *testing.T) {
	t.Parallel()
	for _, lanes := range []int{2, 4} {
		st := &slowTransactor{}
		c := New[struct{}](st, lanes, nil)
		var wg sync.WaitGroup
		var answered atomic.Int32
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 100 {
					if err := c.Do(context.Background(), Write[struct{}]{Apply: func(context.Context, store.Tx, struct{}) error { return nil }}); err != nil {
						t.Errorf("lanes %d: %v", lanes, err)
					}
					answered.Add(1)
				}
			}()
		}
		wg.Wait()
		if answered.Load() != 1600 {
			t.Fatalf("lanes %d: %d of 1600 writes answered", lanes, answered.Load())
		}
		if c.leaders != 0 || len(c.queue) != 0 {
			t.Fatalf("lanes %d: %d leaders and %d queued after all answered", lanes, c.leaders, len(c.queue))
		}
	}
}

// A Ready that fails rolls its transaction back: the write fails alone,
// the others of its transaction commit in their own.
func TestAFailedReadyIsItsWritesOwn(t *testing.T) {
	t.Parallel()
	st := &slowTransactor{}
	c := New(st, 1, func(store.Tx) *int { return new(int) })
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Do(context.Background(), Write[*int]{
				Apply: func(_ context.Context, _ store.Tx, shared *int) error { *shared++; return nil },
				Ready: func() error {
					if i == 7 {
						return errors.New("not durable")
					}
					return nil
				},
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == 7) {
			t.Errorf("write %d: %v", i, err)
		}
	}
}
