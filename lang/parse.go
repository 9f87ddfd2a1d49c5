package lang

import (
	"fmt"
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
// s (invalid placeholders are dropped), for tools that want to go on.
func Parse(s string) (Template, error) {
	i := strings.Index(s, open)
	if i < 0 {
		return Template{Source: s}, nil
	}
	var (
		segs []Segment
		errs ErrorList
		refs int
		pos  int
	)
	for i >= 0 {
		start := pos + i
		if start > pos {
			segs = append(segs, Segment{Literal: s[pos:start]})
		}
		j := strings.Index(s[start+len(open):], close)
		if j < 0 {
			errs = append(errs, &Error{
				Span:    Span{start, len(s)},
				Code:    CodeUnterminated,
				Message: `unterminated placeholder: "${{" has no closing "}}"`,
			})
			pos = len(s)
			break
		}
		end := start + len(open) + j + len(close)
		refs++
		if refs > MaxRefs {
			errs = append(errs, &Error{
				Span:    Span{start, len(s)},
				Code:    CodeTooManyRefs,
				Message: fmt.Sprintf("too many placeholders: a string may hold at most %d", MaxRefs),
			})
			pos = len(s)
			break
		}
		ref, err := parsePlaceholder(s[start:end], start)
		if err != nil {
			errs = append(errs, err)
			if len(errs) >= maxErrors {
				pos = len(s)
				break
			}
		} else {
			segs = append(segs, Segment{Ref: ref})
		}
		pos = end
		i = strings.Index(s[pos:], open)
	}
	if pos < len(s) {
		segs = append(segs, Segment{Literal: s[pos:]})
	}
	t := Template{Source: s, Segments: segs}
	if len(errs) > 0 {
		if t.Refs() == nil {
			t.Segments = nil
		}
		return t, errs
	}
	return t, nil
}

// parsePlaceholder parses one "${{ … }}" found at byte offset base.
func parsePlaceholder(ph string, base int) (*Ref, *Error) {
	whole := Span{base, base + len(ph)}
	inner := ph[len(open) : len(ph)-len(close)]
	if strings.TrimSpace(inner) == "" {
		return nil, &Error{Span: whole, Code: CodeEmpty,
			Message: "empty placeholder: write a reference such as ${{secrets.KEY}}"}
	}
	path, spans, bad := scanReference(ph, base)
	if bad >= 0 {
		return nil, syntaxError(ph, base, bad)
	}
	return resolveShape(path, spans, whole)
}

// syntaxError reports the first byte of ph (at offset bad) that the grammar
// does not allow. The grammar itself is asked what it expected there, so the
// message and the parser never disagree.
func syntaxError(ph string, base, bad int) *Error {
	end := nextRune(ph, bad)
	what := "end of placeholder"
	if bad < len(ph)-len(close) {
		what = strconv.Quote(ph[bad:end])
	} else {
		end = len(ph)
	}
	msg := fmt.Sprintf("invalid placeholder %s: unexpected %s", ph, what)
	if e := grammarError(ph); e != nil {
		if exp := expected(e); exp != "" {
			msg += " (expected " + exp + ")"
		}
	}
	if ph[bad] == ' ' || ph[bad] == '\t' {
		msg = fmt.Sprintf("invalid placeholder %s: space inside a reference; spaces are only allowed just inside the braces, as in ${{ secrets.KEY }}", ph)
	} else {
		msg += "; a reference is names of letters, digits, '_' or '-' joined by dots, e.g. ${{secrets.KEY}}"
	}
	return &Error{Span: Span{base + bad, base + end}, Code: CodeSyntax, Message: msg}
}

func nextRune(s string, i int) int {
	for j := i + 1; j <= len(s); j++ {
		if j == len(s) || s[j]&0xC0 != 0x80 {
			return j
		}
	}
	return len(s)
}

// resolveShape checks a path against the namespace rules.
func resolveShape(path []string, spans []Span, whole Span) (*Ref, *Error) {
	ref := &Ref{Path: path, Span: whole}
	fail := func(code, msg string, sugg []string) (*Ref, *Error) {
		e := &Error{Span: whole, Code: code, Message: msg}
		if sugg != nil {
			e.Suggestion = "${{" + strings.Join(sugg, ".") + "}}"
		}
		return nil, e
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
			return fail(CodeKobanaRef, fmt.Sprintf("invalid reference %s: a run fact is referenced as kobana.KEY, with one of: %s", ref, strings.Join(KobanaKeys, ", ")), nil)
		}
		if !kobanaKeySet[path[1]] {
			var sugg []string
			if c := suggest.Closest(path[1], KobanaKeys); c != "" {
				sugg = []string{"kobana", c}
			}
			return fail(CodeUnknownKobana, fmt.Sprintf("unknown run fact %s: the kobana keys are %s", ref, strings.Join(KobanaKeys, ", ")), sugg)
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
		if c := suggest.Closest(path[0], NamespaceNames); c != "" {
			sugg = append([]string{c}, path[1:]...)
			if c == "email" && (len(path) < 2 || path[1] != "attachments") {
				sugg = nil
			}
		}
		return fail(CodeUnknownNS, fmt.Sprintf("unknown namespace %q in %s: a reference starts with secrets, kobana, steps or email", path[0], ref), sugg)
	}
	return ref, nil
}

type failFunc func(code, msg string, sugg []string) (*Ref, *Error)

const stepsHelp = "an earlier step is referenced as steps.N.response.status, steps.N.response.body[.path…] or steps.N.response.headers.NAME"

func stepsShape(ref *Ref, fail failFunc) (*Ref, *Error) {
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
	return ref, nil
}

const emailHelp = "an attachment is referenced as email.attachments.N, optionally followed by .base64, .filename, .content_type or .size"

func emailShape(ref *Ref, fail failFunc) (*Ref, *Error) {
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
			if c := suggest.Closest(p[3], AttachmentSuffixes); c != "" {
				sugg = []string{"email", "attachments", p[2], c}
			}
			return fail(CodeAttachmentRef, fmt.Sprintf("invalid reference %s: %s", ref, emailHelp), sugg)
		}
		ref.Attachment = part
	default:
		return fail(CodeAttachmentRef, fmt.Sprintf("invalid reference %s: %s", ref, emailHelp), nil)
	}
	return ref, nil
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
