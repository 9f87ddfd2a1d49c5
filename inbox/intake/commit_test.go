package intake

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/store"
)

// slowTransactor runs fn with no transaction (the commits under test write
// nothing), taking a little while, as a commit does, and counts how many run
// at once.
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

// Many deliveries at once, over several lanes: each is applied, waited
// for and answered exactly once, failures stay each delivery's own, no
// more transactions run at once than the lanes, and deliveries share them.
func TestCommitterGroupsAndIsolates(t *testing.T) {
	for _, lanes := range []int{1, 3} {
		var m committer
		st := &slowTransactor{}
		const n = 400
		var applied [n]atomic.Int32
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				failing := i%17 == 0
				errs[i] = m.do(context.Background(), st, lanes, &commit{
					apply: func(context.Context, store.Tx, *txCache) error {
						applied[i].Add(1)
						if failing {
							return errors.New("this delivery fails")
						}
						return nil
					},
					ready: func() error { return nil },
				})
			}()
		}
		wg.Wait()
		for i := range n {
			if failing := i%17 == 0; (errs[i] != nil) != failing {
				t.Fatalf("lanes %d: delivery %d answered %v", lanes, i, errs[i])
			}
			if applied[i].Load() == 0 {
				t.Fatalf("lanes %d: delivery %d never applied", lanes, i)
			}
		}
		if most := st.most.Load(); most > int32(lanes) {
			t.Fatalf("lanes %d: %d transactions at once", lanes, most)
		}
		if st.txs.Load() >= 2*n {
			t.Fatalf("lanes %d: %d transactions for %d deliveries: none were shared", lanes, st.txs.Load(), n)
		}
		if m.leaders != 0 || len(m.queue) != 0 {
			t.Fatalf("lanes %d: %d leaders and %d queued after all answered", lanes, m.leaders, len(m.queue))
		}
	}
}
