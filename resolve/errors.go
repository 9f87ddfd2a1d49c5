package resolve

import (
	"fmt"

	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/runrecord"
)

// SkipError says a step must be skipped, never sent: it references a step
// that failed or was itself skipped.
type SkipError struct {
	// Step is the earlier step referenced.
	Step int
	// State is that step's state: runrecord.Failed, Skipped or Unknown.
	State runrecord.State
}

func (e *SkipError) Error() string {
	verb := string(e.State)
	switch e.State {
	case runrecord.Skipped:
		verb = "was skipped"
	case runrecord.Unknown:
		verb = "may or may not have reached its receiver"
	}
	return fmt.Sprintf("skipped: it uses the response of step %d, which %s", e.Step, verb)
}

// RefError says a reference cannot be resolved: the step fails before any
// request is sent.
type RefError struct {
	// Ref is the reference, in canonical form, e.g. "secrets.TOKEN".
	Ref string
	// Reason is one of runrecord's reference reasons (ReasonMissingSecret,
	// ReasonUndefinedFact, ReasonForward, ReasonNullValue, ReasonMissingPath,
	// ReasonNotJSON, ReasonNotCaptured, ReasonMissingHeader,
	// ReasonMissingAttachment, ReasonEmailUnreadable, ReasonSecretSourceFailed,
	// ReasonResponseUnavailable).
	Reason runrecord.Reason
	// Detail says what was found instead, in words a person understands.
	Detail string
	// Err is the underlying cause, when there is one.
	Err error
}

func (e *RefError) Error() string {
	return fmt.Sprintf("${{%s}}: %s", e.Ref, e.Detail)
}

func (e *RefError) Unwrap() error { return e.Err }

func refErr(r *lang.Ref, reason runrecord.Reason, err error, format string, args ...any) *RefError {
	return &RefError{Ref: r.String(), Reason: reason, Detail: fmt.Sprintf(format, args...), Err: err}
}
