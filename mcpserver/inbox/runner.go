package inbox

import (
	"context"
	"encoding/json"
)

// AgentInput is what an agent run sees.
type AgentInput struct {
	Workspace Workspace
	Inbox     Inbox
	Agent     Agent
	Email     Email
	// EML is the raw message.
	EML []byte
	// Previous is the latest earlier run of this agent on this e-mail, if any.
	Previous *AgentRun
}

// AgentResult is the outcome of an agent run.
type AgentResult struct {
	// Status is "succeeded" or "failed".
	Status string
	// Cause classifies a failure (e.g. "model_timeout", "invalid_output").
	Cause string
	Error string
	// Output is the agent's JSON answer: {"result": …, "workflow": […]}.
	Output json.RawMessage
	Tokens Tokens
}

// AgentRunner runs an agent on an e-mail.
type AgentRunner interface {
	RunAgent(ctx context.Context, in AgentInput) (AgentResult, error)
}

// ReplayRunner is the embedded AgentRunner: it makes no model call and
// answers with the output the agent recorded on its latest successful run of
// the same e-mail, with the same token counts. Without such a run it fails
// with cause "no_recorded_output".
type ReplayRunner struct{}

// RunAgent implements AgentRunner.
func (ReplayRunner) RunAgent(_ context.Context, in AgentInput) (AgentResult, error) {
	p := in.Previous
	if p == nil || len(p.Output) == 0 {
		return AgentResult{Status: "failed", Cause: "no_recorded_output",
			Error: "the replay runner has no recorded output of this agent for this e-mail"}, nil
	}
	return AgentResult{Status: "succeeded", Output: p.Output, Tokens: p.Tokens}, nil
}

// WorkflowInput is what a workflow run needs: the agent's document and the
// run's context.
type WorkflowInput struct {
	// Document is the agent's output, {"result": …, "workflow": […]}.
	Document json.RawMessage
	// Secrets are the workspace's secrets by name (never persisted).
	Secrets map[string]string
	// EML is the triggering e-mail's raw message (attachments are read from it).
	EML []byte
	// Facts are the kobana.* placeholder values (env, workspace_id, inbox_id,
	// inbox_email, email_id, email_message_id, agent_id, agent_run_id,
	// workflow_run_id, app_url, workspace_slug, workspace_external_id).
	Facts map[string]string
}

// WorkflowRunner validates and runs a workflow and returns its redacted run
// record: {"status": "succeeded"|"failed", "steps": [...]}. A document that
// does not validate is a failed run whose record says why.
type WorkflowRunner interface {
	RunWorkflow(ctx context.Context, in WorkflowInput) (record json.RawMessage, err error)
}

// WorkflowRunnerFunc adapts a function to WorkflowRunner.
type WorkflowRunnerFunc func(ctx context.Context, in WorkflowInput) (json.RawMessage, error)

// RunWorkflow implements WorkflowRunner.
func (f WorkflowRunnerFunc) RunWorkflow(ctx context.Context, in WorkflowInput) (json.RawMessage, error) {
	return f(ctx, in)
}

// LintFunc validates a workflow document; diagnostics is JSON the tool
// returns as is, ok reports whether the document may run.
type LintFunc func(doc []byte) (diagnostics json.RawMessage, ok bool)
