package groupcommit

import (
	"context"
	"sync"

	"github.com/kobana/workflow/mcpserver/store"
)

// MaxBatch caps the writes one shared transaction commits.
const MaxBatch = 64

// A Committer runs writes in shared transactions: a write that finds fewer
// than Lanes transactions running leads one with every write queued behind
// it (up to MaxBatch), and hands the lead to the first write that queued
// meanwhile. When one write of a shared transaction fails (a conflict, a
// refused statement, a Ready that reports an error), the transaction is
// rolled back and each of its writes runs again in a transaction of its
// own. A write must therefore have no effect but on its transaction.
//
// S is what the writes of one transaction share (a cache of what they
// read, say); State makes it for each transaction. The zero value is not
// usable: make one with New.
type Committer[S any] struct {
	st    store.Transactor
	lanes int
	state func(store.Tx) S

	mu      sync.Mutex
	queue   []*pending[S]
	leaders int
}

// New returns a Committer on st that runs at most lanes transactions at
// once (1 for a database with one writer, which would serialize them
// anyway; less than 1 counts as 1). state, when not nil, makes what the
// writes of each transaction share; without it they share S's zero value.
func New[S any](st store.Transactor, lanes int, state func(tx store.Tx) S) *Committer[S] {
	return &Committer[S]{st: st, lanes: max(lanes, 1), state: state}
}

// A Write is one caller's part of a transaction.
type Write[S any] struct {
	// Apply makes the write's statements in tx. It may run twice (in a
	// shared transaction that is rolled back, then alone): it must change
	// nothing but tx, and ctx is the context its statements run under.
	Apply func(ctx context.Context, tx store.Tx, s S) error
	// Ready, when set, is waited for after every write of the transaction
	// applied and before it commits: what must be true outside the
	// database (a file made durable) before the records saying so commit.
	Ready func() error
}

// pending is a write waiting for, or in, a transaction.
type pending[S any] struct {
	ctx  context.Context
	w    Write[S]
	done chan error
	// lead is closed to make the write's caller lead the next transaction;
	// handed says it was (under Committer.mu).
	lead   chan struct{}
	handed bool
}

// Do commits w, alone or with other writes, and returns Apply's or Ready's
// error, or the commit's. It returns once w is committed (or failed).
func (c *Committer[S]) Do(ctx context.Context, w Write[S]) error {
	p := &pending[S]{ctx: ctx, w: w, done: make(chan error, 1), lead: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	if c.leaders < c.lanes {
		// This write leads: no other leader may hand it a lead too (it
		// would never be taken, and the lane lost for good).
		c.leaders++
		p.handed = true
		c.mu.Unlock()
		c.run()
		return <-p.done
	}
	c.mu.Unlock()
	select {
	case err := <-p.done:
		// Committed in another lane's transaction: if the lead was handed
		// to this write meanwhile, take it, so that it is never lost.
		c.mu.Lock()
		handed := p.handed
		c.mu.Unlock()
		if handed {
			c.run()
		}
		return err
	case <-p.lead:
		c.run()
		return <-p.done
	}
}

// run commits what is queued, then hands the lead on (or gives it up).
func (c *Committer[S]) run() {
	c.mu.Lock()
	n := min(len(c.queue), MaxBatch)
	batch := append([]*pending[S](nil), c.queue[:n]...)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	c.mu.Unlock()

	if len(batch) > 0 {
		c.commit(batch)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.queue {
		if !p.handed {
			// The lead (and this leader's count) passes to the first write
			// no other leader has handed it to.
			p.handed = true
			close(p.lead)
			return
		}
	}
	c.leaders--
}

// commit runs a batch in one transaction or, when that fails, each write
// in its own.
func (c *Committer[S]) commit(batch []*pending[S]) {
	if len(batch) > 1 {
		// The batch outlives any one writer: it runs under the first
		// write's context less its cancellation, so a caller that gives up
		// does not undo the others.
		ctx := context.WithoutCancel(batch[0].ctx)
		err := c.st.WithTx(ctx, func(tx store.Tx) error {
			s := c.newState(tx)
			for _, p := range batch {
				if err := p.w.Apply(ctx, tx, s); err != nil {
					return err
				}
			}
			for _, p := range batch {
				if p.w.Ready != nil {
					if err := p.w.Ready(); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err == nil {
			for _, p := range batch {
				p.done <- nil
			}
			return
		}
	}
	for _, p := range batch {
		p.done <- c.st.WithTx(p.ctx, func(tx store.Tx) error {
			if err := p.w.Apply(p.ctx, tx, c.newState(tx)); err != nil {
				return err
			}
			if p.w.Ready != nil {
				return p.w.Ready()
			}
			return nil
		})
	}
}

func (c *Committer[S]) newState(tx store.Tx) S {
	if c.state == nil {
		var zero S
		return zero
	}
	return c.state(tx)
}
