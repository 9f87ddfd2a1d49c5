package inboxmcp

import (
	"context"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
)

// AgentRunListArg filters agent_runs_list.
type AgentRunListArg struct {
	Page
	AgentID string `json:"agent_id,omitempty" jsonschema:"only runs of this agent"`
	Status  string `json:"status,omitempty" jsonschema:"succeeded or failed"`
	Since   string `json:"since,omitempty" jsonschema:"only runs started on or after this date, YYYY-MM-DD"`
}

// AgentRunSummary is an agent run without its output.
type AgentRunSummary struct {
	ID            string       `json:"id"`
	AgentID       string       `json:"agent_id"`
	EmailID       string       `json:"email_id"`
	Model         string       `json:"model"`
	Status        string       `json:"status"`
	Cause         inbox.Cause  `json:"cause,omitempty"`
	Error         string       `json:"error,omitempty"`
	Tokens        inbox.Tokens `json:"tokens"`
	CostUSD       float64      `json:"cost_usd"`
	WorkflowRunID string       `json:"workflow_run_id,omitempty"`
	StartedAt     time.Time    `json:"started_at"`
}

// AgentRunList is a page of agent runs.
type AgentRunList struct {
	Runs       []AgentRunSummary `json:"runs"`
	NextBefore string            `json:"next_before,omitempty"`
}

// WorkflowRunListArg filters workflow_runs_list.
type WorkflowRunListArg struct {
	Page
	AgentRunID string `json:"agent_run_id,omitempty" jsonschema:"only the workflow run of this agent run"`
	Status     string `json:"status,omitempty" jsonschema:"succeeded or failed"`
}

// WorkflowRunSummary is a workflow run without its steps.
type WorkflowRunSummary struct {
	ID         string    `json:"id"`
	AgentRunID string    `json:"agent_run_id"`
	EmailID    string    `json:"email_id"`
	Status     string    `json:"status"`
	Steps      int       `json:"steps"`
	StartedAt  time.Time `json:"started_at"`
}

// WorkflowRunList is a page of workflow runs.
type WorkflowRunList struct {
	Runs       []WorkflowRunSummary `json:"runs"`
	NextBefore string               `json:"next_before,omitempty"`
}

func summarizeRun(r inbox.AgentRun) AgentRunSummary {
	return AgentRunSummary{ID: r.ID, AgentID: r.AgentID, EmailID: r.EmailID, Model: r.Model, Status: r.Status, Cause: r.Cause, Error: r.Error, Tokens: r.Tokens, CostUSD: r.CostUSD, WorkflowRunID: r.WorkflowRunID, StartedAt: r.StartedAt}
}

func (p *Product) runTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "agent_runs_list", Title: "List agent runs",
			Description: "Lists agent runs, most recent first, optionally of one agent, in one status (succeeded, failed) or since a date. A failed run has a cause (model_timeout, invalid_output, workflow_failed, attachment_rejected, …) and an error.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in AgentRunListArg) (AgentRunList, error) {
				q, err := in.query()
				if err != nil {
					return AgentRunList{}, err
				}
				if in.Status != "" && in.Status != "succeeded" && in.Status != "failed" {
					return AgentRunList{}, mcpserver.Errorf("invalid_arguments", "status must be succeeded or failed")
				}
				if in.Since != "" {
					t, err := checkDate(in.Since)
					if err != nil {
						return AgentRunList{}, mcpserver.Errorf("invalid_arguments", "%v", err)
					}
					q.Since = t
				}
				q.Parent, q.Status = in.AgentID, in.Status
				items, next, err := inbox.List[inbox.AgentRun](ctx, p.repo, c.Workspace, q)
				out := AgentRunList{Runs: make([]AgentRunSummary, 0, len(items))}
				for _, r := range items {
					out.Runs = append(out.Runs, summarizeRun(r))
				}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "agent_runs_get", Title: "Get agent run",
			Description: "Returns one agent run: status, failure cause and error, the agent's output ({result, workflow}), tokens, cost and the workflow run it started.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (inbox.AgentRun, error) {
				var r inbox.AgentRun
				if err := required("id", in.ID); err != nil {
					return r, err
				}
				return r, load(ctx, p.repo, c.Workspace, in.ID, &r)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "workflow_runs_list", Title: "List workflow runs",
			Description: "Lists workflow runs, most recent first, optionally of one agent run or in one status (succeeded, failed).",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in WorkflowRunListArg) (WorkflowRunList, error) {
				q, err := in.query()
				if err != nil {
					return WorkflowRunList{}, err
				}
				q.Parent, q.Status = in.AgentRunID, in.Status
				items, next, err := inbox.List[inbox.WorkflowRun](ctx, p.repo, c.Workspace, q)
				out := WorkflowRunList{Runs: make([]WorkflowRunSummary, 0, len(items))}
				for _, r := range items {
					out.Runs = append(out.Runs, WorkflowRunSummary{ID: r.ID, AgentRunID: r.AgentRunID, EmailID: r.EmailID, Status: r.Status, Steps: countSteps(r.Steps), StartedAt: r.StartedAt})
				}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "workflow_runs_get", Title: "Get workflow run",
			Description: "Returns one workflow run: each step's state (succeeded, failed, skipped), error, the request as sent and the response, with secrets shown as [redacted secrets.KEY] and attachments described, never their bytes.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (inbox.WorkflowRun, error) {
				var r inbox.WorkflowRun
				if err := required("id", in.ID); err != nil {
					return r, err
				}
				return r, load(ctx, p.repo, c.Workspace, in.ID, &r)
			}),
	}
}
