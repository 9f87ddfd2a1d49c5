package inbox

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kobana/workflow/runrecord"
)

// Event types of the event log (SystemEvent.Type) and of webhook
// deliveries. The e-mail and run events are what the pipeline records and
// what webhooks subscribe to; the others record what people changed.
const (
	// EventEmailReceived: an e-mail was accepted and stored; its agent runs next.
	EventEmailReceived = "email.received"
	// EventEmailRejected: an e-mail was refused (sender, filters or
	// attachment rules) and recorded with the reason; no agent ran.
	EventEmailRejected = "email.rejected"
	// EventEmailDuplicate: a copy of an e-mail the inbox had already
	// received was recorded as its duplicate; no agent ran.
	EventEmailDuplicate = "email.duplicate"
	// EventEmailProcessed: the agent (and the workflow, if any) succeeded.
	EventEmailProcessed = "email.processed"
	// EventEmailFailed: the agent run or its workflow failed.
	EventEmailFailed = "email.failed"
	// EventEmailReprocessed: someone ran the agent on an e-mail again.
	EventEmailReprocessed = "email.reprocessed"
	// EventEmailDeleted: someone deleted an e-mail and its raw message.
	EventEmailDeleted = "email.deleted"
	// EventEmailPurged: retention deleted an e-mail's raw message.
	EventEmailPurged = "email.purged"
	// EventAgentRunFailed: an agent run ended in failure (see its cause).
	EventAgentRunFailed = "agent_run.failed"
	// EventAgentRunRetryScheduled: an agent run failed for a cause that
	// may pass, and the agent runs on the e-mail again at next_attempt_at.
	EventAgentRunRetryScheduled = "agent_run.retry_scheduled"
	// EventWorkflowRunFailed: a workflow run had a step that failed or was skipped.
	EventWorkflowRunFailed = "workflow_run.failed"

	EventInboxCreated          = "inbox.created"
	EventInboxUpdated          = "inbox.updated"
	EventInboxDeleted          = "inbox.deleted"
	EventInboxRecipientAdded   = "inbox.recipient_added"
	EventInboxRecipientRemoved = "inbox.recipient_removed"
	EventAgentCreated          = "agent.created"
	EventAgentUpdated          = "agent.updated"
	EventAgentDeleted          = "agent.deleted"
	EventSecretSet             = "secret.set"
	EventSecretDeleted         = "secret.deleted"
	EventWebhookCreated        = "webhook.created"
	EventWebhookUpdated        = "webhook.updated"
	EventWebhookDeleted        = "webhook.deleted"
	EventWebhookSecretRotated  = "webhook.secret_rotated"
	// EventWorkspaceRetentionSet: someone changed how long the workspace
	// keeps raw messages.
	EventWorkspaceRetentionSet = "workspace.retention_set"
	// EventWebhookTest is the event webhooks_test sends (never subscribed to).
	EventWebhookTest = "webhook.test"
	// EventDeliveryDelivered and EventDeliveryFailed record each delivery
	// attempt's outcome.
	EventDeliveryDelivered = "webhook.delivery_delivered"
	EventDeliveryFailed    = "webhook.delivery_failed"
)

// WorkflowRunFailed is the payload of EventWorkflowRunFailed: the run, its
// status (failed or interrupted) and error, and the steps that did not
// succeed. Its fields are in the order the payload has always had.
type WorkflowRunFailed struct {
	AgentRunID    string           `json:"agent_run_id"`
	EmailID       string           `json:"email_id"`
	Error         string           `json:"error"`
	FailedSteps   []int            `json:"failed_steps"`
	InboxID       string           `json:"inbox_id"`
	Status        runrecord.Status `json:"status"`
	WorkflowRunID string           `json:"workflow_run_id"`
}

// webhookEvents are the events a webhook can subscribe to.
var webhookEvents = []string{EventEmailReceived, EventEmailRejected, EventEmailProcessed, EventEmailFailed, EventAgentRunFailed, EventWorkflowRunFailed}

// WebhookEvents returns the events a webhook can subscribe to.
func WebhookEvents() []string { return slices.Clone(webhookEvents) }

// IsWebhookEvent reports whether a webhook can subscribe to an event.
func IsWebhookEvent(e string) bool { return slices.Contains(webhookEvents, e) }

// ActorSystem is the actor of what the platform did on its own.
const ActorSystem = "system"

// PersonActor is the actor of what a person did.
func PersonActor(person string) string { return "person:" + person }

// NewEvent builds an event-log entry with a fresh id; payload is encoded
// as JSON.
func NewEvent(typ, actor, subject string, payload any, at time.Time) (SystemEvent, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return SystemEvent{}, fmt.Errorf("encoding event %s: %w", typ, err)
	}
	return SystemEvent{ID: NewID("evt"), Type: typ, Actor: actor, Subject: subject, Payload: b, CreatedAt: at.UTC()}, nil
}
