package inbox

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/runrecord"
)

// Record kinds, as stored in store.Records.
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

// Statuses of an e-mail.
const (
	// EmailPending: received, not yet processed by its agent.
	EmailPending = "pending"
	// EmailProcessed: its latest agent run (and workflow run) succeeded.
	EmailProcessed = "processed"
	// EmailFailed: its latest agent run or workflow run failed.
	EmailFailed = "failed"
	// EmailRejected: the inbox refused it (sender, filters or attachment
	// rules); StatusDetail says why and no agent ran.
	EmailRejected = "rejected"
	// EmailDuplicate: another copy of a message the inbox had already
	// received (the same Message-ID, or the same bytes when it has none),
	// as a sender whose 250 was lost sends it again; DuplicateOf names the
	// first copy, StatusDetail says how it was matched, and no agent ran
	// (emails_reprocess runs it on purpose).
	EmailDuplicate = "duplicate"
)

// Statuses of an agent run: the words of a run's record (package
// runrecord), which a workflow run's Status uses with two more (running,
// interrupted).
const (
	RunSucceeded = string(runrecord.RunSucceeded)
	RunFailed    = string(runrecord.RunFailed)
)

// Statuses of inboxes and agents.
const (
	StatusActive = "active"
	StatusPaused = "paused"
)

// Statuses of a webhook.
const (
	WebhookActive   = "active"
	WebhookFailing  = "failing"
	WebhookDisabled = "disabled"
)

// Statuses of a delivery.
const (
	// DeliveryPending: recorded with its event, not yet attempted.
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	// DeliveryFailed: the latest attempt failed; NextAttemptAt says when the
	// next one is due, or is zero when no more are made.
	DeliveryFailed = "failed"
)

// Key is where a record lives in the store: its kind and id, and the two
// columns listings filter on (Parent, Status), with its creation time, the
// listing order.
type Key struct {
	Kind    string
	ID      string
	Parent  string
	Status  string
	Created time.Time
}

// Document is a record type of the Inbox domain. Key says where it is
// stored; it is defined on the value so that the zero value of a type names
// its kind.
type Document interface {
	Key() Key
}

// Limits are a workspace's plan limits. Zero means no limit.
type Limits struct {
	EmailsPerMonth     int   `json:"emails_per_month"`
	Inboxes            int   `json:"inboxes"`
	Agents             int   `json:"agents"`
	Webhooks           int   `json:"webhooks"`
	MaxAttachmentBytes int64 `json:"max_attachment_bytes"`
	RetentionDays      int   `json:"retention_days"`
}

// Workspace is the Inbox's view of a workspace: its plan, environment and
// limits.
type Workspace struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organization_id"`
	Name           string `json:"name"`
	Slug           string `json:"slug,omitempty"`
	ExternalID     string `json:"external_id,omitempty"`
	Plan           string `json:"plan"`
	Environment    string `json:"environment"`
	Limits         Limits `json:"limits"`
	// RetentionDays is how many days the workspace keeps the raw messages
	// of its e-mails, counted from when each was received, as its owner
	// set it (workspaces_set_retention); 0 keeps them as long as the plan
	// allows (Limits.RetentionDays). Retention returns the days in force.
	RetentionDays int `json:"retention_days,omitempty"`
	// MailDomain, when set, is the workspace's own mail domain: its inboxes
	// receive at LOCAL@MAILDOMAIN (see ClaimMailDomain) instead of under
	// the server's.
	MailDomain string    `json:"mail_domain,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// Retention is how many days the workspace keeps raw messages, counted from
// when each e-mail was received: its own setting, never longer than its
// plan allows; 0 keeps them forever.
func (w Workspace) Retention() int {
	plan, own := w.Limits.RetentionDays, w.RetentionDays
	switch {
	case own <= 0:
		return max(plan, 0)
	case plan > 0:
		return min(own, plan)
	}
	return own
}

// Key implements Document.
func (w Workspace) Key() Key {
	return Key{Kind: KindWorkspace, ID: w.ID, Status: StatusActive, Created: w.CreatedAt}
}

// Filters decide which incoming e-mails an inbox accepts (see Screen).
type Filters struct {
	SubjectContains   []string `json:"subject_contains,omitempty" jsonschema:"accept only e-mails whose subject contains one of these (case-insensitive)" maxItems:"50" minLength:"1" maxLength:"200"`
	RejectAutoReplies bool     `json:"reject_auto_replies,omitempty" jsonschema:"drop out-of-office and other automatic replies"`
}

// AttachmentRules constrain the attachments an inbox accepts (see Screen).
type AttachmentRules struct {
	MaxBytes     int64    `json:"max_bytes,omitempty" jsonschema:"largest accepted attachment in bytes; 0 or absent: the plan's limit" minimum:"0"`
	AllowedTypes []string `json:"allowed_types,omitempty" jsonschema:"accepted media types, e.g. application/pdf or image/*; empty accepts all" maxItems:"50" pattern:"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/(\\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})$"`
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

// Key implements Document: inboxes are listed by agent and status.
func (ib Inbox) Key() Key {
	return Key{Kind: KindInbox, ID: ib.ID, Parent: ib.AgentID, Status: ib.Status, Created: ib.CreatedAt}
}

// AttachmentInfo describes one attachment of an e-mail, in message order
// (the N of ${{email.attachments.N}}).
type AttachmentInfo struct {
	Index       int    `json:"index"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	// Defects are the repairs the reader made to read this attachment from
	// a damaged message (missing base64 padding, an unknown transfer
	// encoding passed through raw, …); none for a well-formed part.
	Defects []AttachmentDefect `json:"defects,omitempty"`
}

// AttachmentDefect is one repair made while reading an attachment: a stable
// code (see package resolve/eml) and a sentence for people.
type AttachmentDefect struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Results of a sender check (SPF, DKIM, DMARC), as RFC 8601
// Authentication-Results name them.
const (
	AuthPass      = "pass"
	AuthFail      = "fail"
	AuthSoftFail  = "softfail"
	AuthNeutral   = "neutral"
	AuthNone      = "none"
	AuthTempError = "temperror"
	AuthPermError = "permerror"
)

// AuthCheck is the outcome of one sender check.
type AuthCheck struct {
	// Result is one of the Auth* constants.
	Result string `json:"result"`
	// Domain is the domain the check was about: the MAIL FROM (or HELO)
	// domain for SPF, the signing domain (d=) for DKIM, the From domain for
	// DMARC.
	Domain string `json:"domain,omitempty"`
	// Selector is the DKIM selector (s=); empty for SPF and DMARC.
	Selector string `json:"selector,omitempty"`
	// Detail explains a result other than pass, for people.
	Detail string `json:"detail,omitempty"`
}

// SenderAuth is what the intake learned about who sent an e-mail.
type SenderAuth struct {
	// EnvelopeFrom is the SMTP MAIL FROM address ("" for a bounce, or when
	// the e-mail came over HTTP).
	EnvelopeFrom string `json:"envelope_from,omitempty"`
	// Client is the address of the SMTP client judged, when there was one:
	// the connecting client, or the one a trusted relay received the
	// message from (Relay).
	Client string `json:"client,omitempty"`
	// Helo is Client's HELO/EHLO name.
	Helo string `json:"helo,omitempty"`
	// Relay is the address of the trusted relay that handed the message
	// over, when one did.
	Relay string `json:"relay,omitempty"`
	// NullSender says the message came over SMTP with the null reverse path
	// (MAIL FROM:<>): a bounce, a delivery report or an automatic response
	// (RFC 5321 §4.5.5, RFC 3834 §3.1.9).
	NullSender bool        `json:"null_sender,omitempty"`
	SPF        AuthCheck   `json:"spf"`
	DKIM       []AuthCheck `json:"dkim"`
	DMARC      AuthCheck   `json:"dmarc"`
	// AuthenticatedFrom is the From address when DMARC passed (the From
	// domain is aligned with a passing SPF or DKIM identity), lower-cased;
	// empty when the sender is not authenticated. It is the identity an
	// inbox's recipients are matched against (see Inbox.AllowsSender).
	AuthenticatedFrom string `json:"authenticated_from,omitempty"`
}

// Email is a received message.
type Email struct {
	ID        string    `json:"id"`
	InboxID   string    `json:"inbox_id"`
	MessageID string    `json:"message_id"`
	From      string    `json:"from"`
	To        []string  `json:"to"`
	Cc        []string  `json:"cc,omitempty"`
	Subject   string    `json:"subject"`
	Date      time.Time `json:"date"`
	// Headers are the headers an e-mail record keeps (KeptHeaders), decoded.
	Headers     map[string]string `json:"headers"`
	Text        string            `json:"text"`
	Attachments []AttachmentInfo  `json:"attachments"`
	// Auth is the outcome of the sender checks; nil when the e-mail did not
	// come through an intake that checks senders (the demo's records).
	Auth      *SenderAuth `json:"auth,omitempty"`
	SizeBytes int         `json:"size_bytes"`
	// Status is one of the Email* constants; StatusDetail says why an e-mail
	// failed (the agent run's cause) or was rejected (the Rejection).
	Status       string `json:"status"`
	StatusDetail string `json:"status_detail,omitempty"`
	// DuplicateOf is the e-mail this one is a copy of (status
	// EmailDuplicate).
	DuplicateOf   string `json:"duplicate_of,omitempty"`
	AgentRunID    string `json:"agent_run_id,omitempty"`
	WorkflowRunID string `json:"workflow_run_id,omitempty"`
	// NextAttemptAt, on a pending e-mail, is when its agent runs again: its
	// last run failed for a cause that may pass (the model was unavailable,
	// rate-limited or did not answer in time), and the pipeline's schedule
	// tries it again (StatusDetail says why).
	NextAttemptAt time.Time `json:"next_attempt_at,omitzero"`
	ReceivedAt    time.Time `json:"received_at"`
	// Purged is set when retention deleted the raw message: the record stays,
	// its attachments can no longer be read. PurgedAt says when.
	Purged   bool      `json:"purged,omitempty"`
	PurgedAt time.Time `json:"purged_at,omitzero"`
}

// MarkDuplicate marks an e-mail as another copy of e-mail of: status
// EmailDuplicate, DuplicateOf, and how the copies were matched (detail) as
// its status detail.
func (e *Email) MarkDuplicate(of, detail string) {
	e.Status, e.DuplicateOf, e.StatusDetail = EmailDuplicate, of, detail
}

// Key implements Document: e-mails are listed by inbox and status.
func (e Email) Key() Key {
	return Key{Kind: KindEmail, ID: e.ID, Parent: e.InboxID, Status: e.Status, Created: e.ReceivedAt}
}

// Agent is an AI agent that analyses e-mails.
type Agent struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Model         string   `json:"model"`
	SystemMessage string   `json:"system_message"`
	Skills        []string `json:"skills"`
	// Settings tune how the agent's model is called.
	Settings  AgentSettings `json:"settings,omitzero"`
	Status    string        `json:"status"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// Limits and defaults of AgentSettings.
const (
	DefaultAgentTimeout      = 2 * time.Minute
	MaxAgentTimeout          = 15 * time.Minute
	DefaultRepairRounds      = 1
	MaxRepairRounds          = 5
	DefaultFileInputMaxBytes = 10 << 20
	MaxFileInputMaxBytes     = 50 << 20
)

// AgentSettings tune how an agent's model is called. The zero value means
// the defaults.
type AgentSettings struct {
	// TimeoutSeconds bounds a whole run of the agent: every request to the
	// model, retries and repair rounds included. 0 means
	// DefaultAgentTimeout.
	TimeoutSeconds int `json:"timeout_seconds,omitempty" jsonschema:"seconds a whole agent run may take, retries and repairs included (default 120, at most 900)" minimum:"0" maximum:"900"`
	// RepairRounds is how many times an answer that does not validate is
	// sent back to the model with the linter's diagnostics; nil means
	// DefaultRepairRounds, 0 none.
	RepairRounds *int `json:"repair_rounds,omitempty" jsonschema:"times an invalid answer is sent back to the model with its diagnostics (default 1, at most 5, 0 for none)" minimum:"0" maximum:"5"`
	// FileInputs lets a model that supports attachments read the e-mail's
	// documents (PDF, images) as files, within FileInputMaxBytes.
	FileInputs bool `json:"file_inputs,omitempty" jsonschema:"let a model that supports attachments read the e-mail's PDF and image attachments"`
	// FileInputMaxBytes caps the attachment bytes sent to the model in one
	// request; 0 means DefaultFileInputMaxBytes.
	FileInputMaxBytes int64 `json:"file_input_max_bytes,omitempty" jsonschema:"most attachment bytes sent to the model in one request (default 10 MiB, at most 50 MiB)" minimum:"0" maximum:"52428800"`
	// Egress, when set, is every host the agent's workflows may reach
	// (host patterns of package egress: erp.example.com, *.example.com,
	// host:port); a request to any other fails before sending. nil allows
	// every host the SSRF guard does; an empty list allows none.
	Egress []string `json:"egress,omitzero" jsonschema:"the only hosts this agent's workflows may send requests to: host names such as erp.example.com, *.example.com for every host below a domain, host:port; omit for any host" maxItems:"100"`
}

// Timeout is the time a whole run of the agent may take.
func (s AgentSettings) Timeout() time.Duration {
	if s.TimeoutSeconds <= 0 {
		return DefaultAgentTimeout
	}
	return time.Duration(s.TimeoutSeconds) * time.Second
}

// Repairs is how many repair rounds a run may have.
func (s AgentSettings) Repairs() int {
	if s.RepairRounds == nil {
		return DefaultRepairRounds
	}
	return max(*s.RepairRounds, 0)
}

// FileBytes is the most attachment bytes sent to the model in one request.
func (s AgentSettings) FileBytes() int64 {
	if s.FileInputMaxBytes <= 0 {
		return DefaultFileInputMaxBytes
	}
	return s.FileInputMaxBytes
}

// Check reports the first setting out of its range, naming it.
func (s AgentSettings) Check() error {
	switch {
	case s.TimeoutSeconds < 0 || time.Duration(s.TimeoutSeconds)*time.Second > MaxAgentTimeout:
		return fmt.Errorf("settings.timeout_seconds is %d; it must be from 1 to %d (0 for the default)", s.TimeoutSeconds, int(MaxAgentTimeout/time.Second))
	case s.RepairRounds != nil && (*s.RepairRounds < 0 || *s.RepairRounds > MaxRepairRounds):
		return fmt.Errorf("settings.repair_rounds is %d; it must be from 0 to %d", *s.RepairRounds, MaxRepairRounds)
	case s.FileInputMaxBytes < 0 || s.FileInputMaxBytes > MaxFileInputMaxBytes:
		return fmt.Errorf("settings.file_input_max_bytes is %d; it must be from 1 to %d (0 for the default)", s.FileInputMaxBytes, MaxFileInputMaxBytes)
	case len(s.Egress) > MaxEgress:
		return fmt.Errorf("settings.egress has %d hosts; at most %d", len(s.Egress), MaxEgress)
	}
	if _, err := egress.ParseList(s.Egress); err != nil {
		return fmt.Errorf("settings.egress%w", err)
	}
	return nil
}

// MaxEgress is the most hosts an agent's egress list may have.
const MaxEgress = 100

// EgressList is the agent's egress list, parsed; nil when the agent has
// none (AgentSettings.Check has accepted it).
func (s AgentSettings) EgressList() *egress.Destinations {
	if s.Egress == nil {
		return nil
	}
	d, err := egress.ParseList(s.Egress)
	if err != nil {
		// Settings are checked when stored: an unreadable list allows
		// nothing rather than everything.
		d = egress.Destinations{}
	}
	return &d
}

// Key implements Document.
func (a Agent) Key() Key {
	return Key{Kind: KindAgent, ID: a.ID, Status: a.Status, Created: a.CreatedAt}
}

// Tokens counts model tokens.
type Tokens struct {
	Input  int `json:"input"`
	Output int `json:"output"`
	// Cached is the part of Input the provider read from its prompt cache
	// (usage.prompt_tokens_details.cached_tokens), priced at the catalog's
	// cached rate where it has one.
	Cached int `json:"cached,omitempty"`
}

// Add returns the sum of t and u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{Input: t.Input + u.Input, Output: t.Output + u.Output, Cached: t.Cached + u.Cached}
}

// Repair is one round in which an agent's invalid answer was sent back to
// the model with the compiler's diagnostics.
type Repair struct {
	// Round counts from 1.
	Round int `json:"round"`
	// Diagnostics are what the model was told was wrong (compile's JSON).
	Diagnostics json.RawMessage `json:"diagnostics"`
	// Tokens are the tokens this round used (included in the run's total).
	Tokens Tokens `json:"tokens"`
}

// ModelCall is one request an agent run made to its model: one attempt of
// one round (the first answer, or a repair).
type ModelCall struct {
	// Round is 0 for the first answer, n for the n-th repair.
	Round int `json:"round"`
	// Attempt counts from 1 within the round; attempts after the first are
	// retries.
	Attempt int `json:"attempt"`
	// Status is the HTTP status of the answer; 0 when none came.
	Status int `json:"status,omitempty"`
	// Cause says why the attempt failed; empty when the model answered.
	Cause Cause  `json:"cause,omitempty"`
	Error string `json:"error,omitempty"`
	// DurationMS is how long the request took.
	DurationMS int64 `json:"duration_ms"`
	// WaitMS is how long the runner waited before the next attempt
	// (Retry-After, or its backoff).
	WaitMS int64 `json:"wait_ms,omitempty"`
	// Tokens are the tokens the answer used.
	Tokens Tokens `json:"tokens,omitzero"`
	// NoUsage says the provider answered without reporting usage: Tokens
	// are unknown, not zero.
	NoUsage bool `json:"no_usage,omitempty"`
	// ResponseFormat is how the request asked for JSON: json_schema,
	// json_object or none.
	ResponseFormat string `json:"response_format,omitempty"`
}

// AgentRun is one analysis of one e-mail by an agent.
type AgentRun struct {
	ID      string `json:"id"`
	AgentID string `json:"agent_id"`
	EmailID string `json:"email_id"`
	InboxID string `json:"inbox_id"`
	Model   string `json:"model"`
	// Status is RunSucceeded or RunFailed; a failure has a Cause and an Error.
	Status string          `json:"status"`
	Cause  Cause           `json:"cause,omitempty"`
	Error  string          `json:"error,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
	Tokens Tokens          `json:"tokens"`
	// CostUSD is what the run's tokens cost on its model (Cost).
	CostUSD float64 `json:"cost_usd"`
	// Retry counts the runs before this one that the pipeline's schedule
	// tried again after a cause that may pass; 0 for the first.
	Retry int `json:"retry,omitempty"`
	// NextAttemptAt, on a run that failed for such a cause, is when the
	// pipeline runs the agent on the e-mail again; zero when it will not.
	NextAttemptAt time.Time `json:"next_attempt_at,omitzero"`
	// UsageUnknown says some answer came without usage: Tokens and
	// CostUSD count only the answers that reported theirs.
	UsageUnknown bool `json:"usage_unknown,omitempty"`
	// ResponseFormat is how the model was last asked for JSON (json_schema,
	// json_object or none): lower than the endpoint's when the provider
	// refused it and the run fell back.
	ResponseFormat string `json:"response_format,omitempty"`
	// Thinking is what the model wrote before its answer (a <think> block,
	// reasoning_content), clipped: recorded, never linted or run.
	Thinking string `json:"thinking,omitempty"`
	// Diagnostics are the workflow diagnostics of the final output (compile's
	// JSON), when the agent runner checked it.
	Diagnostics json.RawMessage `json:"diagnostics,omitempty"`
	// Repairs are the rounds in which the output was sent back to the model.
	Repairs []Repair `json:"repairs,omitempty"`
	// PromptVersion names the prompt the model was given.
	PromptVersion string `json:"prompt_version,omitempty"`
	// Calls are the requests made to the model, retries included.
	Calls []ModelCall `json:"model_calls,omitempty"`
	// Fenced says the accepted answer came wrapped in a code fence.
	Fenced bool `json:"fenced,omitempty"`
	// Answer is the model's last answer as text when it could not be used.
	Answer        string    `json:"answer,omitempty"`
	WorkflowRunID string    `json:"workflow_run_id,omitempty"`
	ReprocessOf   string    `json:"reprocess_of,omitempty"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
}

// Key implements Document: runs are listed by agent and status.
func (r AgentRun) Key() Key {
	return Key{Kind: KindAgentRun, ID: r.ID, Parent: r.AgentID, Status: r.Status, Created: r.StartedAt}
}

// WorkflowRun is the redacted record of one run of an agent run's
// workflow, as the Inbox keeps it: the run record (package runrecord) with
// the ids it belongs to.
type WorkflowRun struct {
	ID         string `json:"id"`
	AgentRunID string `json:"agent_run_id"`
	EmailID    string `json:"email_id"`
	InboxID    string `json:"inbox_id"`
	// Status is succeeded or failed once the run has ended, running while
	// it sends its steps (the record is kept up to date before and after
	// each request, so a server that stops meanwhile leaves a record that
	// says how far it got), interrupted when a stop or a crash ended it.
	Status runrecord.Status `json:"status"`
	Steps  []runrecord.Step `json:"steps"`
	// Error says why a workflow that did not validate never ran (its
	// Diagnostics say where), or how an interrupted run ended.
	Error string `json:"error,omitempty"`
	// Diagnostics are the run record's (runrecord.Document.Diagnostics) as
	// the compiler encodes them, like an agent run's.
	Diagnostics json.RawMessage `json:"diagnostics,omitempty"`
	// InFlight is the index of the step being sent while the run is
	// running; nil between requests and once the run has ended.
	InFlight *int `json:"in_flight,omitempty"`
	// ResumeOf is the interrupted run this one takes up: its ended steps
	// are kept (runrecord.Step.FromRun), the others sent with the same
	// identities.
	ResumeOf   string    `json:"resume_of,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// Key implements Document: workflow runs are listed by agent run and status.
func (r WorkflowRun) Key() Key {
	return Key{Kind: KindWorkflowRun, ID: r.ID, Parent: r.AgentRunID, Status: string(r.Status), Created: r.StartedAt}
}

// Webhook is an outbound notification endpoint.
type Webhook struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Events      []string `json:"events"`
	Status      string   `json:"status"`
	SecretHint  string   `json:"secret_hint"`
	// PreviousSecretUntil is, after a rotation with an overlap, until when
	// the previous signing secret signs deliveries too (a second v1 in
	// HeaderSignature), so that receivers can move to the new one without
	// refusing a delivery.
	PreviousSecretUntil time.Time `json:"previous_secret_until,omitzero"`
	FailingSince        time.Time `json:"failing_since,omitzero"`
	LastDelivery        time.Time `json:"last_delivery_at,omitzero"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

// Key implements Document.
func (w Webhook) Key() Key {
	return Key{Kind: KindWebhook, ID: w.ID, Status: w.Status, Created: w.CreatedAt}
}

// Delivery is the delivery of one event to one webhook. Its top-level
// outcome (Status, HTTPStatus, Error, ResponseBody, DurationMS,
// AttemptedAt) is its latest attempt's; a delivery the pipeline retries
// keeps every attempt in Attempts. Its ID is sent with every attempt
// (HeaderDelivery), so receivers can deduplicate.
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
	AttemptedAt  time.Time       `json:"attempted_at,omitzero"`
	// CreatedAt is when the event was recorded, for deliveries the
	// pipeline makes (zero for a single attempt made on request, whose
	// AttemptedAt is its creation).
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Attempts are the attempts made so far, oldest first.
	Attempts []DeliveryAttempt `json:"attempts,omitempty"`
	// NextAttemptAt is when the next automatic attempt is due; zero when
	// none is scheduled (delivered, or given up).
	NextAttemptAt time.Time `json:"next_attempt_at,omitzero"`
}

// DeliveryAttempt is one attempt of a Delivery.
type DeliveryAttempt struct {
	// Attempt counts from 1.
	Attempt      int       `json:"attempt"`
	AttemptedAt  time.Time `json:"attempted_at"`
	Status       string    `json:"status"`
	HTTPStatus   int       `json:"http_status,omitempty"`
	Error        string    `json:"error,omitempty"`
	ResponseBody string    `json:"response_body,omitempty"`
	DurationMS   int64     `json:"duration_ms"`
	// Replay says a person asked for this attempt (webhooks_deliveries_replay);
	// RequestedBy is who.
	Replay      bool   `json:"replay,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
}

// Key implements Document: deliveries are listed by webhook and status, in
// the order their events happened.
func (d Delivery) Key() Key {
	created := d.CreatedAt
	if created.IsZero() {
		created = d.AttemptedAt
	}
	return Key{Kind: KindDelivery, ID: d.ID, Parent: d.WebhookID, Status: d.Status, Created: created}
}

// SystemEvent is one entry of the workspace's event log.
type SystemEvent struct {
	ID string `json:"id"`
	// Type is one of the Event* constants.
	Type string `json:"type"`
	// Actor is "person:<id>" for what people did, "system" for what the
	// platform did.
	Actor     string          `json:"actor"`
	Subject   string          `json:"subject,omitempty"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"created_at"`
}

// Key implements Document: events are listed by subject and type.
func (e SystemEvent) Key() Key {
	return Key{Kind: KindEvent, ID: e.ID, Parent: e.Subject, Status: e.Type, Created: e.CreatedAt}
}
