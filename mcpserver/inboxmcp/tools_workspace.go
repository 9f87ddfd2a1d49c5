package inboxmcp

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// WorkspaceArg optionally names the workspace (it must be the token's).
type WorkspaceArg struct {
	ID string `json:"id,omitempty" jsonschema:"the workspace id; defaults to the token's workspace"`
}

// ModelList is the output of models_list.
type ModelList struct {
	Models []inbox.Model `json:"models"`
}

// UsageArg selects the usage period.
type UsageArg struct {
	Month string `json:"month,omitempty" jsonschema:"a calendar month YYYY-MM; default: the last 30 days"`
}

// ModelUsage is one model's share of a period.
type ModelUsage struct {
	Model     string       `json:"model"`
	AgentRuns int          `json:"agent_runs"`
	Tokens    inbox.Tokens `json:"tokens"`
	CostUSD   float64      `json:"cost_usd"`
}

// Usage is what a workspace processed and spent in a period.
type Usage struct {
	WorkspaceID        string       `json:"workspace_id"`
	From               time.Time    `json:"from"`
	To                 time.Time    `json:"to"`
	EmailsReceived     int          `json:"emails_received"`
	EmailsProcessed    int          `json:"emails_processed"`
	AgentRuns          int          `json:"agent_runs"`
	AgentRunsFailed    int          `json:"agent_runs_failed"`
	WorkflowRuns       int          `json:"workflow_runs"`
	WorkflowRunsFailed int          `json:"workflow_runs_failed"`
	Tokens             inbox.Tokens `json:"tokens"`
	CostUSD            float64      `json:"cost_usd"`
	ByModel            []ModelUsage `json:"by_model"`
	EmailsLimit        int          `json:"emails_per_month_limit"`
}

func (p *Product) workspaceTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "workspaces_get", Title: "Get workspace",
			Description: "Returns the token's workspace: name, slug, plan, environment and limits (e-mails per month, inboxes, agents, webhooks, attachment size, retention). Use it to check what the plan allows before creating records.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in WorkspaceArg) (inbox.Workspace, error) {
				return p.getWorkspace(ctx, c, in.ID)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "models_list", Title: "List models",
			Description: "Lists the LLM models an agent can run on, with context size and prices in USD per million input and output tokens. Use a model id from here in agents_create or agents_update.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in struct{}) (ModelList, error) {
				return ModelList{Models: inbox.Models()}, nil
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "usage_get", Title: "Get usage",
			Description: "Returns what the workspace processed and spent: e-mails received and processed, agent and workflow runs (and failures), tokens and cost in USD, by model. Without arguments it covers the last 30 days; pass month (YYYY-MM) for a calendar month.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in UsageArg) (Usage, error) {
				from, to, err := p.period(in.Month)
				if err != nil {
					return Usage{}, err
				}
				return p.usage(ctx, c.Workspace, from, to)
			}),
	}
}

func (p *Product) getWorkspace(ctx context.Context, c *mcpserver.Caller, id string) (inbox.Workspace, error) {
	if id != "" && id != c.Workspace {
		return inbox.Workspace{}, fmt.Errorf("workspace %q: %w", id, mcpserver.ErrNotFound)
	}
	return p.workspace(ctx, c.Workspace)
}

// period resolves a YYYY-MM month, or the last 30 days when empty.
func (p *Product) period(month string) (time.Time, time.Time, error) {
	now := p.now().UTC()
	if month == "" {
		return now.Add(-30 * 24 * time.Hour), now, nil
	}
	t, err := checkMonth(month)
	if err != nil {
		return time.Time{}, time.Time{}, mcpserver.Errorf("invalid_arguments", "%v", err)
	}
	return t, t.AddDate(0, 1, 0), nil
}

func checkMonth(s string) (time.Time, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil || len(s) != 7 {
		return time.Time{}, fmt.Errorf("month must be YYYY-MM, e.g. 2026-10; got %q", s)
	}
	return t, nil
}

func checkDate(s string) (time.Time, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil || len(s) != 10 {
		return time.Time{}, fmt.Errorf("date must be YYYY-MM-DD, e.g. 2026-11-01; got %q", s)
	}
	return t, nil
}

func (p *Product) usage(ctx context.Context, ws string, from, to time.Time) (Usage, error) {
	u := Usage{WorkspaceID: ws, From: from, To: to, ByModel: []ModelUsage{}}
	if w, err := p.workspace(ctx, ws); err == nil {
		u.EmailsLimit = w.Limits.EmailsPerMonth
	}
	q := store.Query{Since: from, Before: to}
	err := inbox.Each(ctx, p.repo, ws, q, func(e inbox.Email) error {
		u.EmailsReceived++
		if e.Status == "processed" {
			u.EmailsProcessed++
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	byModel := map[string]*ModelUsage{}
	err = inbox.Each(ctx, p.repo, ws, q, func(r inbox.AgentRun) error {
		u.AgentRuns++
		if r.Status == "failed" {
			u.AgentRunsFailed++
		}
		u.Tokens.Input += r.Tokens.Input
		u.Tokens.Output += r.Tokens.Output
		u.CostUSD += r.CostUSD
		m := byModel[r.Model]
		if m == nil {
			m = &ModelUsage{Model: r.Model}
			byModel[r.Model] = m
		}
		m.AgentRuns++
		m.Tokens.Input += r.Tokens.Input
		m.Tokens.Output += r.Tokens.Output
		m.CostUSD += r.CostUSD
		return nil
	})
	if err != nil {
		return u, err
	}
	err = inbox.Each(ctx, p.repo, ws, q, func(r inbox.WorkflowRun) error {
		u.WorkflowRuns++
		if r.Status == "failed" {
			u.WorkflowRunsFailed++
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	for _, m := range byModel {
		m.CostUSD = inbox.RoundUSD(m.CostUSD)
		u.ByModel = append(u.ByModel, *m)
	}
	sort.Slice(u.ByModel, func(i, j int) bool { return u.ByModel[i].CostUSD > u.ByModel[j].CostUSD })
	u.CostUSD = inbox.RoundUSD(u.CostUSD)
	return u, nil
}
