package lang

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kobana/workflow/internal/suggest"
)

const (
	open  = "${{"
	close = "}}"
)

// MaxRefs is the largest number of placeholders one string may hold.
const MaxRefs = 256

// maxErrors bounds the errors reported for one string.
const maxErrors = 32

// maxIndex bounds step and attachment indices; larger ones cannot exist.
const maxIndex = 1 << 16

// Parse parses s into a Template. The error, when not nil, is an ErrorList
// holding every problem in s; the Template is then still the best reading of
// s, for tools that want to go on: each placeholder that did not parse is a
// Segment marked Invalid holding its text, so IsLiteral is false for a string
// that holds any placeholder and no text of s is lost.
//
// The hand-written scanner reads s first; the moment it meets something it
// does not accept, s is read again by the grammar, which reports every
// problem in the language's words.
func Parse(s string) (Template, error) {
	i := strings.Index(s, open)
	if i < 0 {
		return Template{Source: s}, nil
	}
	t, errs, bad := scanTemplate(s, i)
	if bad >= 0 {
		t, errs = parseGrammar(s)
	}
	if len(errs) > 0 {
		return t, errs
	}
	return t, nil
}

// builder assembles a Template from the parts of a string, in order: literal
// text, placeholders (checked against the namespace rules) and errors, under
// the limits MaxRefs and maxErrors. The scanner and the grammar both feed one,
// so the two paths cannot differ in what they make of the same parts.
type builder struct {
	src  string
	segs []Segment
	errs ErrorList
	// refs and names are backing storage for the references and their paths,
	// sized up front by grow so that a string costs a few allocations.
	refs  []Ref
	names []string
	// count is the number of placeholders seen.
	count int
	// stopped is set when a limit is reached: the rest of src is not read.
	stopped bool
}

// grow sizes the builder for a string holding about n placeholders and
// names names.
func (b *builder) grow(n, names int) {
	b.segs = make([]Segment, 0, 2*n+1)
	b.refs = make([]Ref, 0, n)
	b.names = make([]string, 0, names)
}

// text adds literal text.
func (b *builder) text(lit string) {
	if !b.stopped && lit != "" {
		b.segs = append(b.segs, Segment{Literal: lit})
	}
}

// countPlaceholder counts a placeholder starting at start. It reports false,
// recording the error, when the string holds too many.
func (b *builder) countPlaceholder(start int) bool {
	if b.stopped {
		return false
	}
	b.count++
	if b.count > MaxRefs {
		b.errs = append(b.errs, &Error{
			Span:    Span{start, len(b.src)},
			Code:    CodeTooManyRefs,
			Message: fmt.Sprintf("too many placeholders: a string may hold at most %d", MaxRefs),
		})
		b.stopped = true
		return false
	}
	return true
}

// placeholder adds the placeholder src[start:end], already counted, whose
// reference is path (empty for "${{ }}").
func (b *builder) placeholder(start, end int, path []string) {
	var ref *Ref
	if len(b.refs) < cap(b.refs) {
		b.refs = b.refs[:len(b.refs)+1]
		ref = &b.refs[len(b.refs)-1]
	} else {
		ref = new(Ref)
	}
	if err := shape(ref, path, Span{start, end}); err != nil {
		b.fail(err)
		b.invalid(start, end)
		return
	}
	b.segs = append(b.segs, Segment{Ref: ref})
}

// invalid keeps src[start:end], a placeholder that did not parse, as text
// marked Invalid.
func (b *builder) invalid(start, end int) {
	if !b.stopped && start < end {
		b.segs = append(b.segs, Segment{Literal: b.src[start:end], Invalid: true})
	}
}

// fail records an error, unless a limit was reached.
func (b *builder) fail(e *Error) {
	if b.stopped {
		return
	}
	b.errs = append(b.errs, e)
	if len(b.errs) >= maxErrors {
		b.stopped = true
	}
}

// result returns the Template and the errors. A Template without
// placeholders, valid or not, has no segments: it is its literal Source.
func (b *builder) result() (Template, ErrorList) {
	t := Template{Source: b.src, Segments: b.segs}
	if !slices.ContainsFunc(t.Segments, func(s Segment) bool { return s.Ref != nil || s.Invalid }) {
		t.Segments = nil
	}
	return t, b.errs
}

// shape checks a reference's path against the namespace rules and fills ref.
// whole is the span of the placeholder.
func shape(ref *Ref, path []string, whole Span) *Error {
	*ref = Ref{Path: path, Span: whole}
	fail := func(code, msg string, sugg []string) *Error {
		e := &Error{Span: whole, Code: code, Message: msg}
		if sugg != nil {
			e.Suggestion = "${{" + strings.Join(sugg, ".") + "}}"
		}
		return e
	}
	if len(path) == 0 {
		return fail(CodeEmpty, "empty placeholder: write a reference such as ${{secrets.KEY}}", nil)
	}
	switch path[0] {
	case "secrets":
		ref.Namespace = Secrets
		if len(path) != 2 {
			return fail(CodeSecretRef, fmt.Sprintf("invalid reference %s: a secret is referenced as secrets.KEY, with one name after \"secrets.\"", ref), nil)
		}
		ref.Key = path[1]
	case "kobana":
		ref.Namespace = Kobana
		if len(path) != 2 {
			return fail(CodeKobanaRef, fmt.Sprintf("invalid reference %s: a run fact is referenced as kobana.KEY, with one of: %s", ref, kobanaKeyList), nil)
		}
		if !IsKobanaKey(path[1]) {
			var sugg []string
			if c := suggest.Closest(path[1], kobanaKeys); c != "" {
				sugg = []string{"kobana", c}
			}
			return fail(CodeUnknownKobana, fmt.Sprintf("unknown run fact %s: the kobana keys are %s", ref, kobanaKeyList), sugg)
		}
		ref.Key = path[1]
	case "steps":
		ref.Namespace = Steps
		return stepsShape(ref, fail)
	case "email":
		ref.Namespace = Email
		return emailShape(ref, fail)
	default:
		var sugg []string
		if c := suggest.Closest(path[0], namespaceNames[1:]); c != "" {
			sugg = append([]string{c}, path[1:]...)
			if c == "email" && (len(path) < 2 || path[1] != "attachments") {
				sugg = nil
			}
		}
		return fail(CodeUnknownNS, fmt.Sprintf("unknown namespace %q in %s: a reference starts with secrets, kobana, steps or email", path[0], ref), sugg)
	}
	return nil
}

type failFunc func(code, msg string, sugg []string) *Error

const stepsHelp = "an earlier step is referenced as steps.N.response.status, steps.N.response.body[.path…] or steps.N.response.headers.NAME"

func stepsShape(ref *Ref, fail failFunc) *Error {
	p := ref.Path
	if len(p) < 2 {
		return fail(CodeStepsRef, fmt.Sprintf("invalid reference %s: %s", ref, stepsHelp), nil)
	}
	n, msg := parseIndex(p[1])
	if msg != "" {
		return fail(CodeStepsRef, fmt.Sprintf("invalid reference %s: the step index %s; %s", ref, msg, stepsHelp), nil)
	}
	if n >= maxIndex {
		return fail(CodeIndexOutOfRange, fmt.Sprintf("invalid reference %s: step index %s is out of range", ref, p[1]), nil)
	}
	ref.Index = n
	if len(p) < 4 || p[2] != "response" {
		var sugg []string
		if len(p) >= 3 && p[2] != "response" {
			switch p[2] {
			case "status", "body", "headers":
				sugg = append([]string{"steps", p[1], "response"}, p[2:]...)
			}
		}
		return fail(CodeStepsRef, fmt.Sprintf("invalid reference %s: %s", ref, stepsHelp), sugg)
	}
	switch p[3] {
	case "status":
		if len(p) != 4 {
			return fail(CodeStepsRef, fmt.Sprintf("invalid reference %s: the status has no fields; write steps.%d.response.status", ref, n), p[:4])
		}
		ref.Step = StepStatus
	case "body":
		ref.Step = StepBody
		ref.BodyPath = p[4:]
	case "headers":
		if len(p) != 5 {
			return fail(CodeStepsRef, fmt.Sprintf("invalid reference %s: name one header, as in steps.%d.response.headers.location", ref, n), nil)
		}
		ref.Step = StepHeaders
		ref.Header = p[4]
	default:
		var sugg []string
		if c := suggest.Closest(p[3], []string{"status", "body", "headers"}); c != "" {
			sugg = append(append([]string{}, p[:3]...), c)
			sugg = append(sugg, p[4:]...)
		}
		return fail(CodeStepsRef, fmt.Sprintf("invalid reference %s: a response has status, body and headers", ref), sugg)
	}
	return nil
}

const emailHelp = "an attachment is referenced as email.attachments.N, optionally followed by .base64, .filename, .content_type or .size"

func emailShape(ref *Ref, fail failFunc) *Error {
	p := ref.Path
	if len(p) < 3 || p[1] != "attachments" {
		var sugg []string
		if len(p) >= 3 && suggest.Closest(p[1], []string{"attachments"}) != "" {
			sugg = append([]string{"email", "attachments"}, p[2:]...)
		}
		return fail(CodeAttachmentRef, fmt.Sprintf("invalid reference %s: %s", ref, emailHelp), sugg)
	}
	n, msg := parseIndex(p[2])
	if msg != "" {
		return fail(CodeAttachmentRef, fmt.Sprintf("invalid reference %s: the attachment index %s; %s", ref, msg, emailHelp), nil)
	}
	if n >= maxIndex {
		return fail(CodeIndexOutOfRange, fmt.Sprintf("invalid reference %s: attachment index %s is out of range", ref, p[2]), nil)
	}
	ref.Index = n
	switch len(p) {
	case 3:
		ref.Attachment = AttachmentContent
	case 4:
		part, ok := attachmentSuffixes[p[3]]
		if !ok {
			var sugg []string
			if c := suggest.Closest(p[3], attachmentSuffixNames); c != "" {
				sugg = []string{"email", "attachments", p[2], c}
			}
			return fail(CodeAttachmentRef, fmt.Sprintf("invalid reference %s: %s", ref, emailHelp), sugg)
		}
		ref.Attachment = part
	default:
		return fail(CodeAttachmentRef, fmt.Sprintf("invalid reference %s: %s", ref, emailHelp), nil)
	}
	return nil
}

// parseIndex reads a plain decimal index: digits only, no sign, no leading
// zero. It returns a non-empty message when s is not one.
func parseIndex(s string) (int, string) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Sprintf("%q is not a number", s)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Sprintf("%q has a leading zero", s)
	}
	if len(s) > 9 {
		return maxIndex, ""
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a number", s)
	}
	return n, ""
}
