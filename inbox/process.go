package inbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kobana/workflow/store"
)

// Error is a refusal the domain explains to people with a stable code, for
// callers that branch on it (the MCP product turns it into a tool error).
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Codes of Error.
const (
	// CodeNoInbox: the e-mail's inbox no longer exists.
	CodeNoInbox = "no_inbox"
	// CodeNoAgent: the inbox has no agent, or its agent no longer exists.
	CodeNoAgent = "no_agent"
	// CodeWorkflowRunnerUnavailable: the agent answered with a workflow and
	// nothing here can run it.
	CodeWorkflowRunnerUnavailable = "workflow_runner_unavailable"
)

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ReprocessRequest asks for an e-mail to be run through its inbox's agent
// (and the workflow it answers with) again.
type ReprocessRequest struct {
	Workspace string
	EmailID   string
	// Actor is who asked (PersonActor), for the event log.
	Actor string
}

// ReprocessQueued is the status of a reprocess that was enqueued rather
// than run: its runs appear later in the e-mail's record.
const ReprocessQueued = "queued"

// Reprocessed is the outcome of a reprocess.
type Reprocessed struct {
	EmailID string `json:"email_id"`
	// Status is the agent run's status (succeeded, failed), or queued.
	Status string `json:"status"`
	// AgentRun is the new agent run; absent when queued.
	AgentRun *AgentRun `json:"agent_run,omitempty"`
	// WorkflowRun is the new workflow run, when the agent answered with a
	// workflow.
	WorkflowRun *WorkflowRun `json:"workflow_run,omitempty"`
}

// Processor runs e-mails through their inbox's agent again. The MCP
// product's emails_reprocess calls it after the user confirmed; Inline does
// the work in the call, a queue-backed pipeline enqueues the same stages.
type Processor interface {
	// Reprocess runs (or enqueues) the stages for one e-mail. A *NotFoundError
	// for an e-mail that does not exist, an *Error for one that cannot be
	// processed as it is.
	Reprocess(ctx context.Context, req ReprocessRequest) (Reprocessed, error)
	// Check reports, without changing anything, whether Reprocess would
	// start: the same errors, so a confirmation is only asked for a call
	// that can run.
	Check(ctx context.Context, req ReprocessRequest) error
}

// Inline is the Processor that runs the agent and the workflow within the
// call and records the runs, the e-mail's new status and an event.
type Inline struct {
	// Store holds the records and the secrets; the records a reprocess
	// writes (the runs, the e-mail's new state, the event) are committed in
	// one transaction.
	Store    store.Store
	Messages Messages
	// Agents runs agents; nil means ReplayRunner.
	Agents AgentRunner
	// Workflows runs workflows; nil refuses a reprocess whose agent answered
	// with a workflow (CodeWorkflowRunnerUnavailable) and records nothing.
	Workflows WorkflowRunner
	// Environment is kobana.env; empty means "development".
	Environment string
	// AppURL is kobana.app_url.
	AppURL string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (p *Inline) now() time.Time {
	if p.Now != nil {
		return p.Now().UTC()
	}
	return time.Now().UTC()
}

// subjects are the records a reprocess works on.
type subjects struct {
	email Email
	inbox Inbox
	agent Agent
}

func (p *Inline) load(ctx context.Context, req ReprocessRequest) (subjects, error) {
	var s subjects
	repo := NewRepo(p.Store)
	e, err := repo.Emails.Get(ctx, req.Workspace, req.EmailID)
	if err != nil {
		return s, err
	}
	ib, err := repo.Inboxes.Get(ctx, req.Workspace, e.InboxID)
	if errors.Is(err, store.ErrNotFound) {
		return s, errorf(CodeNoInbox, "the inbox of e-mail %s no longer exists", e.ID)
	}
	if err != nil {
		return s, err
	}
	if ib.AgentID == "" {
		return s, errorf(CodeNoAgent, "inbox %s has no agent; attach one with inboxes_update", ib.ID)
	}
	ag, err := repo.Agents.Get(ctx, req.Workspace, ib.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return s, errorf(CodeNoAgent, "the agent %s of inbox %s no longer exists", ib.AgentID, ib.ID)
	}
	if err != nil {
		return s, err
	}
	return subjects{e, ib, ag}, nil
}

// Check implements Processor.
func (p *Inline) Check(ctx context.Context, req ReprocessRequest) error {
	_, err := p.load(ctx, req)
	return err
}

// Reprocess implements Processor.
func (p *Inline) Reprocess(ctx context.Context, req ReprocessRequest) (Reprocessed, error) {
	s, err := p.load(ctx, req)
	if err != nil {
		return Reprocessed{}, err
	}
	e, ib, ag := s.email, s.inbox, s.agent
	repo := NewRepo(p.Store)
	w, err := repo.Workspaces.Get(ctx, req.Workspace, req.Workspace)
	if err != nil {
		return Reprocessed{}, err
	}
	msg, err := p.Messages.OpenMessage(ctx, req.Workspace, e.ID)
	if err != nil && !errors.Is(err, ErrPurged) {
		return Reprocessed{}, err
	}
	if msg != nil {
		defer msg.Close()
	}
	secrets, err := p.userSecrets(ctx, req.Workspace)
	if err != nil {
		return Reprocessed{}, err
	}
	prev, err := LatestOutput(ctx, repo, req.Workspace, e.AgentRunID, ag.ID)
	if err != nil {
		return Reprocessed{}, err
	}
	agents := p.Agents
	if agents == nil {
		agents = ReplayRunner{}
	}
	names := make([]string, 0, len(secrets))
	for n := range secrets {
		names = append(names, n)
	}
	slices.Sort(names)
	started := p.now()
	res, err := agents.RunAgent(ctx, AgentInput{Workspace: w, Inbox: ib, Agent: ag, Email: e, Message: msg, SecretNames: names, Previous: prev})
	if err != nil {
		return Reprocessed{}, fmt.Errorf("running agent %s: %w", ag.ID, err)
	}
	run := NewAgentRun(ag, e, res, started)
	if prev != nil {
		run.ReprocessOf = prev.ID
	}
	var wrun *WorkflowRun
	if run.Status == RunSucceeded && HasWorkflow(run.Output) {
		if p.Workflows == nil {
			return Reprocessed{}, errorf(CodeWorkflowRunnerUnavailable, "this server has no workflow executor configured; the agent answered with a workflow that cannot run here")
		}
		wr := WorkflowRun{ID: NewID("wrun"), AgentRunID: run.ID, EmailID: e.ID, InboxID: ib.ID, StartedAt: p.now()}
		rc := RunContext{Environment: p.environment(), AppURL: p.AppURL, Workspace: w, Inbox: ib, Email: e, Agent: ag, AgentRunID: run.ID, WorkflowRunID: wr.ID}
		record, err := p.Workflows.RunWorkflow(ctx, WorkflowInput{Document: run.Output, Secrets: secrets, Message: msg, Facts: rc.Facts()})
		if err != nil {
			return Reprocessed{}, fmt.Errorf("running workflow: %w", err)
		}
		rec, err := ParseRunRecord(record)
		if err != nil {
			return Reprocessed{}, err
		}
		wr.Status, wr.Steps, wr.Error, wr.Diagnostics, wr.FinishedAt = rec.Status, rec.Steps, rec.Error, rec.Diagnostics, p.now()
		wrun = &wr
		run.WorkflowRunID = wr.ID
		if wr.Status != RunSucceeded {
			run.Status, run.Cause, run.Error = RunFailed, CauseWorkflowFailed, "one or more workflow steps failed or were skipped"
		}
	}
	run.FinishedAt = p.now()
	// The runs happened: record them even if the caller has gone away, all
	// together or not at all.
	ctx = context.WithoutCancel(ctx)
	e.ApplyRun(run)
	ev, err := NewEvent(EventEmailReprocessed, req.Actor, e.ID, map[string]string{"email_id": e.ID, "agent_run_id": run.ID, "workflow_run_id": run.WorkflowRunID, "status": run.Status}, p.now())
	if err != nil {
		return Reprocessed{}, err
	}
	err = p.Store.WithTx(ctx, func(tx store.Tx) error {
		r := repo.In(tx)
		if wrun != nil {
			if err := r.WorkflowRuns.Put(ctx, req.Workspace, *wrun); err != nil {
				return err
			}
		}
		if err := r.AgentRuns.Put(ctx, req.Workspace, run); err != nil {
			return err
		}
		if err := r.Emails.Put(ctx, req.Workspace, e); err != nil {
			return err
		}
		return r.Events.Put(ctx, req.Workspace, ev)
	})
	if err != nil {
		return Reprocessed{}, fmt.Errorf("recording the reprocess of e-mail %s: %w", e.ID, err)
	}
	return Reprocessed{EmailID: e.ID, Status: run.Status, AgentRun: &run, WorkflowRun: wrun}, nil
}

func (p *Inline) environment() string {
	if p.Environment == "" {
		return "development"
	}
	return p.Environment
}

// userSecrets returns the workspace's secrets a workflow may use: not the
// platform's own (webhook signing secrets).
func (p *Inline) userSecrets(ctx context.Context, ws string) (map[string]string, error) {
	secrets, err := p.Store.RevealSecrets(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("reading secrets: %w", err)
	}
	for name := range secrets {
		if !IsUserSecret(name) {
			delete(secrets, name)
		}
	}
	return secrets, nil
}

// NewAgentRun is the record of an agent run on an e-mail with its result:
// a fresh id, the model that answered, the cost from the catalog (unless the
// runner gave one), and an output that is not an agent document turned
// into a failure with CauseInvalidOutput. FinishedAt is left to the caller.
func NewAgentRun(ag Agent, e Email, res AgentResult, started time.Time) AgentRun {
	model := res.Model
	if model == "" {
		model = ag.Model
	}
	run := AgentRun{ID: NewID("arun"), AgentID: ag.ID, EmailID: e.ID, InboxID: e.InboxID, Model: model,
		Status: res.Status, Cause: res.Cause, Error: res.Error, Output: res.Output, Tokens: res.Tokens,
		CostUSD: res.CostUSD, Diagnostics: res.Diagnostics, Repairs: res.Repairs, StartedAt: started.UTC(),
		PromptVersion: res.PromptVersion, Calls: res.Calls, Fenced: res.Fenced, Answer: res.Answer,
		UsageUnknown: res.UsageUnknown, ResponseFormat: res.ResponseFormat, Thinking: res.Thinking}
	if run.CostUSD == 0 {
		run.CostUSD = Cost(model, res.Tokens)
	}
	if run.Status == RunSucceeded && !IsAgentDocument(run.Output) {
		run.Status, run.Cause, run.Error = RunFailed, CauseInvalidOutput, "the agent's answer is not a JSON object with a result"
	}
	return run
}

// ApplyRun sets an e-mail's status from its latest agent run: processed
// when it succeeded, failed (with the run's cause) otherwise.
func (e *Email) ApplyRun(run AgentRun) {
	e.AgentRunID, e.WorkflowRunID = run.ID, run.WorkflowRunID
	e.Status, e.StatusDetail = EmailProcessed, ""
	if run.Status != RunSucceeded {
		e.Status, e.StatusDetail = EmailFailed, string(run.Cause)
	}
}

// LatestOutput walks an e-mail's runs from runID, newest first (each
// reprocess points at the run it replaced), to the latest run of the agent
// that recorded an output, and returns the newest run of the agent with
// that output and its tokens: what ReplayRunner answers with. nil when the
// agent has no run on the e-mail.
func LatestOutput(ctx context.Context, r Repo, ws, runID, agentID string) (*AgentRun, error) {
	var newest *AgentRun
	for hops := 0; runID != "" && hops < 100; hops++ {
		run, err := r.AgentRuns.Get(ctx, ws, runID)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		if run.AgentID == agentID {
			if newest == nil {
				n := run
				newest = &n
			}
			if len(run.Output) > 0 {
				out := *newest
				out.Output, out.Tokens = run.Output, run.Tokens
				return &out, nil
			}
		}
		runID = run.ReprocessOf
	}
	return newest, nil
}
