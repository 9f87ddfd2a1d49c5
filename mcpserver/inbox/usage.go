package inbox

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// ModelUsage is one model's share of a period.
type ModelUsage struct {
	Model     string  `json:"model"`
	AgentRuns int     `json:"agent_runs"`
	Tokens    Tokens  `json:"tokens"`
	CostUSD   float64 `json:"cost_usd"`
}

// InboxUsage is one inbox's share of a period's agent runs.
type InboxUsage struct {
	InboxID   string  `json:"inbox_id"`
	AgentRuns int     `json:"agent_runs"`
	Tokens    Tokens  `json:"tokens"`
	CostUSD   float64 `json:"cost_usd"`
}

// Usage is what a workspace processed and spent in a period [From, To).
type Usage struct {
	WorkspaceID     string    `json:"workspace_id"`
	From            time.Time `json:"from"`
	To              time.Time `json:"to"`
	EmailsReceived  int       `json:"emails_received"`
	EmailsProcessed int       `json:"emails_processed"`
	AgentRuns       int       `json:"agent_runs"`
	AgentRunsFailed int       `json:"agent_runs_failed"`
	WorkflowRuns    int       `json:"workflow_runs"`
	// WorkflowRunsFailed counts the failed and the interrupted runs.
	WorkflowRunsFailed int     `json:"workflow_runs_failed"`
	Tokens             Tokens  `json:"tokens"`
	CostUSD            float64 `json:"cost_usd"`
	// ByModel splits the agent runs by model, most expensive first.
	ByModel []ModelUsage `json:"by_model"`
	// ByInbox splits the agent runs by the inbox of their e-mail, most
	// expensive first.
	ByInbox []InboxUsage `json:"by_inbox"`
	// EmailsLimit is the plan's e-mails per month (0: no limit).
	EmailsLimit int `json:"emails_per_month_limit"`
}

// UsageOf adds up a workspace's records created in [from, to): e-mails
// received and processed, agent runs with their tokens and cost (by
// model), workflow runs, and the failures among them.
func UsageOf(ctx context.Context, r Repo, ws string, from, to time.Time) (Usage, error) {
	u := Usage{WorkspaceID: ws, From: from, To: to, ByModel: []ModelUsage{}, ByInbox: []InboxUsage{}}
	w, err := r.Workspaces.Get(ctx, ws, ws)
	if err == nil {
		u.EmailsLimit = w.Limits.EmailsPerMonth
	}
	q := store.Query{Where: CreatedIn(from, to)}
	err = r.Emails.Each(ctx, ws, q, func(e Email) error {
		u.EmailsReceived++
		if e.Status == EmailProcessed {
			u.EmailsProcessed++
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	byModel := map[string]*ModelUsage{}
	byInbox := map[string]*InboxUsage{}
	err = r.AgentRuns.Each(ctx, ws, q, func(run AgentRun) error {
		u.AgentRuns++
		if run.Status == RunFailed {
			u.AgentRunsFailed++
		}
		u.Tokens.Input += run.Tokens.Input
		u.Tokens.Output += run.Tokens.Output
		u.CostUSD += run.CostUSD
		m := byModel[run.Model]
		if m == nil {
			m = &ModelUsage{Model: run.Model}
			byModel[run.Model] = m
		}
		m.AgentRuns++
		m.Tokens.Input += run.Tokens.Input
		m.Tokens.Output += run.Tokens.Output
		m.CostUSD += run.CostUSD
		ib := byInbox[run.InboxID]
		if ib == nil {
			ib = &InboxUsage{InboxID: run.InboxID}
			byInbox[run.InboxID] = ib
		}
		ib.AgentRuns++
		ib.Tokens.Input += run.Tokens.Input
		ib.Tokens.Output += run.Tokens.Output
		ib.CostUSD += run.CostUSD
		return nil
	})
	if err != nil {
		return u, err
	}
	err = r.WorkflowRuns.Each(ctx, ws, q, func(run WorkflowRun) error {
		u.WorkflowRuns++
		if run.Status == runrecord.RunFailed || run.Status == runrecord.RunInterrupted {
			u.WorkflowRunsFailed++
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	for _, m := range byModel {
		m.CostUSD = RoundUSD(m.CostUSD)
		u.ByModel = append(u.ByModel, *m)
	}
	slices.SortFunc(u.ByModel, func(a, b ModelUsage) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(a.Model, b.Model))
	})
	for _, ib := range byInbox {
		ib.CostUSD = RoundUSD(ib.CostUSD)
		u.ByInbox = append(u.ByInbox, *ib)
	}
	slices.SortFunc(u.ByInbox, func(a, b InboxUsage) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(a.InboxID, b.InboxID))
	})
	u.CostUSD = RoundUSD(u.CostUSD)
	return u, nil
}
