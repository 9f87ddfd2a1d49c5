package runrecord

import (
	"fmt"
	"slices"
)

// State is how a step ended, or where it stands while its run is going.
type State string

// Step states.
const (
	// Succeeded: the step was sent and its response has the expected status.
	Succeeded State = "succeeded"
	// Failed: the step was not sent (a reference, the guard, a request
	// that could not be built), it never reached its receiver whole (a
	// connection refused, a TLS handshake that failed, a connection lost
	// before the request's last byte was written), or it was answered
	// with an unexpected status; Reason says which.
	Failed State = "failed"
	// Skipped: the step was never sent: it uses the response of a step that
	// did not succeed, or its run ended before it (Reason says which).
	Skipped State = "skipped"
	// Sending: the step's request is being sent. Only a running record has
	// a step in this state: the record a store keeps while the run goes on.
	Sending State = "sending"
	// Unknown: the receiver may have acted on the request, and whether it
	// did is not known: the request was sent whole and no complete answer
	// came (the connection reset or closed, half a response, a timeout),
	// the run was stopped or the process died while it was being sent, or
	// its outcome could not be recorded. It is never sent again on its own;
	// resuming the run sends it again with the same identity.
	Unknown State = "unknown"
)

var states = [...]State{Succeeded, Failed, Skipped, Sending, Unknown}

// String implements fmt.Stringer.
func (s State) String() string { return string(s) }

// UnmarshalText accepts every state a record has ever been written with.
func (s *State) UnmarshalText(b []byte) error { return readWord(b, states[:], "step state", s) }

// readWord sets *dst to the word of words that b spells, or says b is none.
func readWord[W ~string](b []byte, words []W, what string, dst *W) error {
	for _, w := range words {
		if string(b) == string(w) {
			*dst = w
			return nil
		}
	}
	return fmt.Errorf("runrecord: %q is not a %s (%v)", b, what, words)
}

// Status is the status of a run.
type Status string

// Run statuses.
const (
	// RunSucceeded: every step succeeded.
	RunSucceeded Status = "succeeded"
	// RunFailed: a step failed, was skipped or is Unknown (its request was
	// sent whole and no complete answer came, or its outcome could not be
	// recorded: the run can be resumed, see Resumable), or the document did
	// not validate (then nothing was sent).
	RunFailed Status = "failed"
	// RunRunning: the run is sending its steps; its record is kept up to
	// date before and after each request, so a process that stops leaves a
	// record that says how far it got.
	RunRunning Status = "running"
	// RunInterrupted: the run was stopped, or its process died, before it
	// ended — nothing else (a run whose step's outcome could not be
	// recorded while the process went on is RunFailed); a record written
	// before that rule may say RunInterrupted for it, its step Unknown with
	// ReasonOutcomeNotRecorded: the step that may have been in flight is Unknown, the steps
	// after it were not run, and nothing is sent again on its own (the run
	// can be resumed, see Resumable).
	RunInterrupted Status = "interrupted"
)

var statuses = [...]Status{RunSucceeded, RunFailed, RunRunning, RunInterrupted}

// Statuses returns every run status, for filters that list them, as a new
// slice.
func Statuses() []Status { return slices.Clone(statuses[:]) }

// String implements fmt.Stringer.
func (s Status) String() string { return string(s) }

// UnmarshalText accepts every status a record has ever been written with.
func (s *Status) UnmarshalText(b []byte) error { return readWord(b, statuses[:], "run status", s) }

// Reason is a stable classification of why a step did not succeed (and,
// for a dry run, why it would not). Its Error says it for people.
type Reason string

// Reasons a step did not succeed. The executor records the first group;
// the finer causes of a reference are what a dry run (package plan) and
// package resolve's errors name, and the executor records them all as
// ReasonReference.
const (
	// ReasonSkipped: the step uses a step that failed or was skipped.
	ReasonSkipped Reason = "dependency-not-succeeded"
	// ReasonReference: a reference could not be resolved.
	ReasonReference Reason = "reference"
	// ReasonInvalidRequest: the request could not be built (a control
	// character after substitution, a bad URL).
	ReasonInvalidRequest Reason = "invalid-request"
	// ReasonDenied: the SSRF guard refused the address.
	ReasonDenied Reason = "ssrf-denied"
	// ReasonDestination: the destinations policy refused the request: a
	// secret it carries may not go to its host, or the host is outside
	// the egress list (package egress).
	ReasonDestination Reason = "destination-denied"
	// ReasonTimeout: no complete response in time (state Failed when the
	// request was not written whole by then, else Unknown).
	ReasonTimeout Reason = "timeout"
	// ReasonTransport: connection refused, reset, TLS, a name not found…
	// (state Failed when the request never left whole, Unknown when it
	// did and its answer did not come whole).
	ReasonTransport Reason = "transport"
	// ReasonStatus: the response status is not the one the step expects.
	ReasonStatus Reason = "unexpected-status"
	// ReasonCancelled: the step was not run: its run was cancelled, reached
	// its deadline or was interrupted before it, or a step before it ended
	// Unknown.
	ReasonCancelled Reason = "cancelled"
	// ReasonUploadAborted: an attachment could not be read mid-body, and
	// the request was cut off before its Content-Length (see
	// Step.PartialUpload).
	ReasonUploadAborted Reason = "upload-aborted"
	// ReasonInterrupted: the run was stopped, or its process died, while
	// the step was being sent (state Unknown).
	ReasonInterrupted Reason = "interrupted"
	// ReasonNotRecorded: the step was not sent because its run could not
	// record it (the journal refused it, or could not record the step
	// before it).
	ReasonNotRecorded Reason = "not-recorded"
	// ReasonOutcomeNotRecorded: the step was sent and answered, but its
	// outcome could not be recorded (state Unknown).
	ReasonOutcomeNotRecorded Reason = "outcome-not-recorded"
)

// The finer causes of a reference that cannot be resolved.
const (
	ReasonMissingSecret      Reason = "missing-secret"
	ReasonSecretSourceFailed Reason = "secret-source-failed"
	ReasonUndefinedFact      Reason = "undefined-fact"
	ReasonForward            Reason = "forward-reference"
	ReasonNullValue          Reason = "null-value"
	ReasonMissingPath        Reason = "missing-path"
	ReasonNotJSON            Reason = "not-json"
	ReasonNotCaptured        Reason = "not-captured"
	ReasonMissingHeader      Reason = "missing-header"
	ReasonMissingAttachment  Reason = "missing-attachment"
	ReasonEmailUnreadable    Reason = "email-unreadable"
	// ReasonResponseUnavailable: a resumed run needs an earlier step's
	// response, which its record does not hold whole (a redacted or
	// clipped body or header).
	ReasonResponseUnavailable Reason = "response-unavailable"
	// ReasonHeaderInjection: a header value holds CR, LF or another
	// control character after substitution.
	ReasonHeaderInjection Reason = "header-injection"
)

// String implements fmt.Stringer.
func (r Reason) String() string { return string(r) }
