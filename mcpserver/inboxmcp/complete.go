package inboxmcp

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
)

var templateSources = map[string]mcpserver.IDSource{
	URIPrefix + "inboxes/{id}":       {Kind: inbox.KindInbox, Tool: "inboxes_list"},
	URIPrefix + "emails/{id}":        {Kind: inbox.KindEmail, Tool: "emails_list"},
	URIPrefix + "emails/{id}/eml":    {Kind: inbox.KindEmail, Tool: "emails_list"},
	URIPrefix + "agents/{id}":        {Kind: inbox.KindAgent, Tool: "agents_list"},
	URIPrefix + "agent-runs/{id}":    {Kind: inbox.KindAgentRun, Tool: "agent_runs_list"},
	URIPrefix + "workflow-runs/{id}": {Kind: inbox.KindWorkflowRun, Tool: "workflow_runs_list"},
	URIPrefix + "webhooks/{id}":      {Kind: inbox.KindWebhook, Tool: "webhooks_list"},
	URIPrefix + "system-events/{id}": {Kind: inbox.KindEvent, Tool: "system_events_list"},
}

var promptSources = map[string]mcpserver.IDSource{
	"inbox_id": {Kind: inbox.KindInbox, Tool: "inboxes_list"},
	"agent_id": {Kind: inbox.KindAgent, Tool: "agents_list"},
}

// completer suggests Inbox ids and months; records live per workspace.
func (p *Product) completer() *mcpserver.IDCompleter {
	return &mcpserver.IDCompleter{
		Records:   p.opts.Store,
		Owner:     func(c *mcpserver.Caller) string { return c.Workspace },
		Templates: templateSources,
		Prompts:   promptSources,
		Now:       p.now,
	}
}

// complete implements mcpserver.CompleteFunc for Inbox: the workspace
// template suggests the caller's own workspace, the rest comes from the
// declared sources.
func (p *Product) complete(ctx context.Context, c *mcpserver.Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, args map[string]string) ([]string, error) {
	if ref.Type == "ref/resource" && ref.URI == URIPrefix+"workspaces/{id}" && arg.Name == "id" {
		if c.May("workspaces_get") && strings.HasPrefix(c.Workspace, arg.Value) {
			return []string{c.Workspace}, nil
		}
		return nil, nil
	}
	return p.completer().Complete(ctx, c, ref, arg, args)
}
