package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// Processor is the inbox.Processor emails_reprocess calls: it enqueues the
// same stages the intake starts (or, to resume, the workflow stage alone),
// and the runs appear in the e-mail's record as they finish.
func (p *Pipeline) Processor() inbox.Processor { return reprocessor{p} }

type reprocessor struct{ p *Pipeline }

// CodeEmailRejected refuses to reprocess an e-mail the inbox's rules
// rejected (a sender not allowed or not authenticated, a filter, the
// attachment rules): no agent runs on it, reprocessed or not.
const CodeEmailRejected = "email_rejected"

// Check implements inbox.Processor. A restart needs the e-mail, not
// rejected, in an inbox that exists and has an agent that exists. A resume
// needs the e-mail's latest workflow run to be interrupted (and the e-mail
// to point at its agent run still).
func (r reprocessor) Check(ctx context.Context, req inbox.ReprocessRequest) error {
	_, _, err := r.check(ctx, r.p.repo, req)
	return err
}

// check is Check, returning the e-mail and, for a resume, the run to take up.
func (r reprocessor) check(ctx context.Context, repo inbox.Repo, req inbox.ReprocessRequest) (inbox.Email, *inbox.WorkflowRun, error) {
	e, err := repo.Emails.Get(ctx, req.Workspace, req.EmailID)
	if err != nil {
		return e, nil, err
	}
	if e.Status == inbox.EmailRejected {
		return e, nil, &inbox.Error{Code: CodeEmailRejected, Message: fmt.Sprintf("e-mail %s was rejected by its inbox's rules (%s); a rejected e-mail is recorded, never processed", e.ID, e.StatusDetail)}
	}
	switch req.Mode {
	case "", inbox.ReprocessRestart:
		return e, nil, r.checkAgent(ctx, repo, req.Workspace, e)
	case inbox.ReprocessResume:
		wr, err := r.resumable(ctx, repo, req.Workspace, e)
		return e, wr, err
	}
	return e, nil, inbox.Errorf("invalid_arguments", "mode %q is not a reprocess mode: %s or %s", req.Mode, inbox.ReprocessRestart, inbox.ReprocessResume)
}

// checkAgent says why the e-mail's agent cannot run again, if it cannot.
func (r reprocessor) checkAgent(ctx context.Context, repo inbox.Repo, ws string, e inbox.Email) error {
	ib, err := repo.Inboxes.Get(ctx, ws, e.InboxID)
	if errors.Is(err, store.ErrNotFound) {
		return inbox.Errorf(inbox.CodeNoInbox, "the inbox of e-mail %s no longer exists", e.ID)
	}
	if err != nil {
		return err
	}
	if ib.AgentID == "" {
		return inbox.Errorf(inbox.CodeNoAgent, "inbox %s has no agent; attach one with inboxes_update", ib.ID)
	}
	if _, err := repo.Agents.Get(ctx, ws, ib.AgentID); errors.Is(err, store.ErrNotFound) {
		return inbox.Errorf(inbox.CodeNoAgent, "the agent %s of inbox %s no longer exists", ib.AgentID, ib.ID)
	} else if err != nil {
		return err
	}
	return nil
}

// resumable returns the e-mail's latest workflow run when it can be
// resumed (runrecord.Resumable: interrupted, or a step unknown), and its
// agent run still the e-mail's.
func (r reprocessor) resumable(ctx context.Context, repo inbox.Repo, ws string, e inbox.Email) (*inbox.WorkflowRun, error) {
	if e.WorkflowRunID == "" {
		return nil, inbox.Errorf(inbox.CodeNotResumable, "e-mail %s has no workflow run to resume; reprocess it to run its agent again", e.ID)
	}
	wr, err := repo.WorkflowRuns.Get(ctx, ws, e.WorkflowRunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, inbox.Errorf(inbox.CodeNotResumable, "the workflow run %s of e-mail %s is not recorded yet (it is queued or being resumed)", e.WorkflowRunID, e.ID)
	}
	if err != nil {
		return nil, err
	}
	if !runrecord.Resumable(wr.Status, wr.Steps) || wr.AgentRunID != e.AgentRunID {
		return nil, inbox.Errorf(inbox.CodeNotResumable, "the latest workflow run %s of e-mail %s is %s, with no step whose outcome is unknown: only an interrupted run, or one whose step was sent and never answered, is resumed; reprocess the e-mail to run its workflow again", wr.ID, e.ID, wr.Status)
	}
	return &wr, nil
}

// Reprocess implements inbox.Processor: in one transaction the e-mail goes
// back to pending, email.reprocessed is recorded and the job is enqueued
// (its own job: a reprocess is never merged with another) — the agent job
// for a restart, the workflow job that resumes the interrupted run for a
// resume (the e-mail then points at the run the job will record, so a
// second resume is refused until that one has run).
func (r reprocessor) Reprocess(ctx context.Context, req inbox.ReprocessRequest) (inbox.Reprocessed, error) {
	if err := r.Check(ctx, req); err != nil {
		return inbox.Reprocessed{}, err
	}
	p := r.p
	request := inbox.NewID("rpr")
	err := p.cfg.Store.WithTx(ctx, func(tx store.Tx) error {
		repo := p.repo.In(tx)
		e, resume, err := r.check(ctx, repo, req)
		if err != nil {
			return err
		}
		payload := map[string]string{"email_id": e.ID, "request": request, "status": inbox.ReprocessQueued, "previous_agent_run_id": e.AgentRunID}
		var job queue.WorkflowArgs
		if resume != nil {
			job = queue.WorkflowArgs{Workspace: req.Workspace, AgentRunID: resume.AgentRunID, ResumeOf: resume.ID, Request: request}
			e.WorkflowRunID = resumeRunID(job)
			payload["mode"], payload["resume_of"] = inbox.ReprocessResume, resume.ID
		}
		e.Status, e.StatusDetail = inbox.EmailPending, ""
		e.NextAttemptAt = time.Time{} // a scheduled retry gives way to this run
		if err := repo.Emails.Put(ctx, req.Workspace, e); err != nil {
			return err
		}
		ev, err := inbox.NewEvent(inbox.EventEmailReprocessed, req.Actor, e.ID, payload, p.now())
		if err != nil {
			return err
		}
		if err := p.record(ctx, tx, req.Workspace, ev); err != nil {
			return err
		}
		if resume != nil {
			_, err = p.cfg.Queue.InsertTx(ctx, tx, job, nil)
			return err
		}
		_, err = p.cfg.Queue.InsertTx(ctx, tx, queue.AgentArgs{Workspace: req.Workspace, EmailID: e.ID, Request: request}, nil)
		return err
	})
	if err != nil {
		return inbox.Reprocessed{}, err
	}
	return inbox.Reprocessed{EmailID: req.EmailID, Status: inbox.ReprocessQueued}, nil
}
