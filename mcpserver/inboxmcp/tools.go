package inboxmcp

import "github.com/kobana/workflow/mcpserver"

// Tool names. Resources, prompts and completions refer to tools by these.
const (
	ToolWorkspacesGet             = "workspaces_get"
	ToolWorkspacesSetRetention    = "workspaces_set_retention"
	ToolModelsList                = "models_list"
	ToolUsageGet                  = "usage_get"
	ToolInboxesList               = "inboxes_list"
	ToolInboxesGet                = "inboxes_get"
	ToolInboxesCreate             = "inboxes_create"
	ToolInboxesUpdate             = "inboxes_update"
	ToolInboxesDelete             = "inboxes_delete"
	ToolInboxesAddRecipient       = "inboxes_add_recipient"
	ToolInboxesRemoveRecipient    = "inboxes_remove_recipient"
	ToolEmailsList                = "emails_list"
	ToolEmailsGet                 = "emails_get"
	ToolEmailsEML                 = "emails_eml"
	ToolEmailsDelete              = "emails_delete"
	ToolEmailsReprocess           = "emails_reprocess"
	ToolAgentsList                = "agents_list"
	ToolAgentsGet                 = "agents_get"
	ToolAgentsCreate              = "agents_create"
	ToolAgentsUpdate              = "agents_update"
	ToolAgentsDelete              = "agents_delete"
	ToolAgentRunsList             = "agent_runs_list"
	ToolAgentRunsGet              = "agent_runs_get"
	ToolWorkflowRunsList          = "workflow_runs_list"
	ToolWorkflowRunsGet           = "workflow_runs_get"
	ToolWebhooksList              = "webhooks_list"
	ToolWebhooksGet               = "webhooks_get"
	ToolWebhooksCreate            = "webhooks_create"
	ToolWebhooksUpdate            = "webhooks_update"
	ToolWebhooksDelete            = "webhooks_delete"
	ToolWebhooksTest              = "webhooks_test"
	ToolWebhooksDeliveriesList    = "webhooks_deliveries_list"
	ToolWebhooksDeliveriesReplay  = "webhooks_deliveries_replay"
	ToolWebhooksDeliveriesRecover = "webhooks_deliveries_recover"
	ToolWebhooksRotateSecret      = "webhooks_rotate_secret"
	ToolSecretsList               = "secrets_list"
	ToolSecretsSet                = "secrets_set"
	ToolSecretsDelete             = "secrets_delete"
	ToolSystemEventsList          = "system_events_list"
	ToolSystemEventsGet           = "system_events_get"
	ToolWorkflowsValidate         = "workflows_validate"
	ToolWorkflowsPlan             = "workflows_plan"
)

// tools declares every tool: its spec beside its handler (and, for a
// destructive tool, the check that runs before the user is asked). The
// order is tools/list's.
func (p *Product) tools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWorkspacesGet, Title: "Get workspace",
			Description: "Returns the token's workspace: name, slug, plan, environment and limits (e-mails per month, inboxes, agents, webhooks, attachment size, retention). Use it to check what the plan allows before creating records.",
			Access:      mcpserver.Read, Idempotent: true},
			p.workspacesGet),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWorkspacesSetRetention, Title: "Set retention",
			Description: "Sets how many days the workspace keeps each e-mail's raw message (the .eml and its attachments), counted from when the e-mail was received; at most what the plan allows (limits.retention_days), 0 for as long as the plan allows. Retention runs when the server starts and every hour: messages older than the new value are then deleted for good (the e-mail records stay, but workflows can no longer read their attachments). The user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			p.workspacesSetRetention), p.checkRetention),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolModelsList, Title: "List models",
			Description: "Lists the LLM models an agent can run on, with context size and prices in USD per million input and output tokens. Use a model id from here in agents_create or agents_update.",
			Access:      mcpserver.Read, Idempotent: true},
			p.modelsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolUsageGet, Title: "Get usage",
			Description: "Returns what the workspace processed and spent: e-mails received and processed, agent and workflow runs (and failures), tokens and cost in USD, by model. Without arguments it covers the last 30 days; pass month (YYYY-MM) for a calendar month.",
			Access:      mcpserver.Read, Idempotent: true},
			p.usageGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInboxesList, Title: "List inboxes",
			Description: "Lists the workspace's inboxes, most recent first: address, agent, allowed senders, filters and attachment rules. Page with limit and cursor (the next_cursor of the previous page).",
			Access:      mcpserver.Read, Idempotent: true},
			p.inboxesList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInboxesGet, Title: "Get inbox",
			Description: "Returns one inbox: its address, agent, allowed senders (recipients), filters and attachment rules.",
			Access:      mcpserver.Read, Idempotent: true},
			p.inboxesGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInboxesCreate, Title: "Create inbox",
			Description: "Creates an inbox with the address <local_part>@<workspace>." + p.opts.MailDomain + ". Attach an agent (agent_id) so each e-mail is analysed; restrict senders with recipients. Returns the new inbox.",
			Access:      mcpserver.Write},
			p.inboxesCreate),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInboxesUpdate, Title: "Update inbox",
			Description: "Changes an inbox's name, agent, status (active/paused), filters or attachment rules; fields left out stay as they are. To change who may send, use inboxes_add_recipient / inboxes_remove_recipient.",
			Access:      mcpserver.Write, Idempotent: true},
			p.inboxesUpdate),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInboxesDelete, Title: "Delete inbox",
			Description: "Deletes an inbox: its address stops receiving mail at once. E-mails already received are kept. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			p.inboxesDelete), p.checkInbox),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInboxesAddRecipient, Title: "Allow a sender",
			Description: "Allows a sender address (or a whole @domain) to write to an inbox, whose agent will then act on their e-mails. The user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, Idempotent: true},
			p.inboxesAddRecipient), p.checkRecipientChange),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInboxesRemoveRecipient, Title: "Remove a sender",
			Description: "Stops a sender address (or @domain) from writing to an inbox. When the last one is removed the inbox accepts anyone again. The user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, Idempotent: true},
			p.inboxesRemoveRecipient), p.checkRecipientChange),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolEmailsList, Title: "List e-mails",
			Description: "Lists received e-mails, most recent first, optionally of one inbox, in one status (pending, processed, failed, rejected, duplicate), from a sender (from), received between two days (since, until) or whose subject, sender or Message-ID contains a text (search); counts adds how many e-mails each status holds under the other filters. Each item has the sender, subject, number of attachments, the agent run that processed it, and for a duplicate the e-mail it is a copy of. Use emails_get for the body.",
			Access:      mcpserver.Read, Idempotent: true},
			p.emailsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolEmailsGet, Title: "Get e-mail",
			Description: "Returns one received e-mail: headers, text body, attachments (index, filename, type, size — the N of ${{email.attachments.N}}) and processing status with its agent and workflow runs.",
			Access:      mcpserver.Read, Idempotent: true},
			p.emailsGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolEmailsEML, Title: "Download raw e-mail",
			Description: "Returns a signed URL to download the raw .eml of an e-mail, valid for 5 minutes. Hand it to the user or fetch it; the URL is the credential, so do not post it anywhere public.",
			Access:      mcpserver.Read},
			p.emailsEML),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolEmailsDelete, Title: "Delete e-mail",
			Description: "Deletes an e-mail and its raw .eml. Its agent and workflow runs are kept, but workflows can no longer read its attachments. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, Idempotent: true},
			p.emailsDelete), p.checkEmail),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolEmailsReprocess, Title: "Reprocess e-mail",
			Description: "Runs the inbox's agent on the e-mail again and executes the workflow it answers with (mode restart, the default): outgoing requests are really sent again, with new step identities. With mode resume, takes up the e-mail's interrupted workflow run instead: the steps it ended are not sent again (their recorded responses answer the steps after them), the step whose outcome is unknown is sent again with the same X-Kobana-Step-Id and Idempotency-Key, so a receiver that honours the key does its work once, and the later steps follow. The answer is status queued; the runs appear on the e-mail as they finish. The user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			p.emailsReprocess), p.checkReprocess),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolAgentsList, Title: "List agents",
			Description: "Lists the workspace's AI agents, most recent first, with model, system message and skills.",
			Access:      mcpserver.Read, Idempotent: true},
			p.agentsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolAgentsGet, Title: "Get agent",
			Description: "Returns one agent: model, system message, skills and status.",
			Access:      mcpserver.Read, Idempotent: true},
			p.agentsGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolAgentsCreate, Title: "Create agent",
			Description: "Creates an AI agent on a model from models_list with a system message. Attach it to an inbox with inboxes_update (agent_id). Returns the agent.",
			Access:      mcpserver.Write},
			p.agentsCreate),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolAgentsUpdate, Title: "Update agent",
			Description: "Changes an agent's name, model, system message, skills or status (active/paused); fields left out stay as they are. New e-mails use the new configuration.",
			Access:      mcpserver.Write, Idempotent: true},
			p.agentsUpdate),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolAgentsDelete, Title: "Delete agent",
			Description: "Deletes an agent. Inboxes using it stop processing e-mails until another agent is attached. Its past runs are kept. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			p.agentsDelete), p.checkAgent),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolAgentRunsList, Title: "List agent runs",
			Description: "Lists agent runs, most recent first, optionally of one agent, in one status (succeeded, failed) or since a date. A failed run has a cause (model_timeout, invalid_output, workflow_failed, rate_limited, provider_error, …) and an error.",
			Access:      mcpserver.Read, Idempotent: true},
			p.agentRunsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolAgentRunsGet, Title: "Get agent run",
			Description: "Returns one agent run: status, failure cause and error, the agent's output ({result, workflow}), tokens, cost and the workflow run it started.",
			Access:      mcpserver.Read, Idempotent: true},
			p.agentRunsGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWorkflowRunsList, Title: "List workflow runs",
			Description: "Lists workflow runs, most recent first, optionally of one agent run or in one status (succeeded, failed).",
			Access:      mcpserver.Read, Idempotent: true},
			p.workflowRunsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWorkflowRunsGet, Title: "Get workflow run",
			Description: "Returns one workflow run: each step's state (succeeded, failed, skipped), error, the request as sent and the response, with secrets shown as [redacted secrets.KEY] and attachments described, never their bytes.",
			Access:      mcpserver.Read, Idempotent: true},
			p.workflowRunsGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksList, Title: "List webhooks",
			Description: "Lists outbound webhooks, most recent first: URL, events, status (active, failing, disabled) and since when a failing one fails.",
			Access:      mcpserver.Read, Idempotent: true},
			p.webhooksList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksGet, Title: "Get webhook",
			Description: "Returns one webhook: URL, events, status and the last characters of its signing secret (never the secret).",
			Access:      mcpserver.Read, Idempotent: true},
			p.webhooksGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksCreate, Title: "Create webhook",
			Description: "Creates an outbound webhook that receives the chosen events as signed JSON POSTs. Returns the signing secret once: tell the user to store it, it cannot be read again (rotate it with webhooks_rotate_secret).",
			Access:      mcpserver.Write},
			p.webhooksCreate),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksUpdate, Title: "Update webhook",
			Description: "Changes a webhook's URL, events, description or status (active/disabled); fields left out stay as they are.",
			Access:      mcpserver.Write, Idempotent: true},
			p.webhooksUpdate),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksDelete, Title: "Delete webhook",
			Description: "Deletes a webhook and its signing secret; its delivery history is kept. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			p.webhooksDelete), p.checkWebhook),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksTest, Title: "Test webhook",
			Description: "Sends a signed webhook.test event to the webhook's URL now and returns the delivery: HTTP status, response and duration. This calls a system outside Kobana; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			p.webhooksTest), p.checkWebhookTest),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksDeliveriesList, Title: "List webhook deliveries",
			Description: "Lists delivery attempts, most recent first, optionally of one webhook, in one status (delivered, failed), of the events about one e-mail (email_id) or recorded since a time (since), with HTTP status, error and response excerpt.",
			Access:      mcpserver.Read, Idempotent: true},
			p.webhooksDeliveriesList),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksDeliveriesReplay, Title: "Replay delivery",
			Description: "Sends a past delivery's event to its webhook again now, as one more attempt of the same delivery (same id, so the receiver can deduplicate; marked x-kobana-replay-of), signed with the current secret; returns the delivery with the attempt recorded. A success ends the delivery (its scheduled retry does not also fire). This calls a system outside Kobana; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			p.webhooksDeliveriesReplay), p.checkReplay),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksDeliveriesRecover, Title: "Recover failed deliveries",
			Description: "Sends again every failed delivery of a webhook whose event was recorded since a time, oldest first, each as webhooks_deliveries_replay does (one more attempt of the same delivery, same id), at most 100 per call (more says some are left: call again). Use it once a receiver that was down is back. Returns each delivery's outcome. This calls a system outside Kobana; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			p.webhooksDeliveriesRecover), p.checkRecover),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWebhooksRotateSecret, Title: "Rotate webhook secret",
			Description: "Replaces a webhook's signing secret and returns the new one once. For overlap_hours (default 24) deliveries carry a signature from the previous secret beside the new one's, so the receiver can switch to the new secret without refusing any. The user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true},
			p.webhooksRotateSecret), p.checkRotate),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSecretsList, Title: "List secrets",
			Description: "Lists the names of the workspace's secrets (never their values), when each was last set, and the hosts each may be sent to when it is bound to some. Workflows use them as ${{secrets.NAME}}.",
			Access:      mcpserver.Read, Idempotent: true},
			p.secretsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSecretsSet, Title: "Set secret",
			Description: "Creates or replaces a workspace secret that workflows reference as ${{secrets.NAME}}. The value is stored encrypted, redacted from every run record, and never returned by any tool. Give destinations to bind the secret to the hosts it may be sent to: a workflow step that would put it into a request to any other host fails before sending (a secret that is a URL is bound to its own host unless given others).",
			Access:      mcpserver.Admin, Idempotent: true},
			p.secretsSet),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSecretsDelete, Title: "Delete secret",
			Description: "Deletes a workspace secret. Workflow steps that reference it will fail before sending. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			p.secretsDelete), p.checkSecret),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSystemEventsList, Title: "List system events",
			Description: "Lists the workspace's event log, most recent first: who changed what (inbox.created, secret.set, …) and what the platform did (webhook.delivery_failed, email.reprocessed, …). Filter by type.",
			Access:      mcpserver.Read, Idempotent: true},
			p.systemEventsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSystemEventsGet, Title: "Get system event",
			Description: "Returns one entry of the event log with its payload.",
			Access:      mcpserver.Read, Idempotent: true},
			p.systemEventsGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWorkflowsValidate, Title: "Validate workflow",
			Description: "Checks an agent output document ({\"result\": …, \"workflow\": [steps]}) with the platform's workflow linter without running anything, and returns ok plus diagnostics with codes, messages, JSON pointers and line:column positions. Use it while writing an agent's system message or a workflow.",
			Access:      mcpserver.Read, Idempotent: true},
			p.workflowsValidate),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolWorkflowsPlan, Title: "Plan workflow (dry run)",
			Description: "Shows, without sending anything, the exact request each step of an agent output document ({\"result\": …, \"workflow\": [steps]}) would send — method, URL, headers, JSON/text body or multipart layout with sizes — and which steps would fail before sending or be skipped, and why (a secret the workspace lacks, a missing attachment, a forward reference, an address the SSRF guard refuses, a fact that would inject a header). Secrets appear as [redacted secrets.KEY]. Pass email_id to plan against a received e-mail (its attachments and the facts of a run of it), and responses (example responses by step index) to fill in steps.N.response references; without them those show as written. Use it after workflows_validate, before an agent's workflow runs.",
			Access:      mcpserver.Read, Idempotent: true},
			p.workflowsPlan),
	}
}
