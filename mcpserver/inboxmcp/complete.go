package inboxmcp

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
)

var templateSources = map[string]mcpserver.IDSource{
	URIPrefix + "inboxes/{id}":       {Kind: inbox.KindInbox, Tool: ToolInboxesList},
	URIPrefix + "emails/{id}":        {Kind: inbox.KindEmail, Tool: ToolEmailsList},
	URIPrefix + "emails/{id}/eml":    {Kind: inbox.KindEmail, Tool: ToolEmailsList},
	URIPrefix + "agents/{id}":        {Kind: inbox.KindAgent, Tool: ToolAgentsList},
	URIPrefix + "agent-runs/{id}":    {Kind: inbox.KindAgentRun, Tool: ToolAgentRunsList},
	URIPrefix + "workflow-runs/{id}": {Kind: inbox.KindWorkflowRun, Tool: ToolWorkflowRunsList},
	URIPrefix + "webhooks/{id}":      {Kind: inbox.KindWebhook, Tool: ToolWebhooksList},
	URIPrefix + "system-events/{id}": {Kind: inbox.KindEvent, Tool: ToolSystemEventsList},
}

var promptSources = map[string]mcpserver.IDSource{
	"inbox_id": {Kind: inbox.KindInbox, Tool: ToolInboxesList},
	"agent_id": {Kind: inbox.KindAgent, Tool: ToolAgentsList},
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
		if c.May(ToolWorkspacesGet) && strings.HasPrefix(c.Workspace, arg.Value) {
			return []string{c.Workspace}, nil
		}
		return nil, nil
	}
	return p.completer().Complete(ctx, c, ref, arg, args)
}
