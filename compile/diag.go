package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Severity says whether a diagnostic prevents the workflow from running.
type Severity uint8

// Severities, most severe first.
const (
	SeverityError Severity = iota + 1
	SeverityWarning
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	}
	return fmt.Sprintf("Severity(%d)", uint8(s))
}

// MarshalText encodes the severity as "error" or "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes "error" or "warning".
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "error":
		*s = SeverityError
	case "warning":
		*s = SeverityWarning
	default:
		return fmt.Errorf("unknown severity %q", b)
	}
	return nil
}

// Pos is a position in the document: 1-based line and column (columns count
// Unicode characters) and the 0-based byte offset.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"offset"`
}

// Range is the half-open source range [Start, End) a diagnostic is about.
type Range struct {
	Start Pos `json:"start"`
	End   Pos `json:"end"`
}

// Diagnostic is one problem found in a document.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Code is stable across releases; tools may branch on it.
	Code string `json:"code"`
	// Message says what is wrong and what is allowed.
	Message string `json:"message"`
	// Pointer is the RFC 6901 JSON pointer of the value concerned,
	// e.g. "/workflow/1/headers/Host".
	Pointer string `json:"pointer"`
	Range   Range  `json:"range"`
	// Suggestion, when set, is a likely intended spelling.
	Suggestion string `json:"suggestion,omitempty"`
}

// String formats the diagnostic as "LINE:COL: SEVERITY: MESSAGE [CODE]".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%d:%d: %s: %s [%s]", d.Range.Start.Line, d.Range.Start.Column, d.Severity, d.Message, d.Code)
}

// Diagnostics is every problem of a document, ordered by position.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns the diagnostics of error severity.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// Err returns nil when no diagnostic is an error, else an *InvalidError
// holding every diagnostic, warnings included.
func (ds Diagnostics) Err() error {
	if !ds.HasErrors() {
		return nil
	}
	return &InvalidError{Diagnostics: ds}
}

// InvalidError is returned for a document that does not compile. It holds
// every diagnostic of the document, warnings included; its message names
// the first error and counts the others.
type InvalidError struct {
	Diagnostics Diagnostics
}

func (e *InvalidError) Error() string {
	errs := e.Diagnostics.Errors()
	switch len(errs) {
	case 0:
		return "invalid workflow"
	case 1:
		return "invalid workflow: " + errs[0].String()
	}
	more := "errors"
	if len(errs) == 2 {
		more = "error"
	}
	return fmt.Sprintf("invalid workflow: %s (and %d more %s)", errs[0], len(errs)-1, more)
}

// IsInvalid reports whether err is (or wraps) an *InvalidError.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

// MarshalJSON encodes a nil list as [] rather than null.
func (ds Diagnostics) MarshalJSON() ([]byte, error) {
	if ds == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Diagnostic(ds))
}

// lineIndex maps byte offsets of one document to lines and columns.
type lineIndex struct {
	doc    []byte
	starts []int // byte offset of the start of each line
}

func newLineIndex(doc []byte) *lineIndex {
	starts := []int{0}
	for i, c := range doc {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{doc: doc, starts: starts}
}

func (li *lineIndex) pos(off int) Pos {
	if off < 0 {
		off = 0
	}
	if off > len(li.doc) {
		off = len(li.doc)
	}
	line := sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
	col := utf8.RuneCount(li.doc[li.starts[line]:off]) + 1
	return Pos{Line: line + 1, Column: col, Byte: off}
}

// LineAt returns the text of the 1-based line n of doc, without its line
// terminator; tools use it to print the offending source line.
func LineAt(doc []byte, n int) string {
	if n < 1 {
		return ""
	}
	for i := 1; i < n; i++ {
		j := strings.IndexByte(string(doc), '\n')
		if j < 0 {
			return ""
		}
		doc = doc[j+1:]
	}
	if j := strings.IndexByte(string(doc), '\n'); j >= 0 {
		doc = doc[:j]
	}
	return strings.TrimSuffix(string(doc), "\r")
}

// pointer builds an RFC 6901 JSON pointer from reference tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
