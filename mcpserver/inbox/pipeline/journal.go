package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// storeJournal is the journal of one workflow run (runrecord.Journal) kept
// in the store: before each request leaves, the run's record — status
// running, the step being sent, in flight — is committed on its own; once
// the response is in, the step's outcome. The executor drives it; nothing
// else writes the record while the run goes on.
type storeJournal struct {
	p  *Pipeline
	ws string
	// run is the record's fixed part: its ids, start, what it resumes.
	run inbox.WorkflowRun
	// base is the id step identities derive from: the run's own, or that
	// of the run a resume chain started from.
	base string
	// deadline bounds the retries of a commit: the job's own deadline.
	deadline time.Time
	// life is the job's context: a write the store refuses waits for it to
	// take writes again as long as life lasts.
	life context.Context
	// held checks, in each write's transaction, that the run's job is still
	// this worker's (queue.HeldTx); nil checks nothing.
	held func(ctx context.Context, tx store.Tx) error

	mu       sync.Mutex
	steps    []runrecord.Step // the steps that ended, in order
	created  bool             // the record exists in the store
	sending  int              // index of the step being sent, -1 when none
	conflict bool             // another worker created the record first
	// unrecorded is why the outcome of a step that was sent could not be
	// committed, when it could not.
	unrecorded *outcomeError
}

func newStoreJournal(ctx context.Context, p *Pipeline, ws string, run inbox.WorkflowRun, base string) *storeJournal {
	j := &storeJournal{p: p, ws: ws, run: run, base: base, sending: -1, life: ctx}
	j.deadline, _ = ctx.Deadline()
	return j
}

// Identity implements runrecord.Journal: step i of the run whose id is
// base, the same in every attempt and every resume of the run.
func (j *storeJournal) Identity(i int) string { return runrecord.StepID(j.base, i) }

// Sending implements runrecord.Journal: it commits the record of s being
// sent. An error refuses the request.
func (j *storeJournal) Sending(ctx context.Context, s runrecord.Step) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.conflict {
		return errConflict
	}
	rec := j.record(runrecord.RunRunning, s)
	i := s.Index
	rec.InFlight = &i
	err := j.p.commit(ctx, func(tx store.Tx) error {
		if err := j.hold(ctx, tx); err != nil {
			return err
		}
		if !j.created {
			return j.p.repo.In(tx).WorkflowRuns.Create(ctx, j.ws, rec)
		}
		return j.p.repo.In(tx).WorkflowRuns.Put(ctx, j.ws, rec)
	})
	if !j.created && errors.Is(err, store.ErrConflict) {
		j.conflict = true
		return errConflict
	}
	if err != nil {
		return fmt.Errorf("recording step %d as being sent: %w", s.Index, err)
	}
	j.created, j.sending = true, s.Index
	hit("workflow.sending")
	return nil
}

// errConflict refuses the requests of a run another worker started.
var errConflict = errors.New("another worker started this run")

// Done implements runrecord.Journal: it keeps s and, for a step that was
// sent, commits its outcome, retrying a failed write with a growing pause
// (commitAttempts) — and a write the store refuses (store.ErrRefused) for
// as long as the job lives (Pipeline.commitWithin). If the outcome still
// cannot be committed, the record goes on saying the step is being sent —
// so a stop now leaves it unknown, never lost — and the error stops the
// run: no request is sent after one whose outcome the record lacks.
func (j *storeJournal) Done(ctx context.Context, s runrecord.Step) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.steps = append(j.steps, s)
	if j.sending != s.Index {
		return nil // not sent: recorded with the next commit
	}
	j.sending = -1
	hit("workflow.sent")
	rec := j.record(runrecord.RunRunning)
	err := j.commit(ctx, rec)
	if err != nil {
		j.unrecorded = &outcomeError{step: s.Index, err: err}
		j.p.log.Warn("pipeline: could not record a sent step's outcome", "workflow_run", j.run.ID, "step", s.Index, "err", err)
		return err
	}
	return nil
}

// Commit retries: the pause before each retry doubles from the first.
const (
	commitAttempts   = 6
	commitFirstPause = 50 * time.Millisecond
)

// commit writes rec, retrying a failed write (commitAttempts in all, about
// 3 s, within the job's deadline).
func (j *storeJournal) commit(ctx context.Context, rec inbox.WorkflowRun) error {
	pause := commitFirstPause
	for attempt := 1; ; attempt++ {
		err := j.p.commitWithin(ctx, j.life, func(tx store.Tx) error {
			if err := j.hold(ctx, tx); err != nil {
				return err
			}
			return j.p.repo.In(tx).WorkflowRuns.Put(ctx, j.ws, rec)
		})
		if err == nil || errors.Is(err, queue.ErrNotHeld) || attempt == commitAttempts || !j.deadline.IsZero() && time.Until(j.deadline) < 2*pause {
			return err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return err
		}
		pause *= 2
	}
}

// hold checks the run's job is still this worker's (held).
func (j *storeJournal) hold(ctx context.Context, tx store.Tx) error {
	if j.held == nil {
		return nil
	}
	return j.held(ctx, tx)
}

// record is the run's record with the steps that ended, then more.
func (j *storeJournal) record(status runrecord.Status, more ...runrecord.Step) inbox.WorkflowRun {
	rec := j.run
	rec.Status = status
	rec.Steps = append(slices.Clip(j.steps), more...)
	if rec.Steps == nil {
		rec.Steps = []runrecord.Step{}
	}
	return rec
}

// outcomeError says a sent step's outcome could not be recorded. A job
// that ends with it leaves its text among the job's errors, where the next
// attempt reads why it finds the step still being sent (unrecordedStep).
type outcomeError struct {
	step int
	err  error
}

// outcomeNotRecorded begins the text of every outcomeError.
const outcomeNotRecorded = "the response arrived but recording its outcome failed"

func (e *outcomeError) Error() string {
	return fmt.Sprintf("%s (step %d): %v", outcomeNotRecorded, e.step, e.err)
}

func (e *outcomeError) Unwrap() error { return e.err }
