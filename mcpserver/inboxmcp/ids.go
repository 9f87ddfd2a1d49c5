package inboxmcp

// Inputs naming one record. Each id has its kind's prefix (ibx_, eml_, …);
// the patterns say so, and the lookup is exact: " eml_1" is not eml_1.

// InboxIDArg names an inbox.
type InboxIDArg struct {
	ID string `json:"id" jsonschema:"the inbox id, e.g. ibx_invoices (see inboxes_list)" pattern:"^ibx_[A-Za-z0-9_-]{1,64}$"`
}

// EmailIDArg names an e-mail.
type EmailIDArg struct {
	ID string `json:"id" jsonschema:"the e-mail id, e.g. eml_inv_00 (see emails_list)" pattern:"^eml_[A-Za-z0-9_-]{1,64}$"`
}

// AgentIDArg names an agent.
type AgentIDArg struct {
	ID string `json:"id" jsonschema:"the agent id, e.g. agt_invoices (see agents_list)" pattern:"^agt_[A-Za-z0-9_-]{1,64}$"`
}

// AgentRunIDArg names an agent run.
type AgentRunIDArg struct {
	ID string `json:"id" jsonschema:"the agent run id, e.g. arun_inv_00 (see agent_runs_list)" pattern:"^arun_[A-Za-z0-9_-]{1,64}$"`
}

// WorkflowRunIDArg names a workflow run.
type WorkflowRunIDArg struct {
	ID string `json:"id" jsonschema:"the workflow run id, e.g. wrun_inv_00 (see workflow_runs_list)" pattern:"^wrun_[A-Za-z0-9_-]{1,64}$"`
}

// WebhookIDArg names a webhook.
type WebhookIDArg struct {
	ID string `json:"id" jsonschema:"the webhook id, e.g. whk_erp (see webhooks_list)" pattern:"^whk_[A-Za-z0-9_-]{1,64}$"`
}

// EventIDArg names an entry of the event log.
type EventIDArg struct {
	ID string `json:"id" jsonschema:"the event id, e.g. evt_0001 (see system_events_list)" pattern:"^evt_[A-Za-z0-9_-]{1,64}$"`
}
