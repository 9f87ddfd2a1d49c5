package lang

import (
	"slices"
	"strconv"
	"strings"
)

// Span is a half-open byte range [Start, End) in the string that was parsed.
type Span struct {
	Start, End int
}

// Namespace is one of the four reference namespaces.
type Namespace uint8

// The four namespaces, and nothing else.
const (
	Secrets Namespace = iota + 1
	Kobana
	Steps
	Email
)

var namespaceNames = [...]string{Secrets: "secrets", Kobana: "kobana", Steps: "steps", Email: "email"}

// Namespaces returns the namespaces as written in a reference, in the order
// of the Namespace constants. The slice is the caller's own.
func Namespaces() []string { return slices.Clone(namespaceNames[1:]) }

func (n Namespace) String() string {
	if int(n) < len(namespaceNames) && n != 0 {
		return namespaceNames[n]
	}
	return "Namespace(" + strconv.Itoa(int(n)) + ")"
}

// StepPart is what a steps.N.response reference reads.
type StepPart uint8

// Parts of an earlier step's response.
const (
	StepStatus  StepPart = iota + 1 // steps.N.response.status
	StepBody                        // steps.N.response.body[.path…]
	StepHeaders                     // steps.N.response.headers.NAME
)

// AttachmentPart is what an email.attachments.N reference reads.
type AttachmentPart uint8

// Parts of an attachment. AttachmentContent is the reference without a
// suffix: the file itself as a whole form value, its base64 elsewhere.
const (
	AttachmentContent AttachmentPart = iota + 1
	AttachmentBase64
	AttachmentFilename
	AttachmentContentType
	AttachmentSize
)

var stepPartNames = [...]string{StepStatus: "status", StepBody: "body", StepHeaders: "headers"}

// String returns the part as written after "response." in a reference:
// "status", "body" or "headers".
func (p StepPart) String() string {
	if int(p) < len(stepPartNames) && p != 0 {
		return stepPartNames[p]
	}
	return "StepPart(" + strconv.Itoa(int(p)) + ")"
}

// String returns the part's name: "content" for AttachmentContent (written
// as email.attachments.N, with no suffix), else the suffix as written after
// "email.attachments.N.", such as "base64" or "content_type".
func (p AttachmentPart) String() string {
	switch {
	case p == AttachmentContent:
		return "content"
	case p > AttachmentContent && int(p)-int(AttachmentBase64) < len(attachmentSuffixNames):
		return attachmentSuffixNames[p-AttachmentBase64]
	}
	return "AttachmentPart(" + strconv.Itoa(int(p)) + ")"
}

var attachmentSuffixes = map[string]AttachmentPart{
	"base64":       AttachmentBase64,
	"filename":     AttachmentFilename,
	"content_type": AttachmentContentType,
	"size":         AttachmentSize,
}

var attachmentSuffixNames = []string{"base64", "filename", "content_type", "size"}

// AttachmentSuffixes returns the suffixes allowed after email.attachments.N,
// in the order of the AttachmentPart constants. The slice is the caller's own.
func AttachmentSuffixes() []string { return slices.Clone(attachmentSuffixNames) }

// kobanaFacts is every known kobana.* fact with what it holds, in the order
// of the language reference. The list is additive: facts may be added, a
// fact never changes meaning.
var kobanaFacts = []struct{ key, doc string }{
	{"env", "the environment the run belongs to: development, sandbox or production"},
	{"now", "the time the step starts, in RFC 3339 UTC with milliseconds (2026-03-01T12:00:00.000Z)"},
	{"app_url", "the URL of the Kobana application"},
	{"workspace_id", "the id of the workspace"},
	{"workspace_slug", "the workspace's slug; a step using it fails when the workspace has none"},
	{"workspace_external_id", "the workspace's external id; a step using it fails when the workspace has none"},
	{"inbox_id", "the id of the inbox that received the e-mail"},
	{"inbox_email", "the e-mail address of the inbox"},
	{"email_id", "the id of the e-mail being processed"},
	{"email_message_id", "the Message-ID header of the e-mail"},
	{"agent_id", "the id of the agent that wrote the workflow"},
	{"agent_run_id", "the id of the agent run that wrote the workflow"},
	{"workflow_run_id", "the id of this workflow run"},
}

var (
	kobanaKeys = func() []string {
		keys := make([]string, len(kobanaFacts))
		for i, f := range kobanaFacts {
			keys[i] = f.key
		}
		return keys
	}()
	kobanaKeyList = strings.Join(kobanaKeys, ", ")
)

// KobanaKeys returns the known kobana.* facts, in the order of the language
// reference. The slice is the caller's own.
func KobanaKeys() []string { return slices.Clone(kobanaKeys) }

// IsKobanaKey reports whether kobana.key is a known fact.
func IsKobanaKey(key string) bool { return KobanaKeyDoc(key) != "" }

// KobanaKeyDoc returns what the fact kobana.key holds, in a sentence fragment
// such as "the id of the workspace", or "" when key is not a known fact.
func KobanaKeyDoc(key string) string {
	for _, f := range kobanaFacts {
		if f.key == key {
			return f.doc
		}
	}
	return ""
}

// Ref is one parsed reference. Only the fields of its namespace are set.
type Ref struct {
	Namespace Namespace
	// Path is every dot-separated segment, namespace first.
	Path []string
	// Span covers the whole placeholder, from "${{" to "}}" inclusive.
	Span Span

	// Key is the secret name (Secrets) or the fact name (Kobana).
	Key string
	// Index is the step index (Steps) or the attachment index (Email).
	Index int
	// Step is the part of the response read (Steps).
	Step StepPart
	// BodyPath is the path inside the response body (Steps with StepBody);
	// empty for the whole body.
	BodyPath []string
	// Header is the response header name (Steps with StepHeaders).
	Header string
	// Attachment is the part of the attachment read (Email).
	Attachment AttachmentPart
}

// String returns the reference in canonical form, without braces:
// "secrets.TOKEN", "steps.0.response.body.data.id".
func (r *Ref) String() string { return strings.Join(r.Path, ".") }

// Placeholder returns the reference in canonical placeholder form, "${{secrets.TOKEN}}".
func (r *Ref) Placeholder() string { return "${{" + r.String() + "}}" }

// Segment is a piece of a template: literal text, or a reference when Ref is set.
// A placeholder that did not parse (Parse returned an error for it) is kept
// as its own text in Literal, with Invalid set, so that the Template still
// covers every byte of its Source.
type Segment struct {
	Literal string
	Ref     *Ref
	// Invalid marks the text of a placeholder Parse reported an error for.
	Invalid bool
}

// Template is a parsed string. A Template with no Segments is the literal
// Source; otherwise concatenating the segments' values renders it.
type Template struct {
	Source   string
	Segments []Segment
}

// IsLiteral reports whether the template holds no placeholder, valid or not:
// then Source is its value.
func (t Template) IsLiteral() bool { return len(t.Segments) == 0 }

// Refs returns the template's references in order of appearance.
func (t Template) Refs() []*Ref {
	var refs []*Ref
	for _, s := range t.Segments {
		if s.Ref != nil {
			refs = append(refs, s.Ref)
		}
	}
	return refs
}

// WholeRef returns the reference when the template is exactly one
// placeholder and nothing else (no surrounding text or spaces), else nil.
func (t Template) WholeRef() *Ref {
	if len(t.Segments) == 1 && t.Segments[0].Ref != nil {
		return t.Segments[0].Ref
	}
	return nil
}
