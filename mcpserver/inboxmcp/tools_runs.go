package inboxmcp

import (
	"context"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/runrecord"
)

// AgentRunListArg filters agent_runs_list.
type AgentRunListArg struct {
	Page
	AgentID string `json:"agent_id,omitempty" jsonschema:"only runs of this agent" pattern:"^agt_[A-Za-z0-9_-]{1,64}$"`
	Status  string `json:"status,omitempty" jsonschema:"succeeded or failed" enum:"succeeded,failed"`
	Since   string `json:"since,omitempty" jsonschema:"only runs started on or after this date, YYYY-MM-DD" format:"date" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"`
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
	NextCursor string            `json:"next_cursor,omitempty"`
}

// WorkflowRunListArg filters workflow_runs_list.
type WorkflowRunListArg struct {
	Page
	AgentRunID string `json:"agent_run_id,omitempty" jsonschema:"only the workflow run of this agent run" pattern:"^arun_[A-Za-z0-9_-]{1,64}$"`
	Status     string `json:"status,omitempty" jsonschema:"succeeded, failed, running (sending its steps) or interrupted (the server stopped mid-run)" enum:"succeeded,failed,running,interrupted"`
}

// WorkflowRunSummary is a workflow run without its steps.
type WorkflowRunSummary struct {
	ID         string           `json:"id"`
	AgentRunID string           `json:"agent_run_id"`
	EmailID    string           `json:"email_id"`
	Status     runrecord.Status `json:"status"`
	Steps      int              `json:"steps"`
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt time.Time        `json:"finished_at,omitzero"`
}

// WorkflowRunList is a page of workflow runs.
type WorkflowRunList struct {
	Runs       []WorkflowRunSummary `json:"runs"`
	NextCursor string               `json:"next_cursor,omitempty"`
}

func summarizeRun(r inbox.AgentRun) AgentRunSummary {
	return AgentRunSummary{ID: r.ID, AgentID: r.AgentID, EmailID: r.EmailID, Model: r.Model, Status: r.Status, Cause: r.Cause, Error: r.Error, Tokens: r.Tokens, CostUSD: r.CostUSD, WorkflowRunID: r.WorkflowRunID, StartedAt: r.StartedAt}
}

func (p *Product) agentRunsList(ctx context.Context, c *mcpserver.Caller, in AgentRunListArg) (AgentRunList, error) {
	q, err := in.Query()
	if err != nil {
		return AgentRunList{}, err
	}
	if err := checkEnum("status", in.Status, inbox.RunSucceeded, inbox.RunFailed); err != nil {
		return AgentRunList{}, err
	}
	if in.Since != "" {
		t, err := checkDate(in.Since)
		if err != nil {
			return AgentRunList{}, mcpserver.Errorf("invalid_arguments", "%v", err)
		}
		q.Since = t
	}
	q.Parent, q.Status = in.AgentID, in.Status
	items, next, err := listPage(ctx, p.repo.AgentRuns, c.Workspace, q)
	out := AgentRunList{Runs: make([]AgentRunSummary, 0, len(items)), NextCursor: next}
	for _, r := range items {
		out.Runs = append(out.Runs, summarizeRun(r))
	}
	return out, err
}

func (p *Product) agentRunsGet(ctx context.Context, c *mcpserver.Caller, in AgentRunIDArg) (inbox.AgentRun, error) {
	if err := required("id", in.ID); err != nil {
		return inbox.AgentRun{}, err
	}
	return p.repo.AgentRuns.Get(ctx, c.Workspace, in.ID)
}

func (p *Product) workflowRunsList(ctx context.Context, c *mcpserver.Caller, in WorkflowRunListArg) (WorkflowRunList, error) {
	q, err := in.Query()
	if err != nil {
		return WorkflowRunList{}, err
	}
	if err := checkEnum("status", in.Status, runStatuses...); err != nil {
		return WorkflowRunList{}, err
	}
	q.Parent, q.Status = in.AgentRunID, in.Status
	items, next, err := listPage(ctx, p.repo.WorkflowRuns, c.Workspace, q)
	out := WorkflowRunList{Runs: make([]WorkflowRunSummary, 0, len(items)), NextCursor: next}
	for _, r := range items {
		out.Runs = append(out.Runs, WorkflowRunSummary{ID: r.ID, AgentRunID: r.AgentRunID, EmailID: r.EmailID, Status: r.Status, Steps: len(r.Steps), StartedAt: r.StartedAt, FinishedAt: r.FinishedAt})
	}
	return out, err
}

func (p *Product) workflowRunsGet(ctx context.Context, c *mcpserver.Caller, in WorkflowRunIDArg) (inbox.WorkflowRun, error) {
	if err := required("id", in.ID); err != nil {
		return inbox.WorkflowRun{}, err
	}
	return p.repo.WorkflowRuns.Get(ctx, c.Workspace, in.ID)
}

// runStatuses are the statuses a workflow run may be listed by.
var runStatuses = func() []string {
	var out []string
	for _, s := range runrecord.Statuses() {
		out = append(out, string(s))
	}
	return out
}()
