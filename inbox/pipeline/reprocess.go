package pipeline

import (
	"context"
	"fmt"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/inbox/queue"
	"github.com/kobana/workflow/store"
)

// Processor is the inbox.Processor emails_reprocess calls when the stages
// run on the queue: it enqueues the same stages the intake starts, and the
// runs appear in the e-mail's record as they finish.
func (p *Pipeline) Processor() inbox.Processor { return reprocessor{p} }

type reprocessor struct{ p *Pipeline }

// CodeEmailRejected refuses to reprocess an e-mail the inbox's rules
// rejected (a sender not allowed or not authenticated, a filter, the
// attachment rules): no agent runs on it, reprocessed or not.
const CodeEmailRejected = "email_rejected"

// Check implements inbox.Processor: the e-mail exists and was not rejected,
// its inbox exists and has an agent (otherwise the same refusals as
// inbox.Inline).
func (r reprocessor) Check(ctx context.Context, req inbox.ReprocessRequest) error {
	if err := (&inbox.Inline{Store: r.p.cfg.Store}).Check(ctx, req); err != nil {
		return err
	}
	e, err := r.p.repo.Emails.Get(ctx, req.Workspace, req.EmailID)
	if err != nil {
		return err
	}
	if e.Status == inbox.EmailRejected {
		return &inbox.Error{Code: CodeEmailRejected, Message: fmt.Sprintf("e-mail %s was rejected by its inbox's rules (%s); a rejected e-mail is recorded, never processed", e.ID, e.StatusDetail)}
	}
	return nil
}

// Reprocess implements inbox.Processor: in one transaction the e-mail goes
// back to pending, email.reprocessed is recorded and the agent job is
// enqueued (its own job: a reprocess is never merged with another).
func (r reprocessor) Reprocess(ctx context.Context, req inbox.ReprocessRequest) (inbox.Reprocessed, error) {
	if err := r.Check(ctx, req); err != nil {
		return inbox.Reprocessed{}, err
	}
	p := r.p
	request := inbox.NewID("rpr")
	err := p.cfg.Store.WithTx(ctx, func(tx store.Tx) error {
		repo := p.repo.In(tx)
		e, err := repo.Emails.Get(ctx, req.Workspace, req.EmailID)
		if err != nil {
			return err
		}
		e.Status, e.StatusDetail = inbox.EmailPending, ""
		if err := repo.Emails.Put(ctx, req.Workspace, e); err != nil {
			return err
		}
		ev, err := inbox.NewEvent(inbox.EventEmailReprocessed, req.Actor, e.ID,
			map[string]string{"email_id": e.ID, "request": request, "status": inbox.ReprocessQueued, "previous_agent_run_id": e.AgentRunID}, p.now())
		if err != nil {
			return err
		}
		if err := p.record(ctx, tx, req.Workspace, ev); err != nil {
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
