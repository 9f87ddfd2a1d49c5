package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// agentWorker runs the agent stage: one agent run on one e-mail.
type agentWorker struct {
	river.WorkerDefaults[queue.AgentArgs]
	p *Pipeline
}

// Work runs the inbox's agent on the e-mail and writes, in one transaction,
// the agent run, the e-mail's new state, the events, their webhook
// deliveries, the workflow job when the agent answered with a workflow, and
// the job's completion. A job that runs again after a crash finds the run it
// committed and does nothing; one that crashed before committing runs the
// agent again (nothing outside was done yet: a model call has no effect but
// its cost).
//
// Waiting for the model holds no database connection or transaction: the
// reads before the call each return theirs, the raw message is read only by
// an agent with file inputs and then from a copy (message), and the run is
// written after the answer. River does not hold one either while Work runs
// (v0.51.2: the producer fetches a batch of jobs with one query, then runs
// each job's executor in a goroutine of its own, and a completer records
// the outcomes afterwards), so the agent queue's workers can be as many as
// the model endpoints allow calls in flight.
func (w *agentWorker) Work(ctx context.Context, job *river.Job[queue.AgentArgs]) error {
	p, a := w.p, job.Args
	runID := agentRunID(a)
	if _, err := p.repo.AgentRuns.Get(ctx, a.Workspace, runID); err == nil {
		return nil // committed by an earlier attempt
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	e, err := p.repo.Emails.Get(ctx, a.Workspace, a.EmailID)
	if errors.Is(err, store.ErrNotFound) {
		p.log.Info("pipeline: the e-mail of an agent job was deleted; nothing to do", "workspace", a.Workspace, "email", a.EmailID)
		return nil
	}
	if err != nil {
		return err
	}
	if e.Status == inbox.EmailRejected {
		p.log.Warn("pipeline: an agent job for a rejected e-mail; no agent runs on it", "workspace", a.Workspace, "email", e.ID)
		return nil
	}
	if a.Retry > 0 && (e.AgentRunID != a.After || e.NextAttemptAt.IsZero()) {
		// Reprocessed, or otherwise run again, since this retry was
		// scheduled: that run is the e-mail's now.
		p.log.Info("pipeline: a scheduled agent retry was superseded; nothing to do", "workspace", a.Workspace, "email", e.ID, "retry", a.Retry)
		return nil
	}
	hit("agent.start")
	ib, ag, reason, err := w.subjects(ctx, a.Workspace, e)
	if err != nil {
		return err
	}
	if reason != nil {
		return w.cannotRun(ctx, job, e, reason)
	}
	ws, err := p.repo.Workspaces.Get(ctx, a.Workspace, a.Workspace)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if errors.Is(err, store.ErrNotFound) {
		ws = inbox.Workspace{ID: a.Workspace}
	}
	msg, err := w.message(ctx, a.Workspace, e.ID, ag)
	if err != nil {
		return err
	}
	if msg != nil {
		defer msg.Close()
	}
	secrets, policy, err := p.userSecrets(ctx, a.Workspace)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(secrets))
	for n := range secrets {
		names = append(names, n)
	}
	slices.Sort(names)
	var prev *inbox.AgentRun
	if a.Request != "" {
		if prev, err = inbox.LatestOutput(ctx, p.repo, a.Workspace, e.AgentRunID, ag.ID); err != nil {
			return err
		}
	}
	started := p.now()
	res, err := p.cfg.Agents.RunAgent(ctx, inbox.AgentInput{Workspace: ws, Inbox: ib, Agent: ag, Email: e, Message: msg, SecretNames: names,
		Policy: inbox.RunPolicy(policy, ag), Previous: prev})
	if err != nil {
		if job.Attempt < job.MaxAttempts {
			p.log.Warn("pipeline: the agent could not run; the job will be retried", "workspace", a.Workspace, "email", e.ID, "attempt", job.Attempt, "err", err)
			return fmt.Errorf("running agent %s on e-mail %s: %w", ag.ID, e.ID, err)
		}
		res = inbox.AgentResult{Status: inbox.RunFailed, Cause: inbox.CauseProviderError,
			Error: fmt.Sprintf("the agent could not be run after %d attempts: %v", job.Attempt, err)}
	}
	run, answer := inbox.NewAgentRun(ag, e, res, started)
	run.ID = runID
	if prev != nil {
		run.ReprocessOf = prev.ID
	} else if a.Request != "" {
		run.ReprocessOf = e.AgentRunID
	}
	run.Retry = a.Retry
	var next *queue.AgentArgs
	if run.Status == inbox.RunFailed && res.IsTransient() {
		if a.Retry < len(p.agentSchedule) {
			run.NextAttemptAt = p.now().Add(p.jittered(p.agentSchedule[a.Retry], e.ID, a.Retry+1)).UTC()
			next = &queue.AgentArgs{Workspace: a.Workspace, EmailID: e.ID, Request: a.Request, Retry: a.Retry + 1, After: run.ID}
		} else if len(p.agentSchedule) > 0 {
			run.Error += fmt.Sprintf("; the e-mail was tried %d times on the retry schedule and is not tried again", a.Retry+1)
		}
	}
	hasWorkflow := run.Status == inbox.RunSucceeded && answer.Workflow
	if hasWorkflow {
		run.WorkflowRunID = workflowRunID(a.Workspace, run.ID)
	}
	run.FinishedAt = p.now()
	hit("agent.ran")
	// The model has answered: record it even if the job is being stopped.
	ctx = context.WithoutCancel(ctx)
	err = p.commit(ctx, func(tx store.Tx) error {
		repo := p.repo.In(tx)
		if err := repo.AgentRuns.Create(ctx, a.Workspace, run); err != nil {
			return err
		}
		e, err := repo.Emails.Get(ctx, a.Workspace, a.EmailID)
		if err != nil {
			return err
		}
		var events []inbox.SystemEvent
		if next != nil {
			return p.waitForRetry(ctx, tx, job, e, run, *next)
		}
		if hasWorkflow {
			// The e-mail stays pending until its workflow has run.
			e.AgentRunID, e.WorkflowRunID = run.ID, run.WorkflowRunID
		} else {
			e.ApplyRun(run)
			events, err = runEvents(run, nil, e, p.now())
			if err != nil {
				return err
			}
		}
		if err := repo.Emails.Put(ctx, a.Workspace, e); err != nil {
			return err
		}
		for _, ev := range events {
			if err := p.record(ctx, tx, a.Workspace, ev); err != nil {
				return err
			}
		}
		if hasWorkflow {
			if _, err := p.cfg.Queue.InsertTx(ctx, tx, queue.WorkflowArgs{Workspace: a.Workspace, AgentRunID: run.ID}, nil); err != nil {
				return err
			}
		}
		return queue.CompleteTx(ctx, tx, job)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil // another worker committed this run meanwhile
	}
	if err != nil {
		return fmt.Errorf("recording agent run %s of e-mail %s: %w", run.ID, e.ID, err)
	}
	hit("agent.committed")
	p.observer().AgentRun(a.Workspace, run)
	return nil
}

// message returns the e-mail's raw message for an agent that reads its
// attachments (file inputs), nil for any other agent or when the message
// was purged. The store's snapshot may hold a database connection (a
// PostgreSQL large object is read in a transaction): it is copied to an
// unlinked temporary file and closed before the model is called, so that a
// run waiting on the model holds no connection. The caller closes it.
func (w *agentWorker) message(ctx context.Context, ws, emailID string, ag inbox.Agent) (inbox.Message, error) {
	if !ag.Settings.FileInputs {
		return nil, nil
	}
	snap, err := w.p.cfg.Raw.OpenMessage(ctx, ws, emailID)
	if errors.Is(err, inbox.ErrPurged) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the raw message of e-mail %s: %w", emailID, err)
	}
	defer snap.Close()
	f, err := os.CreateTemp("", "kobana-agent-*.eml")
	if err != nil {
		return nil, fmt.Errorf("copying the raw message of e-mail %s for its agent: %w", emailID, err)
	}
	os.Remove(f.Name()) // the file lives until closed
	if _, err := io.Copy(f, inbox.MessageReader(snap)); err != nil {
		f.Close()
		return nil, fmt.Errorf("copying the raw message of e-mail %s for its agent: %w", emailID, err)
	}
	return fileMessage{f, snap.Size()}, nil
}

// fileMessage is a copy of a raw message in a file of its own.
type fileMessage struct {
	*os.File
	size int64
}

func (m fileMessage) Size() int64 { return m.size }

// subjects returns the e-mail's inbox and agent, or why the agent cannot
// run on it (a *inbox.Rejection-like reason recorded on the e-mail).
func (w *agentWorker) subjects(ctx context.Context, ws string, e inbox.Email) (inbox.Inbox, inbox.Agent, *inbox.Error, error) {
	p := w.p
	ib, err := p.repo.Inboxes.Get(ctx, ws, e.InboxID)
	if errors.Is(err, store.ErrNotFound) {
		return ib, inbox.Agent{}, &inbox.Error{Code: inbox.CodeNoInbox, Message: "the inbox " + e.InboxID + " of this e-mail no longer exists"}, nil
	}
	if err != nil {
		return ib, inbox.Agent{}, nil, err
	}
	if ib.AgentID == "" {
		return ib, inbox.Agent{}, &inbox.Error{Code: inbox.CodeNoAgent, Message: "the inbox " + ib.ID + " has no agent; attach one, then reprocess the e-mail"}, nil
	}
	ag, err := p.repo.Agents.Get(ctx, ws, ib.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return ib, ag, &inbox.Error{Code: inbox.CodeNoAgent, Message: "the agent " + ib.AgentID + " of inbox " + ib.ID + " no longer exists"}, nil
	}
	if err != nil {
		return ib, ag, nil, err
	}
	if ag.Status == inbox.StatusPaused {
		return ib, ag, &inbox.Error{Code: inbox.CodeAgentPaused, Message: "the agent " + ag.ID + " is paused; resume it, then reprocess the e-mail"}, nil
	}
	return ib, ag, nil, nil
}

// cannotRun records that the e-mail cannot be processed as things are (no
// inbox, no agent, a paused agent): failed, with the reason and an event.
func (w *agentWorker) cannotRun(ctx context.Context, job *river.Job[queue.AgentArgs], e inbox.Email, why *inbox.Error) error {
	p, a := w.p, job.Args
	return p.commit(ctx, func(tx store.Tx) error {
		repo := p.repo.In(tx)
		e, err := repo.Emails.Get(ctx, a.Workspace, e.ID)
		if err != nil {
			return err
		}
		e.Status, e.StatusDetail = inbox.EmailFailed, why.Code+": "+why.Message
		if err := repo.Emails.Put(ctx, a.Workspace, e); err != nil {
			return err
		}
		ev, err := inbox.NewEvent(inbox.EventEmailFailed, inbox.ActorSystem, e.ID,
			map[string]string{"email_id": e.ID, "inbox_id": e.InboxID, "cause": why.Code, "error": why.Message}, p.now())
		if err != nil {
			return err
		}
		if err := p.record(ctx, tx, a.Workspace, ev); err != nil {
			return err
		}
		return queue.CompleteTx(ctx, tx, job)
	})
}

// runEvents are the events of an e-mail whose processing ended, in the
// order they happened: the workflow run's failure, the agent run's failure
// (a failed workflow fails its agent run), and the e-mail's outcome. Their
// payloads are what webhooks receive.
func runEvents(run inbox.AgentRun, wr *inbox.WorkflowRun, e inbox.Email, at time.Time) ([]inbox.SystemEvent, error) {
	var out []inbox.SystemEvent
	add := func(typ, subject string, payload any) error {
		ev, err := inbox.NewEvent(typ, inbox.ActorSystem, subject, payload, at)
		out = append(out, ev)
		return err
	}
	if wr != nil && wr.Status != runrecord.RunSucceeded {
		if err := add(inbox.EventWorkflowRunFailed, wr.ID, inbox.WorkflowRunFailed{WorkflowRunID: wr.ID, AgentRunID: run.ID,
			EmailID: e.ID, InboxID: e.InboxID, Status: wr.Status, Error: wr.Error, FailedSteps: runrecord.NotSucceeded(wr.Steps)}); err != nil {
			return nil, err
		}
	}
	if run.Status != inbox.RunSucceeded {
		if err := add(inbox.EventAgentRunFailed, run.ID, map[string]any{"agent_run_id": run.ID, "agent_id": run.AgentID,
			"email_id": e.ID, "inbox_id": e.InboxID, "cause": run.Cause, "error": run.Error}); err != nil {
			return nil, err
		}
	}
	payload := map[string]any{"email_id": e.ID, "inbox_id": e.InboxID, "agent_run_id": run.ID}
	if run.WorkflowRunID != "" {
		payload["workflow_run_id"] = run.WorkflowRunID
	}
	if e.Status == inbox.EmailProcessed {
		if r := result(run.Output); r != nil {
			payload["result"] = r
		}
		return out, add(inbox.EventEmailProcessed, e.ID, payload)
	}
	payload["cause"], payload["error"] = run.Cause, run.Error
	return out, add(inbox.EventEmailFailed, e.ID, payload)
}

// result is the agent's result, for the e-mail's processed event.
func result(output json.RawMessage) json.RawMessage {
	var doc struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(output, &doc) != nil || len(doc.Result) == 0 {
		return nil
	}
	return doc.Result
}

// waitForRetry records, in tx, a run that failed for a cause that may
// pass: the e-mail stays pending, pointing at the run and saying when its
// agent runs again; a system event says so; the retry's job is scheduled
// then; and this job completes — all or nothing.
func (p *Pipeline) waitForRetry(ctx context.Context, tx store.Tx, job *river.Job[queue.AgentArgs], e inbox.Email, run inbox.AgentRun, next queue.AgentArgs) error {
	repo := p.repo.In(tx)
	e.AgentRunID, e.WorkflowRunID = run.ID, ""
	e.Status = inbox.EmailPending
	e.NextAttemptAt = run.NextAttemptAt
	e.StatusDetail = fmt.Sprintf("waiting: %s; the agent runs again at %s (attempt %d of %d)",
		run.Cause, run.NextAttemptAt.Format(time.RFC3339), next.Retry+1, len(p.agentSchedule)+1)
	if err := repo.Emails.Put(ctx, job.Args.Workspace, e); err != nil {
		return err
	}
	ev, err := inbox.NewEvent(inbox.EventAgentRunRetryScheduled, inbox.ActorSystem, run.ID, map[string]any{
		"agent_run_id": run.ID, "agent_id": run.AgentID, "email_id": e.ID, "inbox_id": e.InboxID,
		"cause": run.Cause, "error": run.Error, "retry": next.Retry, "next_attempt_at": run.NextAttemptAt}, p.now())
	if err != nil {
		return err
	}
	if err := p.record(ctx, tx, job.Args.Workspace, ev); err != nil {
		return err
	}
	if _, err := p.cfg.Queue.InsertTx(ctx, tx, next, &river.InsertOpts{ScheduledAt: run.NextAttemptAt}); err != nil {
		return err
	}
	return queue.CompleteTx(ctx, tx, job)
}
