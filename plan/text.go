package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
)

// BoundaryShown is how a plan shows the multipart boundary, which the
// renderer draws at random for each request (60 hexadecimal digits, counted
// in the sizes).
const BoundaryShown = "<random>"

// WriteText writes p for people: a summary, what the plan was made with,
// then each step with its outcome and the request it would send.
func WriteText(w io.Writer, p *Plan) error {
	tw := &textWriter{w: w}
	tw.plan(p)
	return tw.err
}

type textWriter struct {
	w   io.Writer
	err error
}

func (t *textWriter) line(indent int, format string, args ...any) {
	if t.err != nil {
		return
	}
	s := fmt.Sprintf(format, args...)
	_, t.err = fmt.Fprintf(t.w, "%s%s\n", strings.Repeat("  ", indent), printable(s))
}

func (t *textWriter) plan(p *Plan) {
	if !p.Valid {
		t.line(0, "the document does not validate: nothing would be sent")
		for _, d := range p.Diagnostics {
			t.line(1, "%s", d)
		}
		return
	}
	if len(p.Steps) == 0 {
		t.line(0, "the document has no workflow: nothing would be sent")
		return
	}
	t.line(0, "%s: %d would be sent, %d would fail before sending, %d would be skipped", plural(len(p.Steps), "step"), p.Summary.Send, p.Summary.Fail, p.Summary.Skip)
	for _, d := range p.Diagnostics {
		t.line(1, "%s", d)
	}
	t.given(p.Inputs)
	for _, s := range p.Steps {
		t.line(0, "")
		t.step(s)
	}
}

func (t *textWriter) given(g Given) {
	if g.SecretNames == nil {
		t.line(0, "secrets: names not given; every secret is assumed to exist")
	} else {
		t.line(0, "secrets: %s", list(g.SecretNames, "none"))
	}
	if g.Facts == nil {
		t.line(0, "facts: not given; shown as references (kobana.now is %s)", g.Now)
	} else {
		var keys []string
		for k := range g.Facts {
			if k != "now" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		t.line(0, "facts: %s; kobana.now is %s", list(keys, "none"), g.Now)
		if len(g.PendingFacts) > 0 {
			t.line(1, "known when the run starts, shown as references: %s", strings.Join(g.PendingFacts, ", "))
		}
	}
	if g.Attachments == nil {
		t.line(0, "e-mail: not given; attachments shown as references")
	} else {
		t.line(0, "e-mail: %s", plural(len(g.Attachments), "attachment"))
		for _, a := range g.Attachments {
			t.line(1, "%d: %s (%s), %s", a.Index, a.Filename, a.ContentType, plural64(a.Size, "byte"))
		}
	}
	if len(g.Responses) == 0 {
		t.line(0, "example responses: none; references to responses are shown as written")
	} else {
		var idx []string
		for _, i := range g.Responses {
			idx = append(idx, fmt.Sprint(i))
		}
		t.line(0, "example responses: step %s", strings.Join(idx, ", "))
	}
}

func (t *textWriter) step(s Step) {
	head := fmt.Sprintf("step %d", s.Index)
	if s.Label != "" {
		head += fmt.Sprintf(" %q", s.Label)
	}
	verb := map[string]string{Send: "would be sent", Fail: "would fail before sending", Skip: "would be skipped"}[s.Outcome]
	if s.Outcome != Send && s.Reason != "" {
		verb += " [" + string(s.Reason) + "]"
	}
	t.line(0, "%s: %s", head, verb)
	if s.Outcome != Send && s.Message != "" {
		t.line(1, "%s", s.Message)
	}
	if r := s.Request; r != nil {
		t.line(1, "%s %s", r.Method, r.URL)
		for _, h := range r.Headers {
			t.line(1, "%s: %s", h.Name, h.Value)
		}
		t.body(r.Body)
		t.host(r.Host)
	}
	if len(s.DependsOn) > 0 {
		var idx []string
		for _, i := range s.DependsOn {
			idx = append(idx, fmt.Sprint(i))
		}
		t.line(1, "uses the response of step %s", strings.Join(idx, ", "))
	}
	if s.Outcome == Send {
		want := "any 2xx status"
		if s.ExpectedStatus != 0 {
			want = fmt.Sprintf("status %d", s.ExpectedStatus)
		}
		switch {
		case s.Example == nil:
			t.line(1, "expects %s", want)
		case s.Example.Succeeds:
			t.line(1, "expects %s; the example response has status %d", want, s.Example.Status)
		default:
			t.line(1, "expects %s; %s [%s]", want, s.Message, s.Reason)
		}
	}
	if len(s.Unknown) > 0 {
		t.line(1, "known when the step runs: %s", strings.Join(s.Unknown, ", "))
	}
}

func (t *textWriter) body(b *Body) {
	if b == nil {
		t.line(1, "no body")
		return
	}
	size := plural64(b.Size, "byte")
	if len(b.Unknown) > 0 {
		size += " + the length of " + strings.Join(b.Unknown, ", ")
	}
	switch b.Kind {
	case BodyJSON:
		t.line(1, "body: JSON, %s", size)
		var buf bytes.Buffer
		if json.Indent(&buf, b.JSON, "", "  ") != nil {
			buf.Reset()
			buf.Write(b.JSON)
		}
		for _, l := range strings.Split(buf.String(), "\n") {
			t.line(2, "%s", l)
		}
	case BodyText:
		t.line(1, "body: text, %s", size)
		for _, l := range strings.Split(*b.Text, "\n") {
			t.line(2, "%s", l)
		}
	case BodyMultipart:
		t.line(1, "body: multipart/form-data, %s, %s", plural(len(b.Parts), "part"), size)
		for _, p := range b.Parts {
			t.part(p)
		}
	}
}

func (t *textWriter) part(p Part) {
	switch {
	case p.File != nil && p.File.Known:
		t.line(2, "%q: file, attachment %d %s (%s), %s", p.Name, p.File.Attachment, p.File.Filename, p.File.ContentType, plural64(p.Size, "byte"))
	case p.File != nil:
		t.line(2, "%q: file, attachment %d (no e-mail given: its name, type and bytes are known when the step runs)", p.Name, p.File.Attachment)
	default:
		size := plural64(p.Size, "byte")
		if len(p.Unknown) > 0 {
			size += " + the length of " + strings.Join(p.Unknown, ", ")
		}
		t.line(2, "%q: %q, %s", p.Name, *p.Value, size)
	}
}

func (t *textWriter) host(h Host) {
	switch h.Check {
	case HostAllowed:
		if h.Message != "" {
			t.line(1, "guard: %s", h.Message)
			return
		}
		var addrs []string
		for _, a := range h.Addresses {
			addrs = append(addrs, a.Addr)
		}
		if len(addrs) == 1 && addrs[0] == h.Name {
			t.line(1, "guard: host %s is an allowed address", h.Name)
		} else {
			t.line(1, "guard: host %s resolves to allowed addresses %s", h.Name, strings.Join(addrs, ", "))
		}
	case HostAtSend:
		t.line(1, "guard: %s", h.Message)
	}
	// A denied host is the step's failure message.
}

func plural(n int, what string) string { return plural64(int64(n), what) }

func plural64(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func list(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

// printable replaces characters that could rewrite a terminal (control
// and other non-printing characters from a document or a response) with
// U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) || r == ' ' {
			return r
		}
		return '\uFFFD'
	}, s)
}
