package runrecord

import (
	"encoding/json"
	"time"

	"github.com/kobana/workflow/compile"
)

// NotValidError is the Error of a Document whose document did not
// validate.
const NotValidError = "the workflow did not validate; nothing was sent"

// Document is what running an agent's document ({"result": …,
// "workflow": […]}) leaves: its run, and what the compiler said about the
// document. It holds no secret value and no attachment byte.
type Document struct {
	Run
	// Error is NotValidError when the document did not validate; then no
	// step ran and Steps is empty. It is empty when the workflow ran.
	Error string `json:"error,omitempty"`
	// Diagnostics are the document's errors when it did not validate, else
	// its warnings (e.g. a forward reference its step failed on), redacted.
	Diagnostics compile.Diagnostics `json:"diagnostics,omitempty"`
}

// Valid reports whether the document validated (and so its workflow ran).
func (d *Document) Valid() bool { return d.Error == "" }

// Run is the record of a run's steps.
type Run struct {
	// Status is RunSucceeded when every step succeeded, else RunFailed; a
	// record kept while the run goes on is RunRunning, one a stop or a
	// crash ended RunInterrupted.
	Status     Status    `json:"status"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Steps      []Step    `json:"steps"`
}

// Outcome is the status a run whose steps all ended has: RunSucceeded when
// each of steps succeeded, else RunFailed.
func Outcome(steps []Step) Status {
	for _, s := range steps {
		if s.State != Succeeded {
			return RunFailed
		}
	}
	return RunSucceeded
}

// NotSucceeded lists the indexes of the steps that did not succeed, in
// order (empty, not nil, when all did).
func NotSucceeded(steps []Step) []int {
	out := []int{}
	for _, s := range steps {
		if s.State != Succeeded {
			out = append(out, s.Index)
		}
	}
	return out
}

// InFlight returns the position in steps of the step being sent, or -1.
func InFlight(steps []Step) int {
	for i, s := range steps {
		if s.State == Sending {
			return i
		}
	}
	return -1
}

// ResumePoint is where a resumed run starts sending again: the first step
// whose request may have left without its outcome being known (Unknown,
// Sending), or that was never sent because the run ended or could not
// record it. The steps before it ended with an outcome that resuming
// keeps, never sending them again; len(steps) when every recorded step
// has one.
func ResumePoint(steps []Step) int {
	for i, s := range steps {
		switch {
		case s.State == Unknown, s.State == Sending:
			return i
		case s.Reason == ReasonNotRecorded:
			return i
		case s.State == Skipped && s.Reason == ReasonCancelled:
			return i
		}
	}
	return len(steps)
}

// Resumable reports whether a run that ended with status and steps can be
// taken up again: it was interrupted, or a step of it is Unknown — its
// request was sent whole and no complete answer came, so its receiver may
// have acted on it and only a person's resume sends it again.
func Resumable(status Status, steps []Step) bool {
	switch status {
	case RunInterrupted:
		return true
	case RunRunning:
		return false
	}
	for _, s := range steps {
		if s.State == Unknown {
			return true
		}
	}
	return false
}

// Step is the record of one step.
type Step struct {
	Index int    `json:"index"`
	Label string `json:"label,omitempty"`
	State State  `json:"state"`
	// Error says, for a person, why the step failed, was skipped or is
	// unknown.
	Error string `json:"error,omitempty"`
	// Reason is a stable classification of Error.
	Reason Reason `json:"reason,omitempty"`
	// StartedAt is when the step started; zero for a step an interruption
	// recorded as not run.
	StartedAt  time.Time `json:"started_at,omitzero"`
	DurationMS int64     `json:"duration_ms"`
	// ID is the step's identity, sent in HeaderStepID (and as its
	// Idempotency-Key, see Journal): the same for every attempt at this
	// step of this run, a resumed run's included. Empty when the run had
	// none (a run without a journal that gives one, an older record).
	ID       string    `json:"id,omitempty"`
	Request  *Request  `json:"request,omitempty"`
	Response *Response `json:"response,omitempty"`
	// PartialUpload says the request was cut off while its body was being
	// sent, because an attachment could not be read mid-body (the e-mail was
	// truncated, rewritten or became unreadable): the connection was closed
	// before the announced Content-Length, so the receiver cannot have taken
	// what it got for a complete request, but it may have received the
	// headers and part of the body. Reason is ReasonUploadAborted.
	PartialUpload bool `json:"partial_upload,omitempty"`
	// FromRun names the run whose record this step's outcome is copied
	// from: a resumed run does not send again the steps its earlier run
	// ended, and keeps their records.
	FromRun string `json:"from_run,omitempty"`
}

// Request is the record of a request: what was sent, with no secret and no
// attachment byte. Package emit builds it in the walk that builds the
// request itself.
type Request struct {
	Method string `json:"method"`
	// URL is the URL sent, without its fragment, secrets redacted.
	URL string `json:"url"`
	// Headers are the headers the step set and those the platform adds
	// (the body's content type, the step's identity), by name as set.
	Headers map[string]string `json:"headers,omitzero"`
	// Body is the JSON value of a JSON body, or a JSON string for a text body.
	Body json.RawMessage `json:"body,omitempty"`
	// Form is an object mirroring the step's form fields, in order; a file
	// field is {"attachment":N,"filename":…,"content_type":…,"size":…}, with
	// "defects":[{"code":…,"message":…}] when reading the attachment needed
	// repairs (see package resolve/eml).
	Form json.RawMessage `json:"form,omitempty"`
}

// Response is the record of a response.
type Response struct {
	Status int `json:"status"`
	// Headers are the response's headers, each name's values joined with
	// ", ".
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
}
