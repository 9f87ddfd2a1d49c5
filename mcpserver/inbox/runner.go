package inbox

import (
	"context"
	"encoding/json"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/egress"
)

// Cause classifies why an agent run failed. Values are stable: people and
// programs group runs by them (review_failed_runs, webhooks).
type Cause string

// Causes of a failed agent run.
const (
	// CauseModelTimeout: the model did not answer in time.
	CauseModelTimeout Cause = "model_timeout"
	// CauseContextLength: the e-mail and instructions do not fit the
	// model's context window.
	CauseContextLength Cause = "context_length"
	// CauseRefusal: the model declined to answer.
	CauseRefusal Cause = "refusal"
	// CauseInvalidOutput: the answer is not a JSON object with a result, or
	// its workflow still does not validate after the repair rounds.
	CauseInvalidOutput Cause = "invalid_output"
	// CauseRateLimited: the provider refused for rate or quota, after retries.
	CauseRateLimited Cause = "rate_limited"
	// CauseProviderError: the provider failed (5xx, network, bad response).
	CauseProviderError Cause = "provider_error"
	// CauseNoRecordedOutput: the replay runner has no earlier output to replay.
	CauseNoRecordedOutput Cause = "no_recorded_output"
	// CauseAttachmentUnreadable: an attachment the agent needs cannot be read.
	CauseAttachmentUnreadable Cause = "attachment_unreadable"
	// CauseMessagePurged: the raw message is no longer stored.
	CauseMessagePurged Cause = "message_purged"
	// CauseWorkflowFailed: the agent answered, and a workflow step failed
	// or was skipped.
	CauseWorkflowFailed Cause = "workflow_failed"
	// CauseInterrupted: the server stopped while the run was in progress.
	CauseInterrupted Cause = "interrupted"
	// CauseOutcomeNotRecorded: a workflow step was sent and answered, but
	// its outcome could not be recorded (the store failed past every retry,
	// or refused writes for as long as the job lived); the step is unknown
	// and the run can be resumed. The server did not stop.
	CauseOutcomeNotRecorded Cause = "outcome_not_recorded"
	// CauseOutputTruncated: the model stopped at its output limit before
	// finishing its answer.
	CauseOutputTruncated Cause = "output_truncated"
	// CauseModelUnavailable: no endpoint is configured for the agent's
	// model, or the model is not in the catalog.
	CauseModelUnavailable Cause = "model_unavailable"
)

// AgentInput is what an agent run sees. It never holds a secret value:
// SecretNames lists the names a workflow may reference.
type AgentInput struct {
	Workspace Workspace
	Inbox     Inbox
	Agent     Agent
	// Email is the e-mail record: sender and its authentication (Auth),
	// recipients, subject, date, text body and attachments metadata.
	Email Email
	// Message is a snapshot of the raw message, for runners that read
	// attachments; nil when it was purged. The caller closes it.
	Message Message
	// SecretNames are the names of the workspace's user secrets, sorted,
	// for ${{secrets.NAME}}; never their values.
	SecretNames []string
	// Policy says where the agent's workflows may send requests: each
	// secret's destinations and the agent's egress list. The runner lints
	// the answer with it and tells the model; nil when there is none.
	Policy *egress.Policy
	// Previous is the latest earlier run of this agent on this e-mail, if any.
	Previous *AgentRun
}

// AgentResult is the outcome of an agent run.
type AgentResult struct {
	// Status is RunSucceeded or RunFailed.
	Status string
	// Cause classifies a failure; Error says it for people.
	Cause Cause
	Error string
	// Output is the agent's JSON answer: {"result": …, "workflow": […]}.
	Output json.RawMessage
	// Tokens are all the tokens the run used, repair rounds included.
	Tokens Tokens
	// Model is the model that answered; empty means the agent's.
	Model string
	// CostUSD is what the run cost; zero means Cost(Model, Tokens).
	CostUSD float64
	// Diagnostics are the workflow diagnostics of the final output
	// (compile's JSON), when the runner checked it.
	Diagnostics json.RawMessage
	// Repairs are the rounds in which the output was sent back to the model.
	Repairs []Repair
	// PromptVersion names the prompt the model was given; empty when no
	// model was called.
	PromptVersion string
	// Calls are the requests made to the model, retries included.
	Calls []ModelCall
	// Fenced says the accepted answer came wrapped in a code fence.
	Fenced bool
	// Answer is the model's last answer as text when it could not be used
	// (CauseInvalidOutput), clipped; empty otherwise.
	Answer string
	// UsageUnknown says some answer came without usage (Tokens count only
	// those that reported it).
	UsageUnknown bool
	// ResponseFormat is how the model was last asked for JSON.
	ResponseFormat string
	// Thinking is what the model wrote before its answer, clipped.
	Thinking string
	// Transient says a failure may not recur: an outage of the provider
	// (after the runner's own retries), a rate or quota limit, a timeout,
	// no endpoint configured. The pipeline tries such an e-mail again on
	// its schedule; IsTransient also counts the causes that are.
	Transient bool
}

// IsTransient reports whether a failed run may succeed if tried later:
// the runner said so, or its cause is one that passes (model_unavailable,
// rate_limited, model_timeout).
func (r AgentResult) IsTransient() bool {
	if r.Status != RunFailed {
		return false
	}
	switch r.Cause {
	case CauseModelUnavailable, CauseRateLimited, CauseModelTimeout:
		return true
	}
	return r.Transient
}

// AgentRunner runs an agent on an e-mail. A failure of the model is a
// result (Status RunFailed with a Cause); the error result is for a run
// that could not be attempted, which the caller may retry.
type AgentRunner interface {
	RunAgent(ctx context.Context, in AgentInput) (AgentResult, error)
}

// ReplayRunner is the AgentRunner that makes no model call: it answers
// with the output the agent recorded on its latest run of the same e-mail
// that had one, with the same token counts. Without such a run it fails
// with CauseNoRecordedOutput.
type ReplayRunner struct{}

// RunAgent implements AgentRunner.
func (ReplayRunner) RunAgent(_ context.Context, in AgentInput) (AgentResult, error) {
	p := in.Previous
	if p == nil || len(p.Output) == 0 {
		return AgentResult{Status: RunFailed, Cause: CauseNoRecordedOutput,
			Error: "the replay runner has no recorded output of this agent for this e-mail"}, nil
	}
	return AgentResult{Status: RunSucceeded, Output: p.Output, Tokens: p.Tokens}, nil
}

// RunContext is what the kobana.* facts of a workflow run are taken from.
type RunContext struct {
	// Environment is the server's kobana.env (development, sandbox or
	// production), for a workspace that names none; empty means
	// development.
	Environment string
	// AppURL is kobana.app_url, the server's public URL.
	AppURL        string
	Workspace     Workspace
	Inbox         Inbox
	Email         Email
	Agent         Agent
	AgentRunID    string
	WorkflowRunID string
}

// Env is the run's kobana.env: the workspace's environment when it names
// one, else the server's, else development. Every run, dry or not, takes
// it from here.
func (rc RunContext) Env() string {
	switch {
	case rc.Workspace.Environment != "":
		return rc.Workspace.Environment
	case rc.Environment != "":
		return rc.Environment
	}
	return "development"
}

// Facts returns the kobana.* values of the run; workspace_slug and
// workspace_external_id only when the workspace defines them.
func (rc RunContext) Facts() map[string]string {
	f := map[string]string{
		"env": rc.Env(), "app_url": rc.AppURL, "workspace_id": rc.Workspace.ID,
		"inbox_id": rc.Inbox.ID, "inbox_email": rc.Inbox.Address,
		"email_id": rc.Email.ID, "email_message_id": rc.Email.MessageID,
		"agent_id": rc.Agent.ID, "agent_run_id": rc.AgentRunID, "workflow_run_id": rc.WorkflowRunID,
	}
	if rc.Workspace.Slug != "" {
		f["workspace_slug"] = rc.Workspace.Slug
	}
	if rc.Workspace.ExternalID != "" {
		f["workspace_external_id"] = rc.Workspace.ExternalID
	}
	return f
}

// Answer is an agent's output as the compiler reads it, once: whether it
// is an answer at all and whether it asks for a workflow, with the
// workflow's plan and diagnostics.
type Answer struct {
	// Document reports whether the output is a JSON object with a result,
	// the shape an agent must answer with.
	Document bool
	// Workflow reports whether it asks for steps to run: a workflow that
	// is not empty, or that does not validate (its run then records why
	// nothing was sent).
	Workflow bool
	// Plan is the workflow, ready to run; nil when it does not validate.
	Plan *compile.Plan
	// Diagnostics are what the compiler said about the output.
	Diagnostics compile.Diagnostics
}

// ReadAnswer reads an agent's output with the compiler: strictly, so that
// a key written twice is an error, never a silent second value.
func ReadAnswer(output json.RawMessage) Answer {
	plan, diags := compile.Compile(output, compile.Options{})
	outline := compile.OutlineOf(output)
	return Answer{Document: outline.Object && outline.Result, Workflow: outline.Workflow || diags.HasErrors() && outline.Object,
		Plan: plan, Diagnostics: diags}
}

// HasWorkflow reports whether an agent's output asks for a workflow to run
// (see ReadAnswer).
func HasWorkflow(output json.RawMessage) bool { return ReadAnswer(output).Workflow }
