package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/groupcommit"
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
// effect but on tx: it may run twice. While the store refuses writes it
// waits and tries again (see commitWithin), for as long as ctx lasts.
func (p *Pipeline) commit(ctx context.Context, fn func(tx store.Tx) error) error {
	return p.commitWithin(ctx, ctx, fn)
}

// Pauses between the tries of a write the store refused: the first, which
// doubles up to the longest.
const (
	refusedFirstPause = 50 * time.Millisecond
	refusedLongest    = 2 * time.Second
)

// commitWithin is commit with its statements under ctx and its waits
// bounded by life (the job's context): a write the store refuses
// (store.ErrRefused — its disk full or read-only, its connection cut) is
// kept and tried again, the pause growing to refusedLongest, until it
// commits, fails for another reason, or life ends. The stage pauses where
// it is; nothing it did is given up while its job lives.
func (p *Pipeline) commitWithin(ctx, life context.Context, fn func(tx store.Tx) error) error {
	pause := refusedFirstPause
	waited := false
	for {
		err := p.commits.Do(ctx, groupcommit.Write[struct{}]{Apply: func(_ context.Context, tx store.Tx, _ struct{}) error { return fn(tx) }})
		if !errors.Is(err, store.ErrRefused) {
			if waited && err == nil {
				p.log.Info("pipeline: the store takes writes again; a paused write committed")
			}
			return err
		}
		if !waited {
			p.log.Warn("pipeline: the store refuses writes; the write waits and is tried again", "reason", store.RefusedReason(err), "err", err)
			waited = true
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-life.Done():
			t.Stop()
			return err
		}
		pause = min(2*pause, refusedLongest)
	}
}
