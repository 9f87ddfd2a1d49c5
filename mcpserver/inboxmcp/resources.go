package inboxmcp

import (
	"context"
	"encoding/json"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// URIPrefix is where every Inbox resource lives.
const URIPrefix = "kobana://inbox/"

type reader func(ctx context.Context, c *mcpserver.Caller, id string) (any, error)

// record serves a stored record as it is stored: the JSON its tool returns.
func (p *Product) record(kind string) reader {
	return func(ctx context.Context, c *mcpserver.Caller, id string) (any, error) {
		rec, err := p.opts.Store.GetRecord(ctx, c.Workspace, kind, id)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(rec.Data), nil
	}
}

func (p *Product) resources() []mcpserver.Resource {
	tmpl := func(path, name, title, desc, tool string, read reader) mcpserver.Resource {
		return mcpserver.Resource{Template: URIPrefix + path, Name: name, Title: title, Description: desc, Tool: tool, MIMEType: "application/json",
			Read: func(ctx context.Context, c *mcpserver.Caller, uri string, params map[string]string) (any, error) {
				return read(ctx, c, params["id"])
			}}
	}
	return []mcpserver.Resource{
		{URI: URIPrefix + "models", Name: "models", Title: "LLM models",
			Description: "The LLM models an agent can run on, with their prices (JSON).", Tool: ToolModelsList, MIMEType: "application/json",
			Read: func(ctx context.Context, c *mcpserver.Caller, uri string, _ map[string]string) (any, error) {
				return ModelList{Models: inbox.Models()}, nil
			}},
		{URI: URIPrefix + "usage", Name: "usage", Title: "Usage, last 30 days",
			Description: "E-mails processed, runs, tokens and cost of the workspace over the last 30 days (JSON).", Tool: ToolUsageGet, MIMEType: "application/json",
			Read: func(ctx context.Context, c *mcpserver.Caller, uri string, _ map[string]string) (any, error) {
				from, to, _ := p.period("")
				return inbox.UsageOf(ctx, p.repo, c.Workspace, from, to)
			}},
		tmpl("workspaces/{id}", "workspace", "Workspace", "One workspace, with its limits (JSON).", ToolWorkspacesGet,
			func(ctx context.Context, c *mcpserver.Caller, id string) (any, error) {
				return p.getWorkspace(ctx, c, id)
			}),
		tmpl("inboxes/{id}", "inbox", "Inbox", "One inbox: address, agent, recipients, filters and attachment rules (JSON).", ToolInboxesGet,
			p.record(inbox.KindInbox)),
		tmpl("emails/{id}", "email", "E-mail", "One received e-mail: headers, body, attachments and processing status (JSON).", ToolEmailsGet,
			p.record(inbox.KindEmail)),
		tmpl("emails/{id}/eml", "email-eml", "Raw e-mail download", "A short-lived signed URL to download the raw .eml (JSON).", ToolEmailsEML,
			func(ctx context.Context, c *mcpserver.Caller, id string) (any, error) {
				return p.emlLink(ctx, c, id)
			}),
		tmpl("agents/{id}", "agent", "Agent", "One AI agent: model, system message and skills (JSON).", ToolAgentsGet,
			p.record(inbox.KindAgent)),
		tmpl("agent-runs/{id}", "agent-run", "Agent run", "One agent run: status, output, tokens and cost (JSON).", ToolAgentRunsGet,
			p.record(inbox.KindAgentRun)),
		tmpl("workflow-runs/{id}", "workflow-run", "Workflow run", "One workflow run: the steps and their outcome, secrets redacted (JSON).", ToolWorkflowRunsGet,
			func(ctx context.Context, c *mcpserver.Caller, id string) (any, error) {
				// Read with the run record's types, like workflow_runs_get:
				// a record an earlier version wrote is served in today's
				// shape.
				return p.workflowRunsGet(ctx, c, WorkflowRunIDArg{ID: id})
			}),
		tmpl("webhooks/{id}", "webhook", "Webhook", "One outbound webhook: URL, events and status (JSON).", ToolWebhooksGet,
			p.record(inbox.KindWebhook)),
		tmpl("system-events/{id}", "system-event", "System event", "One entry of the event log, with its payload (JSON).", ToolSystemEventsGet,
			p.record(inbox.KindEvent)),
	}
}
