package inbox

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// idSource is where suggestions for an id come from: a record kind and the
// listing tool the caller must be allowed to run.
type idSource struct {
	kind, tool string
}

var templateSources = map[string]idSource{
	URIPrefix + "inboxes/{id}":       {KindInbox, "inboxes_list"},
	URIPrefix + "emails/{id}":        {KindEmail, "emails_list"},
	URIPrefix + "emails/{id}/eml":    {KindEmail, "emails_list"},
	URIPrefix + "agents/{id}":        {KindAgent, "agents_list"},
	URIPrefix + "agent-runs/{id}":    {KindAgentRun, "agent_runs_list"},
	URIPrefix + "workflow-runs/{id}": {KindWorkflowRun, "workflow_runs_list"},
	URIPrefix + "webhooks/{id}":      {KindWebhook, "webhooks_list"},
	URIPrefix + "system-events/{id}": {KindEvent, "system_events_list"},
	URIPrefix + "workspaces/{id}":    {KindWorkspace, "workspaces_get"},
}

var promptSources = map[string]idSource{
	"inbox_id": {KindInbox, "inboxes_list"},
	"agent_id": {KindAgent, "agents_list"},
}

// complete implements mcpserver.CompleteFunc for Inbox.
func (p *Product) complete(ctx context.Context, c *mcpserver.Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, _ map[string]string) ([]string, error) {
	var src idSource
	switch ref.Type {
	case "ref/prompt":
		if arg.Name == "month" {
			return p.months(arg.Value), nil
		}
		s, ok := promptSources[arg.Name]
		if !ok {
			return nil, nil
		}
		src = s
	case "ref/resource":
		s, ok := templateSources[ref.URI]
		if !ok || arg.Name != "id" {
			return nil, nil
		}
		src = s
	default:
		return nil, nil
	}
	if !c.May(src.tool) {
		return nil, nil
	}
	if src.kind == KindWorkspace {
		if strings.HasPrefix(c.Workspace, arg.Value) {
			return []string{c.Workspace}, nil
		}
		return nil, nil
	}
	recs, err := p.opts.Store.ListRecords(ctx, c.Workspace, src.kind, store.Query{Prefix: arg.Value, Limit: 100})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out, nil
}

// months returns the last twelve months, current first, matching prefix.
func (p *Product) months(prefix string) []string {
	now := p.now().UTC()
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	out := make([]string, 0, 12)
	for i := range 12 {
		m := first.AddDate(0, -i, 0).Format("2006-01")
		if strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}
