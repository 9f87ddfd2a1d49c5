package lang

import (
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

// NamespaceNames lists the namespaces as written in a reference.
var NamespaceNames = []string{"secrets", "kobana", "steps", "email"}

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

var attachmentSuffixes = map[string]AttachmentPart{
	"base64":       AttachmentBase64,
	"filename":     AttachmentFilename,
	"content_type": AttachmentContentType,
	"size":         AttachmentSize,
}

// AttachmentSuffixes lists the suffixes allowed after email.attachments.N.
var AttachmentSuffixes = []string{"base64", "filename", "content_type", "size"}

// KobanaKeys lists the known kobana.* facts. The list is additive: keys may be
// added, a key never changes meaning.
var KobanaKeys = []string{
	"env", "now", "app_url",
	"workspace_id", "workspace_slug", "workspace_external_id",
	"inbox_id", "inbox_email",
	"email_id", "email_message_id",
	"agent_id", "agent_run_id",
	"workflow_run_id",
}

var kobanaKeySet = func() map[string]bool {
	m := make(map[string]bool, len(KobanaKeys))
	for _, k := range KobanaKeys {
		m[k] = true
	}
	return m
}()

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
type Segment struct {
	Literal string
	Ref     *Ref
}

// Template is a parsed string. A Template with no Segments is the literal
// Source; otherwise concatenating the segments' values renders it.
type Template struct {
	Source   string
	Segments []Segment
}

// IsLiteral reports whether the template holds no reference.
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
