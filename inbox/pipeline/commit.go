package pipeline

import (
	"context"
	"sync"

	"github.com/kobana/workflow/inbox/queue"
	"github.com/kobana/workflow/store"
)

// maxBatch caps the stages' writes one shared transaction commits.
const maxBatch = 64

// committer runs the stages' writes — an agent run with its e-mail, events
// and next job; a workflow step about to be sent or its outcome; a run's
// final record; a delivery attempt — in shared transactions (group
// commit): a write that finds no commit running leads one with every write
// queued behind it, and hands the lead to the first that queued meanwhile.
// One commit (one sync of the database's log, one round of its locks) then
// serves many jobs, as a busy pipeline makes them; a write alone commits
// alone, at once. At most lanes transactions run at a time (1 for SQLite,
// whose one writer would serialize them anyway).
//
// Each write still commits whole or not at all, and a caller returns only
// once its write is durable (a step is sent only after the record saying
// so committed). When one write of a shared transaction fails (a conflict,
// a refused statement), the transaction is rolled back and each of its
// writes runs again in a transaction of its own, so one job's failure is
// never another's: a write must therefore have no effect but on tx.
type committer struct {
	st    store.Transactor
	lanes int

	mu      sync.Mutex
	queue   []*write
	leaders int
}

// pgLanes is how many shared transactions run at once on PostgreSQL, which
// takes writers in parallel.
const pgLanes = 8

// newCommitter returns the committer of a pipeline on st, whose queue says
// whether the database has one writer.
func newCommitter(st store.Transactor, q *queue.Queue) *committer {
	c := &committer{st: st, lanes: pgLanes}
	if q.OneWriter() {
		c.lanes = 1
	}
	return c
}

// commit runs fn's writes in a transaction, shared with other stages'
// writes made at the same time (committer).
func (p *Pipeline) commit(ctx context.Context, fn func(tx store.Tx) error) error {
	return p.commits.do(ctx, fn)
}

// write is one caller's transaction.
type write struct {
	ctx  context.Context
	fn   func(tx store.Tx) error
	done chan error
	// lead is closed to make the writer lead the next transaction; handed
	// says it was (under committer.mu).
	lead   chan struct{}
	handed bool
}

// do commits fn's writes, alone or with others', and returns fn's error or
// the commit's.
func (c *committer) do(ctx context.Context, fn func(tx store.Tx) error) error {
	w := &write{ctx: ctx, fn: fn, done: make(chan error, 1), lead: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, w)
	if c.leaders < max(c.lanes, 1) {
		c.leaders++
		c.mu.Unlock()
		c.run()
		return <-w.done
	}
	c.mu.Unlock()
	select {
	case err := <-w.done:
		// Committed by another lane's batch after being handed the lead:
		// pass it on.
		c.mu.Lock()
		handed := w.handed
		c.mu.Unlock()
		if handed {
			c.run()
		}
		return err
	case <-w.lead:
		c.run()
		return <-w.done
	}
}

// run commits what is queued, then hands the lead on (or gives it up).
func (c *committer) run() {
	c.mu.Lock()
	n := min(len(c.queue), maxBatch)
	batch := append([]*write(nil), c.queue[:n]...)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	c.mu.Unlock()

	if len(batch) > 0 {
		c.commit(batch)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.queue {
		if !w.handed {
			// The first queued behind this batch leads the next one.
			w.handed = true
			close(w.lead)
			return
		}
	}
	c.leaders--
}

// commit runs a batch in one transaction or, when that fails, each write
// in its own.
func (c *committer) commit(batch []*write) {
	if len(batch) > 1 {
		// The batch outlives any one writer's context: each write's
		// statements run under its own.
		err := c.st.WithTx(context.WithoutCancel(batch[0].ctx), func(tx store.Tx) error {
			for _, w := range batch {
				if err := w.fn(tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			for _, w := range batch {
				w.done <- nil
			}
			return
		}
	}
	for _, w := range batch {
		w.done <- c.st.WithTx(w.ctx, w.fn)
	}
}
