package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

// workflowWorker runs the workflow stage: the workflow an agent run
// answered with.
type workflowWorker struct {
	river.WorkerDefaults[queue.WorkflowArgs]
	p *Pipeline
}

// Timeout bounds a run: the executor's run timeout, and time to record it.
func (w *workflowWorker) Timeout(*river.Job[queue.WorkflowArgs]) time.Duration {
	rt := w.p.cfg.Executor.RunTimeout
	if rt <= 0 {
		rt = executor.DefaultRunTimeout
	}
	return rt + time.Minute
}

// Work runs the agent run's workflow once — or resumes an interrupted run
// of it (WorkflowArgs.ResumeOf). The agent's document is read once, here:
// its plan runs, and its steps' labels name what an interrupted run did
// not run. The run's journal (storeJournal) commits the record before each
// request leaves and the step's outcome after. At the end, in one
// transaction: the redacted run record, the agent run and the e-mail's
// outcome, the events and their deliveries, and the job's completion. A
// job that runs again and finds the record running — its earlier attempt
// ended mid-run — records the run as interrupted and sends nothing; one
// the queue stops mid-run records it so at once, the same way.
func (w *workflowWorker) Work(ctx context.Context, job *river.Job[queue.WorkflowArgs]) error {
	p, a := w.p, job.Args
	run, err := p.repo.AgentRuns.Get(ctx, a.Workspace, a.AgentRunID)
	if errors.Is(err, store.ErrNotFound) {
		p.log.Info("pipeline: the agent run of a workflow job was deleted; nothing to do", "workspace", a.Workspace, "agent_run", a.AgentRunID)
		return nil
	}
	if err != nil {
		return err
	}
	wfID := run.WorkflowRunID
	if a.ResumeOf != "" {
		wfID = resumeRunID(a)
	} else if wfID == "" {
		wfID = workflowRunID(a.Workspace, run.ID)
	}
	answer := inbox.ReadAnswer(run.Output)
	prev, err := p.repo.WorkflowRuns.Get(ctx, a.Workspace, wfID)
	switch {
	case err == nil && prev.Status == runrecord.RunRunning:
		return w.interrupt(ctx, job, run, prev, answer.Plan)
	case err == nil:
		return nil // recorded by an earlier attempt
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	e, err := p.repo.Emails.Get(ctx, a.Workspace, run.EmailID)
	if errors.Is(err, store.ErrNotFound) {
		p.log.Info("pipeline: the e-mail of a workflow job was deleted; nothing is sent", "workspace", a.Workspace, "email", run.EmailID)
		return nil
	}
	if err != nil {
		return err
	}
	wr := inbox.WorkflowRun{ID: wfID, AgentRunID: run.ID, EmailID: e.ID, InboxID: e.InboxID, ResumeOf: a.ResumeOf, StartedAt: p.now()}
	base, resume, err := w.resumed(ctx, a)
	if err != nil {
		return err
	}
	if base == "" {
		base = wfID
	}
	rc, err := w.runContext(ctx, a.Workspace, e, run, wfID)
	if err != nil {
		return err
	}
	secrets, policy, err := p.userSecrets(ctx, a.Workspace)
	if err != nil {
		return err
	}
	msg, err := p.cfg.Raw.OpenMessage(ctx, a.Workspace, e.ID)
	if err != nil && !errors.Is(err, inbox.ErrPurged) {
		return fmt.Errorf("opening the raw message of e-mail %s: %w", e.ID, err)
	}
	if msg != nil {
		defer msg.Close()
	}
	var index *eml.Index
	if msg != nil && p.cfg.Index != nil {
		index, err = p.cfg.Index(ctx, a.Workspace, e.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("reading the part index of e-mail %s: %w", e.ID, err)
		}
	}
	hit("workflow.start")
	journal := newStoreJournal(ctx, p, a.Workspace, wr, base)
	journal.held = func(ctx context.Context, tx store.Tx) error { return queue.HeldTx(ctx, tx, job) }
	env := executor.Env{Secrets: resolve.SecretMap(secrets), Facts: resolve.FactMap(rc.Facts()), Attachments: attachments(msg, index, e),
		Journal: journal, Resume: resume, Policy: inbox.RunPolicy(policy, rc.Agent)}
	rec := answer.Run(ctx, p.executor, env)
	if journal.conflict {
		// Another worker started this run (a job rescued while its first
		// worker still ran): its record is the truth; this attempt sent
		// nothing and records nothing.
		return fmt.Errorf("workflow run %s was started by another worker; this attempt sent nothing", wfID)
	}
	wr.Status, wr.Steps, wr.Error = rec.Status, rec.Steps, rec.Error
	if len(rec.Diagnostics) > 0 {
		if wr.Diagnostics, err = json.Marshal(rec.Diagnostics); err != nil {
			return err
		}
	}
	wr.StartedAt, wr.FinishedAt = rec.StartedAt, rec.FinishedAt
	if errors.Is(ctx.Err(), context.Canceled) && unfinished(rec.Steps) {
		// Stopped mid-run: recorded as a restart would find it, at once.
		wr = interrupted(wr, answer.Plan, nil, p.now())
		p.log.Warn("pipeline: a workflow run was stopped mid-run; recorded as interrupted, nothing re-sent", "workspace", a.Workspace, "workflow_run", wr.ID)
	}
	hit("workflow.ran")
	// The requests were sent: record them even if the job is being stopped.
	life := ctx
	ctx = context.WithoutCancel(ctx)
	if err := w.finish(ctx, life, job, run, wr); err != nil {
		if journal.unrecorded != nil {
			// The next attempt finds the step still being sent and reads
			// here why.
			return fmt.Errorf("recording workflow run %s: %w; %w", wr.ID, journal.unrecorded, err)
		}
		return fmt.Errorf("recording workflow run %s: %w", wr.ID, err)
	}
	hit("workflow.committed")
	return nil
}

// resumed returns, for a job that resumes a run, the id its steps'
// identities derive from (that of the run its resume chain started from)
// and the run to take up; nothing for the agent run's own run.
func (w *workflowWorker) resumed(ctx context.Context, a queue.WorkflowArgs) (string, *executor.Resume, error) {
	if a.ResumeOf == "" {
		return "", nil, nil
	}
	prior, err := w.p.repo.WorkflowRuns.Get(ctx, a.Workspace, a.ResumeOf)
	if err != nil {
		return "", nil, fmt.Errorf("reading workflow run %s, which this run resumes: %w", a.ResumeOf, err)
	}
	base := prior.ID
	for hops, from := 0, prior.ResumeOf; from != "" && hops < 100; hops++ {
		r, err := w.p.repo.WorkflowRuns.Get(ctx, a.Workspace, from)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return "", nil, err
		}
		base, from = r.ID, r.ResumeOf
	}
	return base, &executor.Resume{RunID: prior.ID, Steps: prior.Steps}, nil
}

// runContext gathers the kobana.* facts of a run from its records.
func (w *workflowWorker) runContext(ctx context.Context, ws string, e inbox.Email, run inbox.AgentRun, wfID string) (inbox.RunContext, error) {
	p := w.p
	rc := inbox.RunContext{AppURL: p.cfg.AppURL, Email: e, AgentRunID: run.ID, WorkflowRunID: wfID}
	w2, err := p.repo.Workspaces.Get(ctx, ws, ws)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rc, err
	}
	if errors.Is(err, store.ErrNotFound) {
		w2 = inbox.Workspace{ID: ws}
	}
	rc.Workspace, rc.Environment = w2, p.cfg.Environment
	ib, err := p.repo.Inboxes.Get(ctx, ws, e.InboxID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rc, err
	}
	if errors.Is(err, store.ErrNotFound) {
		ib = inbox.Inbox{ID: e.InboxID}
	}
	rc.Inbox = ib
	ag, err := p.repo.Agents.Get(ctx, ws, run.AgentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rc, err
	}
	if errors.Is(err, store.ErrNotFound) {
		ag = inbox.Agent{ID: run.AgentID}
	}
	rc.Agent = ag
	return rc, nil
}

// attachments opens the e-mail's attachments over the run's one snapshot of
// its raw message, with the part index stored when it arrived when there is
// one (only the ranges a step sends are read); a purged message fails every
// step that uses an attachment before it is sent, saying so.
func attachments(msg inbox.Message, index *eml.Index, e inbox.Email) resolve.AttachmentsFunc {
	if msg == nil {
		return func() (resolve.Attachments, error) {
			when := ""
			if !e.PurgedAt.IsZero() {
				when = " on " + e.PurgedAt.UTC().Format("2006-01-02")
			}
			return nil, fmt.Errorf("%w: the raw message of e-mail %s was purged by retention%s, so its attachments can no longer be read", eml.ErrUnreadable, e.ID, when)
		}
	}
	open := resolve.EMLIndexed(msg, msg.Size(), index)
	return func() (resolve.Attachments, error) {
		a, err := open()
		if err != nil {
			return nil, fmt.Errorf("reading e-mail %s: %w", e.ID, err)
		}
		return a, nil
	}
}

// finish writes the outcome of a workflow run in one transaction: the run
// record, the agent run (failed when the workflow failed), the e-mail's
// status, the events and their deliveries, and the job's completion. While
// the store refuses writes it waits for as long as life (the job) lasts.
func (w *workflowWorker) finish(ctx, life context.Context, job *river.Job[queue.WorkflowArgs], run inbox.AgentRun, wr inbox.WorkflowRun) error {
	p, ws := w.p, job.Args.Workspace
	err := p.commitWithin(ctx, life, func(tx store.Tx) error {
		repo := p.repo.In(tx)
		if err := repo.WorkflowRuns.Put(ctx, ws, wr); err != nil {
			return err
		}
		run, err := repo.AgentRuns.Get(ctx, ws, run.ID)
		if err != nil {
			return err
		}
		run.WorkflowRunID = wr.ID
		switch wr.Status {
		case runrecord.RunInterrupted:
			run.Status, run.Cause, run.Error = inbox.RunFailed, inbox.CauseInterrupted, wr.Error
		case runrecord.RunFailed:
			run.Status, run.Cause, run.Error = inbox.RunFailed, inbox.CauseWorkflowFailed, "one or more workflow steps failed or were skipped"
			if outcomeUnrecorded(wr.Steps) {
				run.Cause = inbox.CauseOutcomeNotRecorded
			}
			if wr.Error != "" {
				run.Error = wr.Error
			}
		case runrecord.RunSucceeded:
			if run.Cause == inbox.CauseInterrupted || run.Cause == inbox.CauseWorkflowFailed || run.Cause == inbox.CauseOutcomeNotRecorded {
				// A resumed run succeeded: the agent run's failure was its
				// workflow's.
				run.Status, run.Cause, run.Error = inbox.RunSucceeded, "", ""
			}
		}
		if err := repo.AgentRuns.Put(ctx, ws, run); err != nil {
			return err
		}
		e, err := repo.Emails.Get(ctx, ws, run.EmailID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err == nil {
			// A later reprocess may have moved the e-mail on: only the run it
			// points at sets its status.
			if e.AgentRunID == run.ID {
				e.ApplyRun(run)
				if err := repo.Emails.Put(ctx, ws, e); err != nil {
					return err
				}
			}
			events, err := runEvents(run, &wr, e, p.now())
			if err != nil {
				return err
			}
			for _, ev := range events {
				if err := p.record(ctx, tx, ws, ev); err != nil {
					return err
				}
			}
		}
		return queue.CompleteTx(ctx, tx, job)
	})
	if err == nil {
		p.observer().WorkflowRun(ws, wr)
	}
	return err
}

// interrupt records a run its earlier attempt left running: the step that
// was being sent is unknown, the ones after it were not run, and nothing is
// sent again. When every step had ended, the run is recorded as it ended
// (complete). The job's errors say whether the earlier attempt ended with
// the step's outcome unrecorded rather than by a stop.
func (w *workflowWorker) interrupt(ctx context.Context, job *river.Job[queue.WorkflowArgs], run inbox.AgentRun, wr inbox.WorkflowRun, plan *compile.Plan) error {
	p := w.p
	if ended(wr.Steps, plan) {
		return w.complete(ctx, job, run, wr)
	}
	wr = interrupted(wr, plan, unrecordedStep(job), p.now())
	if wr.Status == runrecord.RunInterrupted {
		p.log.Warn("pipeline: a workflow run was interrupted; recorded as interrupted, nothing re-sent", "workspace", job.Args.Workspace, "workflow_run", wr.ID)
	} else {
		p.log.Warn("pipeline: a sent step's outcome could not be recorded; the run is recorded failed with that step unknown, nothing re-sent", "workspace", job.Args.Workspace, "workflow_run", wr.ID)
	}
	if err := w.finish(context.WithoutCancel(ctx), ctx, job, run, wr); err != nil {
		return fmt.Errorf("recording interrupted workflow run %s: %w", wr.ID, err)
	}
	hit("workflow.interrupted")
	return nil
}

// complete records a run its earlier attempt left running after every step
// had been recorded (the process stopped before the final commit): its
// outcome is known, so it is recorded as it was, and nothing is sent.
func (w *workflowWorker) complete(ctx context.Context, job *river.Job[queue.WorkflowArgs], run inbox.AgentRun, wr inbox.WorkflowRun) error {
	wr.Status, wr.InFlight, wr.FinishedAt = runrecord.Outcome(wr.Steps), nil, w.p.now()
	w.p.log.Warn("pipeline: a workflow run had sent every step when its process stopped; its outcome is recorded now, nothing re-sent", "workspace", job.Args.Workspace, "workflow_run", wr.ID)
	if err := w.finish(context.WithoutCancel(ctx), ctx, job, run, wr); err != nil {
		return fmt.Errorf("recording workflow run %s: %w", wr.ID, err)
	}
	hit("workflow.interrupted")
	return nil
}

// ended reports whether every step of plan has an outcome in steps.
func ended(steps []runrecord.Step, plan *compile.Plan) bool {
	return plan != nil && len(steps) >= len(plan.Steps) && !unfinished(steps)
}

// unfinished reports whether a step of steps is being sent, is unknown or
// was left unrun.
func unfinished(steps []runrecord.Step) bool {
	for _, s := range steps {
		if s.State == runrecord.Sending || s.State == runrecord.Unknown || notRun(s) {
			return true
		}
	}
	return false
}

// notRun reports whether a step was never sent because its run ended
// before it (or could not record it).
func notRun(s runrecord.Step) bool {
	return s.State == runrecord.Skipped && s.Reason == runrecord.ReasonCancelled || s.Reason == runrecord.ReasonNotRecorded && s.State != runrecord.Unknown
}

// interrupted is the record of a run that a stop or a crash ended: the
// steps that ended keep their outcome; a step still being sent becomes
// unknown — because the server stopped, or, when unrecorded says so,
// because its outcome could not be recorded after its response arrived —
// and a step already unknown stays so; the steps after them were not run.
// The run is interrupted when the server stopped, failed (an unknown step,
// resumable) when it was the outcome's record that failed. The run's error
// says what happened and what the user can do.
func interrupted(wr inbox.WorkflowRun, plan *compile.Plan, unrecorded *string, now time.Time) inbox.WorkflowRun {
	var steps []runrecord.Step
	unknown := -1
	for _, s := range wr.Steps {
		if notRun(s) {
			break
		}
		if s.State == runrecord.Sending {
			s.State, s.Reason = runrecord.Unknown, runrecord.ReasonInterrupted
			s.Error = "the server stopped while this request was being sent: the receiver may or may not have got it, and it was not sent again"
			if unrecorded != nil {
				s.Reason = runrecord.ReasonOutcomeNotRecorded
				s.Error = "the request was sent and its response arrived, but recording its outcome failed (" + *unrecorded +
					"): whether the receiver acted on it is not recorded, and it was not sent again"
			}
		}
		if s.State == runrecord.Unknown && unknown < 0 {
			unknown = len(steps)
		}
		steps = append(steps, s)
	}
	done := len(steps)
	total := done
	if plan != nil {
		total = max(total, len(plan.Steps))
		for i := len(steps); i < len(plan.Steps); i++ {
			steps = append(steps, runrecord.Step{Index: i, Label: plan.Steps[i].Label, State: runrecord.Skipped, Reason: runrecord.ReasonCancelled,
				Error: "not run: the run was interrupted before this step"})
		}
	}
	if steps == nil {
		steps = []runrecord.Step{}
	}
	const next = " Resume the run (emails_reprocess with mode resume) to send it again with the same Idempotency-Key, or reprocess the e-mail to run the workflow again."
	wr.Steps, wr.Status, wr.InFlight, wr.FinishedAt = steps, runrecord.RunInterrupted, nil, now
	switch {
	case unknown >= 0 && steps[unknown].Reason == runrecord.ReasonOutcomeNotRecorded:
		wr.Status = runrecord.RunFailed
		wr.Error = fmt.Sprintf("the outcome of step %d of %d could not be recorded after its response arrived; whether its receiver acted on it is not recorded, so nothing was sent again.%s", steps[unknown].Index, total, next)
	case unknown >= 0:
		wr.Error = fmt.Sprintf("the server stopped while step %d of %d was being sent; whether its receiver got it is unknown, so nothing was sent again.%s", steps[unknown].Index, total, next)
	default:
		wr.Error = fmt.Sprintf("the server stopped during the run, between requests (%d of %d steps done); nothing was sent again. Resume the run (emails_reprocess with mode resume) to send the rest, or reprocess the e-mail to run the workflow again.", done, total)
	}
	return wr
}

// outcomeUnrecorded reports whether a step of steps is unknown because its
// outcome could not be recorded.
func outcomeUnrecorded(steps []runrecord.Step) bool {
	for _, s := range steps {
		if s.State == runrecord.Unknown && s.Reason == runrecord.ReasonOutcomeNotRecorded {
			return true
		}
	}
	return false
}

// unrecordedStep returns the text of the earlier attempt's error when that
// attempt ended because a sent step's outcome could not be recorded (see
// outcomeError), or nil: then the attempt did not end by itself — its
// process stopped.
func unrecordedStep(job *river.Job[queue.WorkflowArgs]) *string {
	for i := len(job.Errors) - 1; i >= 0; i-- {
		e := job.Errors[i]
		if e.Attempt != job.Attempt-1 {
			break
		}
		if _, after, ok := strings.Cut(e.Error, outcomeNotRecorded); ok {
			why := strings.TrimSpace(outcomeNotRecorded + after)
			return &why
		}
	}
	return nil
}
