package inbox

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// WorkspaceArg optionally names the workspace (it must be the token's).
type WorkspaceArg struct {
	ID string `json:"id,omitempty" jsonschema:"the workspace id; defaults to the token's workspace"`
}

// ModelList is the output of models_list.
type ModelList struct {
	Models []Model `json:"models"`
}

// UsageArg selects the usage period.
type UsageArg struct {
	Month string `json:"month,omitempty" jsonschema:"a calendar month YYYY-MM; default: the last 30 days"`
}

// ModelUsage is one model's share of a period.
type ModelUsage struct {
	Model     string  `json:"model"`
	AgentRuns int     `json:"agent_runs"`
	Tokens    Tokens  `json:"tokens"`
	CostUSD   float64 `json:"cost_usd"`
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
	Tokens             Tokens       `json:"tokens"`
	CostUSD            float64      `json:"cost_usd"`
	ByModel            []ModelUsage `json:"by_model"`
	EmailsLimit        int          `json:"emails_per_month_limit"`
}

func (p *Product) workspaceTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "workspaces_get", Title: "Get workspace",
			Description: "Returns the token's workspace: name, slug, plan, environment and limits (e-mails per month, inboxes, agents, webhooks, attachment size, retention). Use it to check what the plan allows before creating records.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in WorkspaceArg) (Workspace, error) {
				return p.getWorkspace(ctx, c, in.ID)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "models_list", Title: "List models",
			Description: "Lists the LLM models an agent can run on, with context size and prices in USD per million input and output tokens. Use a model id from here in agents_create or agents_update.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in struct{}) (ModelList, error) {
				return ModelList{Models: Models}, nil
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

func (p *Product) getWorkspace(ctx context.Context, c *mcpserver.Caller, id string) (Workspace, error) {
	if id != "" && id != c.Workspace {
		return Workspace{}, fmt.Errorf("workspace %q: %w", id, mcpserver.ErrNotFound)
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

// each walks every record of a kind matching q, most recent first.
func each[T any](ctx context.Context, r repo, ws, kind string, q store.Query, fn func(T, store.Record) error) error {
	q.Limit = 500
	for {
		recs, err := r.st.ListRecords(ctx, ws, kind, q)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			var v T
			if err := json.Unmarshal(rec.Data, &v); err != nil {
				return fmt.Errorf("decoding %s %s: %w", kind, rec.ID, err)
			}
			if err := fn(v, rec); err != nil {
				return err
			}
		}
		if len(recs) < q.Limit {
			return nil
		}
		last := recs[len(recs)-1]
		q.Before, q.BeforeID = last.Created, last.ID
	}
}

func (p *Product) usage(ctx context.Context, ws string, from, to time.Time) (Usage, error) {
	u := Usage{WorkspaceID: ws, From: from, To: to, ByModel: []ModelUsage{}}
	if w, err := p.workspace(ctx, ws); err == nil {
		u.EmailsLimit = w.Limits.EmailsPerMonth
	}
	q := store.Query{Since: from, Before: to}
	err := each(ctx, p.repo, ws, KindEmail, q, func(e Email, _ store.Record) error {
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
	err = each(ctx, p.repo, ws, KindAgentRun, q, func(r AgentRun, _ store.Record) error {
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
	err = each(ctx, p.repo, ws, KindWorkflowRun, q, func(r WorkflowRun, _ store.Record) error {
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
		m.CostUSD = round6(m.CostUSD)
		u.ByModel = append(u.ByModel, *m)
	}
	sort.Slice(u.ByModel, func(i, j int) bool { return u.ByModel[i].CostUSD > u.ByModel[j].CostUSD })
	u.CostUSD = round6(u.CostUSD)
	return u, nil
}

func round6(f float64) float64 { return float64(int64(f*1e6+0.5)) / 1e6 }
