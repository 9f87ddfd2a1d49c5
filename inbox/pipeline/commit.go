package pipeline

import (
	"context"

	"github.com/kobana/workflow/inbox/queue"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/groupcommit"
)

// pgLanes is how many shared transactions run at once on PostgreSQL, which
// takes writers in parallel.
const pgLanes = 8

// newCommitter returns the committer of a pipeline's stages on st: their
// writes — an agent run with its e-mail, events and next job; a workflow
// step about to be sent or its outcome; a run's final record; a delivery
// attempt — commit in shared transactions (group commit), at most pgLanes
// at a time, or one when q says the database has one writer.
func newCommitter(st store.Transactor, q *queue.Queue) *groupcommit.Committer[struct{}] {
	lanes := pgLanes
	if q.OneWriter() {
		lanes = 1
	}
	return groupcommit.New[struct{}](st, lanes, nil)
}

// commit runs fn's writes in a transaction, shared with other stages'
// writes made at the same time; it returns once they are durable (a step
// is sent only after the record saying so committed). fn must have no
// effect but on tx: it may run twice.
func (p *Pipeline) commit(ctx context.Context, fn func(tx store.Tx) error) error {
	return p.commits.Do(ctx, groupcommit.Write[struct{}]{Apply: func(_ context.Context, tx store.Tx, _ struct{}) error { return fn(tx) }})
}
