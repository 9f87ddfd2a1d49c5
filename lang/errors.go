package lang

import (
	"fmt"
	"strings"
)

// Stable error codes of the placeholder language.
const (
	CodeUnterminated    = "placeholder-unterminated"      // "${{" without "}}"
	CodeEmpty           = "placeholder-empty"             // "${{ }}"
	CodeSyntax          = "placeholder-syntax"            // not dot-separated [A-Za-z0-9_-]+ segments
	CodeUnknownNS       = "placeholder-unknown-namespace" // not one of the four namespaces
	CodeSecretRef       = "secrets-reference"             // not secrets.KEY
	CodeKobanaRef       = "kobana-reference"              // not kobana.KEY
	CodeUnknownKobana   = "kobana-unknown-key"            // kobana.KEY with an unknown KEY
	CodeStepsRef        = "steps-reference"               // malformed steps.N.response…
	CodeAttachmentRef   = "attachments-reference"         // malformed email.attachments.N…
	CodeTooManyRefs     = "placeholder-too-many"          // more references than MaxRefs
	CodeIndexOutOfRange = "index-out-of-range"            // step or attachment index too large
)

// Error is a problem with one placeholder of a string.
type Error struct {
	// Span is the offending byte range of the parsed string.
	Span Span
	// Code is a stable identifier of the kind of problem.
	Code string
	// Message says what is wrong and what is allowed.
	Message string
	// Suggestion, when set, is a likely intended spelling of the reference.
	Suggestion string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("offset %d: %s", e.Span.Start, e.Message)
	if e.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestion)
	}
	return msg
}

// ErrorList is every problem found in one string, in order of position.
type ErrorList []*Error

// Unwrap returns each Error of the list, so that errors.As finds a *Error
// in the error Parse returns.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	b.WriteString(l[0].Error())
	fmt.Fprintf(&b, " (and %d more)", len(l)-1)
	return b.String()
}
