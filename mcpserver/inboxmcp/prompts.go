package inboxmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// maxEmbedded caps the resources a prompt embeds.
const maxEmbedded = 10

func checkDateArg(s string) error { _, err := checkDate(s); return err }

func checkMonthArg(s string) error { _, err := checkMonth(s); return err }

func textMessage(s string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: s}}
}

// embed renders a record exactly as resources/read serves it.
func embed(uri string, v any) (*mcp.PromptMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.PromptMessage{Role: "user", Content: &mcp.EmbeddedResource{
		Resource: &mcp.ResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (p *Product) prompts() []mcpserver.Prompt {
	return []mcpserver.Prompt{
		{Name: "review_failed_runs", Title: "Review failed agent runs",
			Description: "Finds the failed agent runs, groups them by cause and points at the e-mails behind them.",
			Arguments: []mcpserver.PromptArgument{
				{Name: "since", Description: "YYYY-MM-DD; default: the last 7 days", Check: checkDateArg},
				{Name: "agent_id", Description: "only runs of this agent"},
			},
			Tools: []string{ToolAgentRunsList, ToolAgentRunsGet, ToolEmailsGet},
			Get:   p.reviewFailedRuns},
		{Name: "inbox_overview", Title: "Inbox overview",
			Description: "One inbox's picture: its configuration, the latest e-mails and how its agent is doing.",
			Arguments:   []mcpserver.PromptArgument{{Name: "inbox_id", Description: "the inbox to describe", Required: true}},
			Tools:       []string{ToolInboxesGet, ToolAgentsGet, ToolEmailsList, ToolAgentRunsList},
			Get:         p.inboxOverview},
		{Name: "webhook_health", Title: "Webhook health",
			Description: "Which outbound webhooks are failing to deliver, and since when.",
			Tools:       []string{ToolWebhooksList, ToolWebhooksDeliveriesList},
			Get:         p.webhookHealth},
		{Name: "usage_report", Title: "Usage report",
			Description: "What the workspace processed and spent in a month, by model.",
			Arguments:   []mcpserver.PromptArgument{{Name: "month", Description: "YYYY-MM; default: the current month", Check: checkMonthArg}},
			Tools:       []string{ToolUsageGet, ToolModelsList},
			Get:         p.usageReport},
	}
}

func (p *Product) reviewFailedRuns(ctx context.Context, c *mcpserver.Caller, args map[string]string) (*mcp.GetPromptResult, error) {
	since := p.now().UTC().Add(-7 * 24 * time.Hour)
	if s := args["since"]; s != "" {
		since, _ = checkDate(s)
	}
	agentID := args["agent_id"]
	scope := ""
	if agentID != "" {
		a, err := p.repo.Agents.Get(ctx, c.Workspace, agentID)
		if err != nil {
			return nil, err
		}
		scope = fmt.Sprintf(" of agent %s (%s)", a.Name, a.ID)
	}
	type group struct {
		cause  string
		runs   []inbox.AgentRun
		emails []string
	}
	groups := map[string]*group{}
	err := p.repo.AgentRuns.Each(ctx, c.Workspace, store.Query{Since: since, Parent: agentID, Status: inbox.RunFailed}, func(r inbox.AgentRun) error {
		cause := string(r.Cause)
		if cause == "" {
			cause = "unknown"
		}
		g := groups[cause]
		if g == nil {
			g = &group{cause: cause}
			groups[cause] = g
		}
		g.runs = append(g.runs, r)
		g.emails = append(g.emails, r.EmailID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ordered := make([]*group, 0, len(groups))
	total := 0
	for _, g := range groups {
		ordered = append(ordered, g)
		total += len(g.runs)
	}
	sort.Slice(ordered, func(i, j int) bool {
		if len(ordered[i].runs) != len(ordered[j].runs) {
			return len(ordered[i].runs) > len(ordered[j].runs)
		}
		return ordered[i].cause < ordered[j].cause
	})
	var b strings.Builder
	fmt.Fprintf(&b, "Review the failed agent runs%s in workspace %s since %s.\n\n", scope, c.Workspace, since.Format("2006-01-02"))
	if total == 0 {
		b.WriteString("There are no failed runs in that period. Say so, and use agent_runs_list (status succeeded) to confirm the agent is processing e-mails at all.\n")
		return &mcp.GetPromptResult{Description: "No failed agent runs", Messages: []*mcp.PromptMessage{textMessage(b.String())}}, nil
	}
	fmt.Fprintf(&b, "%d failed runs, grouped by cause:\n", total)
	for _, g := range ordered {
		fmt.Fprintf(&b, "- %s: %d run(s). Latest error: %q. Runs: %s. E-mails: %s.\n", g.cause, len(g.runs), g.runs[0].Error,
			joinIDs(runIDs(g.runs), 8), joinIDs(g.emails, 8))
	}
	b.WriteString("\nFor each cause: read the runs with agent_runs_get (the latest of each cause is attached below as a kobana://inbox/agent-runs/{id} resource), " +
		"read the e-mails behind them with emails_get, explain what went wrong in plain words and propose a fix " +
		"(the agent's system message or model, the inbox's attachment rules, a missing secret, a failing receiver). " +
		"Use agent_runs_list with status=failed and since to find more. Change nothing: reprocessing (emails_reprocess) or deleting stays for the user to ask explicitly.\n")
	msgs := []*mcp.PromptMessage{textMessage(b.String())}
	for _, g := range ordered {
		if len(msgs) > maxEmbedded {
			break
		}
		r := g.runs[0]
		m, err := embed(URIPrefix+"agent-runs/"+r.ID, r)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
		if e, err := p.repo.Emails.Get(ctx, c.Workspace, r.EmailID); err == nil {
			m, err := embed(URIPrefix+"emails/"+e.ID, e)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
		}
	}
	return &mcp.GetPromptResult{Description: fmt.Sprintf("%d failed agent runs in %d causes", total, len(ordered)), Messages: msgs}, nil
}

func runIDs(rs []inbox.AgentRun) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func joinIDs(ids []string, max int) string {
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:max], ", ") + fmt.Sprintf(" and %d more", len(ids)-max)
}

func (p *Product) inboxOverview(ctx context.Context, c *mcpserver.Caller, args map[string]string) (*mcp.GetPromptResult, error) {
	ib, err := p.getInbox(ctx, c.Workspace, args["inbox_id"])
	if err != nil {
		return nil, err
	}
	emails, _, err := listPage(ctx, p.repo.Emails, c.Workspace, store.Query{Parent: ib.ID, Limit: 5})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Give an overview of inbox %q (%s, %s).\n\n", ib.Name, ib.ID, ib.Address)
	fmt.Fprintf(&b, "Configuration: status %s; ", ib.Status)
	if len(ib.Recipients) == 0 {
		b.WriteString("anyone may send; ")
	} else {
		fmt.Fprintf(&b, "allowed senders %s; ", strings.Join(ib.Recipients, ", "))
	}
	fmt.Fprintf(&b, "attachment rules %s.\n", describeRules(ib.AttachmentRules))
	msgs := []*mcp.PromptMessage{}
	var agent *inbox.Agent
	if ib.AgentID != "" {
		if a, err := p.repo.Agents.Get(ctx, c.Workspace, ib.AgentID); err == nil {
			agent = &a
		}
	}
	if agent == nil {
		b.WriteString("The inbox has no agent: e-mails are stored but not analysed.\n")
	} else {
		ok, failed, causes := 0, 0, map[string]int{}
		err := p.repo.AgentRuns.Each(ctx, c.Workspace, store.Query{Parent: agent.ID, Since: p.now().Add(-30 * 24 * time.Hour)}, func(r inbox.AgentRun) error {
			if r.InboxID != ib.ID {
				return nil
			}
			if r.Status == inbox.RunSucceeded {
				ok++
			} else {
				failed++
				causes[string(r.Cause)]++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "Agent %q (%s) on %s: in the last 30 days %d run(s) succeeded and %d failed", agent.Name, agent.ID, agent.Model, ok, failed)
		if failed > 0 {
			keys := make([]string, 0, len(causes))
			for k := range causes {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, 0, len(keys))
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s ×%d", k, causes[k]))
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
		}
		b.WriteString(".\n")
	}
	if len(emails) == 0 {
		b.WriteString("No e-mails received yet.\n")
	} else {
		b.WriteString("Latest e-mails:\n")
		for _, e := range emails {
			fmt.Fprintf(&b, "- %s %s from %s: %q, %d attachment(s), %s\n", e.ID, e.ReceivedAt.Format(time.RFC3339), e.From, e.Subject, len(e.Attachments), e.Status)
		}
	}
	b.WriteString("\nDescribe the configuration, what arrives, and how well the agent handles it. The inbox and its agent are attached as resources; use emails_list (inbox_id) for more e-mails, agent_runs_list (agent_id) for more runs, and agents_get for the agent. Do not change anything.\n")
	msgs = append(msgs, textMessage(b.String()))
	m, err := embed(URIPrefix+"inboxes/"+ib.ID, ib)
	if err != nil {
		return nil, err
	}
	msgs = append(msgs, m)
	if agent != nil {
		m, err := embed(URIPrefix+"agents/"+agent.ID, agent)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return &mcp.GetPromptResult{Description: "Overview of inbox " + ib.Name, Messages: msgs}, nil
}

func describeRules(r inbox.AttachmentRules) string {
	var parts []string
	if r.Required {
		parts = append(parts, "an attachment is required")
	}
	if r.MaxBytes > 0 {
		parts = append(parts, fmt.Sprintf("at most %d bytes each", r.MaxBytes))
	}
	if len(r.AllowedTypes) > 0 {
		parts = append(parts, "types "+strings.Join(r.AllowedTypes, ", "))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

func (p *Product) webhookHealth(ctx context.Context, c *mcpserver.Caller, _ map[string]string) (*mcp.GetPromptResult, error) {
	hooks, err := p.repo.Webhooks.All(ctx, c.Workspace, store.Query{})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Report on the health of the outbound webhooks of workspace %s.\n\n", c.Workspace)
	if len(hooks) == 0 {
		b.WriteString("The workspace has no webhooks. Say so.\n")
		return &mcp.GetPromptResult{Description: "No webhooks", Messages: []*mcp.PromptMessage{textMessage(b.String())}}, nil
	}
	var failing []inbox.Webhook
	for _, wh := range hooks {
		ds, _, err := listPage(ctx, p.repo.Deliveries, c.Workspace, store.Query{Parent: wh.ID, Limit: 50})
		if err != nil {
			return nil, err
		}
		streak, lastOK := 0, time.Time{}
		var lastErr string
		for _, d := range ds {
			if d.Status == inbox.DeliveryPending {
				continue // not attempted yet
			}
			if d.Status == "delivered" {
				lastOK = d.AttemptedAt
				break
			}
			streak++
			if lastErr == "" {
				lastErr = d.Error
			}
		}
		fmt.Fprintf(&b, "- %s %s (%s), events %s: ", wh.ID, wh.URL, wh.Status, strings.Join(wh.Events, ", "))
		switch {
		case streak > 0:
			since := wh.FailingSince
			if since.IsZero() && len(ds) > 0 {
				since = ds[streak-1].AttemptedAt
			}
			fmt.Fprintf(&b, "FAILING since %s, %d failed deliveries in a row, latest error %q", since.Format(time.RFC3339), streak, lastErr)
			if !lastOK.IsZero() {
				fmt.Fprintf(&b, ", last success %s", lastOK.Format(time.RFC3339))
			} else {
				b.WriteString(", no successful delivery on record")
			}
			failing = append(failing, wh)
		case len(ds) == 0:
			b.WriteString("no deliveries yet")
		default:
			fmt.Fprintf(&b, "healthy, last delivery %s", ds[0].AttemptedAt.Format(time.RFC3339))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%d of %d webhooks are failing. For each failing one, use webhooks_deliveries_list (webhook_id, status=failed) to read the errors and HTTP statuses, say since when it fails and the likely reason (receiver down, 4xx from a changed endpoint or signature check, timeout). Suggest fixes; webhooks_test and webhooks_deliveries_replay send requests outside and ask the user to confirm, so only propose them.\n", len(failing), len(hooks))
	msgs := []*mcp.PromptMessage{textMessage(b.String())}
	for _, wh := range failing {
		if len(msgs) > maxEmbedded {
			break
		}
		m, err := embed(URIPrefix+"webhooks/"+wh.ID, wh)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return &mcp.GetPromptResult{Description: fmt.Sprintf("%d of %d webhooks failing", len(failing), len(hooks)), Messages: msgs}, nil
}

func (p *Product) usageReport(ctx context.Context, c *mcpserver.Caller, args map[string]string) (*mcp.GetPromptResult, error) {
	month := args["month"]
	if month == "" {
		month = p.now().UTC().Format("2006-01")
	}
	from, to, err := p.period(month)
	if err != nil {
		return nil, err
	}
	u, err := inbox.UsageOf(ctx, p.repo, c.Workspace, from, to)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Write the usage report of workspace %s for %s.\n\n", c.Workspace, month)
	fmt.Fprintf(&b, "E-mails received: %d (processed %d", u.EmailsReceived, u.EmailsProcessed)
	if u.EmailsLimit > 0 {
		fmt.Fprintf(&b, "; the plan allows %d a month", u.EmailsLimit)
	}
	fmt.Fprintf(&b, "). Agent runs: %d (%d failed). Workflow runs: %d (%d failed). Tokens: %d in, %d out. Cost: US$ %.4f.\n",
		u.AgentRuns, u.AgentRunsFailed, u.WorkflowRuns, u.WorkflowRunsFailed, u.Tokens.Input, u.Tokens.Output, u.CostUSD)
	if len(u.ByModel) > 0 {
		b.WriteString("By model:\n")
		for _, m := range u.ByModel {
			fmt.Fprintf(&b, "- %s: %d runs, %d in / %d out tokens, US$ %.4f\n", m.Model, m.AgentRuns, m.Tokens.Input, m.Tokens.Output, m.CostUSD)
		}
	}
	b.WriteString("\nPresent it as a short report with a table by model. The figures come from usage_get (month=" + month + "); model prices are in the attached kobana://inbox/models resource (models_list). Point out anything unusual, such as a model that costs much more per run than the others, or failures that cost tokens.\n")
	msgs := []*mcp.PromptMessage{textMessage(b.String())}
	m, err := embed(URIPrefix+"models", ModelList{Models: inbox.Models()})
	if err != nil {
		return nil, err
	}
	msgs = append(msgs, m)
	return &mcp.GetPromptResult{Description: "Usage report for " + month, Messages: msgs}, nil
}
