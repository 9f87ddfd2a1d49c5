package inbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
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
	// CodeAgentPaused: the inbox's agent is paused.
	CodeAgentPaused = "agent_paused"
	// CodeNotResumable: a resume was asked for an e-mail whose latest
	// workflow run was not interrupted.
	CodeNotResumable = "not_resumable"
)

// Errorf is an *Error with code and a message for people.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Modes of a reprocess.
const (
	// ReprocessRestart runs the e-mail's agent again (or replays its
	// recorded answer) and the workflow it answers with from its first
	// step: every step is sent again, with new identities.
	ReprocessRestart = "restart"
	// ReprocessResume takes up the e-mail's interrupted workflow run: the
	// steps it ended are not sent again (their recorded responses answer
	// the steps after them), the step whose outcome is unknown is sent
	// again with the same identity and Idempotency-Key, so a receiver that
	// honours the key does its work once, and the steps after it follow.
	// The agent does not run again.
	ReprocessResume = "resume"
)

// ReprocessRequest asks for an e-mail to be run through its inbox's agent
// (and the workflow it answers with) again, or for its interrupted
// workflow run to be resumed.
type ReprocessRequest struct {
	Workspace string
	EmailID   string
	// Mode is ReprocessRestart (also when empty) or ReprocessResume.
	Mode string
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
// product's emails_reprocess calls it after the user confirmed; the
// pipeline's (pipeline.Pipeline.Processor) enqueues the stages.
type Processor interface {
	// Reprocess runs (or enqueues) the stages for one e-mail. A
	// *store.RecordError matching store.ErrNotFound for an e-mail that does
	// not exist, an *Error for one that cannot be processed as it is.
	Reprocess(ctx context.Context, req ReprocessRequest) (Reprocessed, error)
	// Check reports, without changing anything, whether Reprocess would
	// start: the same errors, so a confirmation is only asked for a call
	// that can run.
	Check(ctx context.Context, req ReprocessRequest) error
}

// NewAgentRun is the record of an agent run on an e-mail with its result:
// a fresh id, the model that answered, the cost from the catalog (unless the
// runner gave one), and an output that is not an agent document turned
// into a failure with CauseInvalidOutput. FinishedAt is left to the caller.
// It reads the output once (ReadAnswer) and returns that reading too.
func NewAgentRun(ag Agent, e Email, res AgentResult, started time.Time) (AgentRun, Answer) {
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
	answer := ReadAnswer(run.Output)
	if run.Status == RunSucceeded && !answer.Document {
		run.Status, run.Cause, run.Error = RunFailed, CauseInvalidOutput, "the agent's answer is not a JSON object with a result"
	}
	return run, answer
}

// ApplyRun sets an e-mail's status from its latest agent run: processed
// when it succeeded, failed (with the run's cause) otherwise.
func (e *Email) ApplyRun(run AgentRun) {
	e.AgentRunID, e.WorkflowRunID = run.ID, run.WorkflowRunID
	e.NextAttemptAt = time.Time{}
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
