package inbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// Record kinds in store.Records.
const (
	KindWorkspace   = "workspace"
	KindInbox       = "inbox"
	KindEmail       = "email"
	KindAgent       = "agent"
	KindAgentRun    = "agent_run"
	KindWorkflowRun = "workflow_run"
	KindWebhook     = "webhook"
	KindDelivery    = "webhook_delivery"
	KindEvent       = "system_event"
)

// Limits are a workspace's plan limits.
type Limits struct {
	EmailsPerMonth     int   `json:"emails_per_month"`
	Inboxes            int   `json:"inboxes"`
	Agents             int   `json:"agents"`
	Webhooks           int   `json:"webhooks"`
	MaxAttachmentBytes int64 `json:"max_attachment_bytes"`
	RetentionDays      int   `json:"retention_days"`
}

// Workspace is the product's view of a workspace.
type Workspace struct {
	ID             string    `json:"id"`
	OrganizationID string    `json:"organization_id"`
	Name           string    `json:"name"`
	Slug           string    `json:"slug,omitempty"`
	ExternalID     string    `json:"external_id,omitempty"`
	Plan           string    `json:"plan"`
	Environment    string    `json:"environment"`
	Limits         Limits    `json:"limits"`
	CreatedAt      time.Time `json:"created_at"`
}

// Filters decide which incoming e-mails an inbox accepts.
type Filters struct {
	SubjectContains   []string `json:"subject_contains,omitempty" jsonschema:"accept only e-mails whose subject contains one of these (case-insensitive)"`
	RejectAutoReplies bool     `json:"reject_auto_replies,omitempty" jsonschema:"drop out-of-office and other automatic replies"`
}

// AttachmentRules constrain the attachments an inbox accepts.
type AttachmentRules struct {
	MaxBytes     int64    `json:"max_bytes,omitempty" jsonschema:"largest accepted attachment in bytes"`
	AllowedTypes []string `json:"allowed_types,omitempty" jsonschema:"accepted media types, e.g. application/pdf; empty accepts all"`
	Required     bool     `json:"required,omitempty" jsonschema:"reject e-mails without any attachment"`
}

// Inbox is a receiving address with its agent.
type Inbox struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Address string `json:"address"`
	AgentID string `json:"agent_id,omitempty"`
	// Recipients are the senders allowed to write to the inbox (addresses
	// or @domain); empty means anyone.
	Recipients      []string        `json:"recipients"`
	Filters         Filters         `json:"filters"`
	AttachmentRules AttachmentRules `json:"attachment_rules"`
	Status          string          `json:"status"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
}

// AttachmentInfo describes one attachment of an e-mail, in message order.
type AttachmentInfo struct {
	Index       int    `json:"index"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// Email is a received message.
type Email struct {
	ID            string            `json:"id"`
	InboxID       string            `json:"inbox_id"`
	MessageID     string            `json:"message_id"`
	From          string            `json:"from"`
	To            []string          `json:"to"`
	Cc            []string          `json:"cc,omitempty"`
	Subject       string            `json:"subject"`
	Date          time.Time         `json:"date"`
	Headers       map[string]string `json:"headers"`
	Text          string            `json:"text"`
	Attachments   []AttachmentInfo  `json:"attachments"`
	SizeBytes     int               `json:"size_bytes"`
	Status        string            `json:"status"`
	StatusDetail  string            `json:"status_detail,omitempty"`
	AgentRunID    string            `json:"agent_run_id,omitempty"`
	WorkflowRunID string            `json:"workflow_run_id,omitempty"`
	ReceivedAt    time.Time         `json:"received_at"`
}

// Agent is an AI agent that analyses e-mails.
type Agent struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Model         string    `json:"model"`
	SystemMessage string    `json:"system_message"`
	Skills        []string  `json:"skills"`
	Status        string    `json:"status"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Tokens counts model tokens.
type Tokens struct {
	Input  int `json:"input"`
	Output int `json:"output"`
}

// AgentRun is one analysis of one e-mail by an agent.
type AgentRun struct {
	ID            string          `json:"id"`
	AgentID       string          `json:"agent_id"`
	EmailID       string          `json:"email_id"`
	InboxID       string          `json:"inbox_id"`
	Model         string          `json:"model"`
	Status        string          `json:"status"`
	Cause         string          `json:"cause,omitempty"`
	Error         string          `json:"error,omitempty"`
	Output        json.RawMessage `json:"output,omitempty"`
	Tokens        Tokens          `json:"tokens"`
	CostUSD       float64         `json:"cost_usd"`
	WorkflowRunID string          `json:"workflow_run_id,omitempty"`
	ReprocessOf   string          `json:"reprocess_of,omitempty"`
	StartedAt     time.Time       `json:"started_at"`
	FinishedAt    time.Time       `json:"finished_at"`
}

// WorkflowRun is the redacted record of one workflow execution (SPEC Part 1).
type WorkflowRun struct {
	ID         string          `json:"id"`
	AgentRunID string          `json:"agent_run_id"`
	EmailID    string          `json:"email_id"`
	InboxID    string          `json:"inbox_id"`
	Status     string          `json:"status"`
	Steps      json.RawMessage `json:"steps"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
}

// Webhook is an outbound notification endpoint.
type Webhook struct {
	ID           string    `json:"id"`
	URL          string    `json:"url"`
	Description  string    `json:"description,omitempty"`
	Events       []string  `json:"events"`
	Status       string    `json:"status"`
	SecretHint   string    `json:"secret_hint"`
	FailingSince time.Time `json:"failing_since,omitzero"`
	LastDelivery time.Time `json:"last_delivery_at,omitzero"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// Delivery is one attempt to deliver an event to a webhook.
type Delivery struct {
	ID           string          `json:"id"`
	WebhookID    string          `json:"webhook_id"`
	Event        string          `json:"event"`
	Payload      json.RawMessage `json:"payload"`
	Status       string          `json:"status"`
	HTTPStatus   int             `json:"http_status,omitempty"`
	Error        string          `json:"error,omitempty"`
	ResponseBody string          `json:"response_body,omitempty"`
	DurationMS   int64           `json:"duration_ms"`
	ReplayOf     string          `json:"replay_of,omitempty"`
	AttemptedAt  time.Time       `json:"attempted_at"`
}

// SystemEvent is one entry of the workspace's event log.
type SystemEvent struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Actor     string          `json:"actor"`
	Subject   string          `json:"subject,omitempty"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"created_at"`
}

// newID returns a fresh id with a kind prefix.
func newID(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// repo reads and writes typed records of one workspace.
type repo struct {
	st store.Records
}

func (r repo) get(ctx context.Context, ws, kind, id string, v any) error {
	rec, err := r.st.GetRecord(ctx, ws, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s %q: %w", kind, id, mcpserver.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(rec.Data, v); err != nil {
		return fmt.Errorf("decoding %s %s: %w", kind, id, err)
	}
	return nil
}

func (r repo) put(ctx context.Context, ws, kind, id, parent, status string, created time.Time, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s %s: %w", kind, id, err)
	}
	return r.st.PutRecord(ctx, store.Record{Workspace: ws, Kind: kind, ID: id, Parent: parent, Status: status, Created: created, Data: b})
}

func (r repo) delete(ctx context.Context, ws, kind, id string) error {
	err := r.st.DeleteRecord(ctx, ws, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s %q: %w", kind, id, mcpserver.ErrNotFound)
	}
	return err
}

// list decodes a listing into a slice of T and returns the cursor of the
// next page ("" when this page was not full).
func list[T any](ctx context.Context, r repo, ws, kind string, q store.Query) ([]T, string, error) {
	recs, err := r.st.ListRecords(ctx, ws, kind, q)
	if err != nil {
		return nil, "", err
	}
	out := make([]T, 0, len(recs))
	for _, rec := range recs {
		var v T
		if err := json.Unmarshal(rec.Data, &v); err != nil {
			return nil, "", fmt.Errorf("decoding %s %s: %w", kind, rec.ID, err)
		}
		out = append(out, v)
	}
	next := ""
	if n := len(recs); n > 0 && n == q.Limit {
		next = cursor(recs[n-1])
	}
	return out, next, nil
}

// cursor names the position after a record in listing order.
func cursor(r store.Record) string {
	return r.Created.UTC().Format(time.RFC3339Nano) + "|" + r.ID
}
