package executor

import (
	"encoding/json"
	"time"

	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
)

// Run states.
const (
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
)

// RunRecord is the persisted outcome of a run: no secret value and no
// attachment byte ever appears in it.
type RunRecord struct {
	// Status is RunSucceeded when every step succeeded, else RunFailed.
	Status     string       `json:"status"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at"`
	Steps      []StepRecord `json:"steps"`
}

// StepRecord is the outcome of one step.
type StepRecord struct {
	Index int           `json:"index"`
	Label string        `json:"label,omitempty"`
	State resolve.State `json:"state"`
	// Error says, for a person, why the step failed or was skipped.
	Error string `json:"error,omitempty"`
	// Reason is a stable classification of Error (see the Reason constants).
	Reason     string          `json:"reason,omitempty"`
	StartedAt  time.Time       `json:"started_at"`
	DurationMS int64           `json:"duration_ms"`
	Request    *emit.Record    `json:"request,omitempty"`
	Response   *ResponseRecord `json:"response,omitempty"`
	// PartialUpload says the request was cut off while its body was being
	// sent, because an attachment could not be read mid-body (the e-mail was
	// truncated, rewritten or became unreadable): the connection was closed
	// before the announced Content-Length, so the receiver cannot have taken
	// what it got for a complete request, but it may have received the
	// headers and part of the body. Reason is ReasonUploadAborted.
	PartialUpload bool `json:"partial_upload,omitempty"`
}

// Reasons a step did not succeed.
const (
	ReasonSkipped        = "dependency-not-succeeded" // uses a failed or skipped step
	ReasonReference      = "reference"                // a reference could not be resolved
	ReasonInvalidRequest = "invalid-request"          // CR/LF/NUL after substitution, bad URL
	ReasonDenied         = "ssrf-denied"              // the guard refused the address
	ReasonTimeout        = "timeout"                  // no complete response in time
	ReasonTransport      = "transport"                // connection refused, reset, TLS…
	ReasonStatus         = "unexpected-status"        // the response status is not a success
	ReasonCancelled      = "cancelled"                // the run was cancelled or hit its deadline
	ReasonUploadAborted  = "upload-aborted"           // an attachment could not be read mid-body; see PartialUpload
)

// ResponseRecord is the persisted copy of a response.
type ResponseRecord struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	// Body is the JSON value of a JSON response, else a JSON string.
	Body json.RawMessage `json:"body,omitempty"`
	// Size is the number of body bytes received: all of them, also for a
	// body larger than the capture limit (read and thrown away up to 64 MiB,
	// after which the connection is closed), or those read before a
	// transport error.
	Size int64 `json:"size"`
	// Truncated says the body was larger than the capture limit: it was
	// drained, not kept, and cannot be referenced.
	Truncated bool `json:"truncated,omitempty"`
	// BodyClipped says the recorded Body is a prefix of what was captured.
	BodyClipped bool `json:"body_clipped,omitempty"`

	body  *resolve.Response // the captured response, until redact records it
	limit int64             // RecordBodyLimit
}
