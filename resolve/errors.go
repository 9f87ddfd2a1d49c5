package resolve

import (
	"fmt"

	"github.com/kobana/workflow/lang"
)

// SkipError says a step must be skipped, never sent: it references a step
// that failed or was itself skipped.
type SkipError struct {
	// Step is the earlier step referenced.
	Step int
	// State is that step's state: StateFailed or StateSkipped.
	State State
}

func (e *SkipError) Error() string {
	return fmt.Sprintf("skipped: it uses the response of step %d, which %s", e.Step, e.State.verb())
}

// Reason classifies a reference that cannot be resolved.
type Reason uint8

// Reasons a reference fails the step before anything is sent.
const (
	MissingSecret Reason = iota + 1
	SecretSourceFailed
	UndefinedFact
	ForwardReference
	NullValue
	MissingPath
	NotJSON
	NotCaptured
	MissingHeader
	MissingAttachment
	EmailUnreadable
)

// RefError says a reference cannot be resolved: the step fails before any
// request is sent.
type RefError struct {
	// Ref is the reference, in canonical form, e.g. "secrets.TOKEN".
	Ref    string
	Reason Reason
	// Detail says what was found instead, in words a person understands.
	Detail string
	// Err is the underlying cause, when there is one.
	Err error
}

func (e *RefError) Error() string {
	return fmt.Sprintf("${{%s}}: %s", e.Ref, e.Detail)
}

func (e *RefError) Unwrap() error { return e.Err }

func refErr(r *lang.Ref, reason Reason, err error, format string, args ...any) *RefError {
	return &RefError{Ref: r.String(), Reason: reason, Detail: fmt.Sprintf(format, args...), Err: err}
}
