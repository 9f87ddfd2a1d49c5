package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/kobana/workflow/internal/jsonpos"
	"github.com/kobana/workflow/internal/sendurl"
	"github.com/kobana/workflow/internal/suggest"
	"github.com/kobana/workflow/lang"
)

var stepFields = [...]string{"type", "label", "method", "url", "headers", "body", "form", "expected_status"}

// StepFields returns the fields a step may have, as a new slice.
func StepFields() []string { return slices.Clone(stepFields[:]) }

var reservedHeaders = [...]string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Proxy-Authorization"}

// ReservedHeaders returns, as a new slice, the header names a step may not
// set because the platform sets them (compared case-insensitively); every
// x-kobana-* name is reserved too.
func ReservedHeaders() []string { return slices.Clone(reservedHeaders[:]) }

var transportHeaders = [...]string{"Trailer", "TE", "Keep-Alive", "Proxy-Connection", "Expect"}

// TransportHeaders returns, as a new slice, the header names a step may not
// set because the HTTP transport would drop or rewrite them, so the request
// sent would not be the one recorded (compared case-insensitively).
func TransportHeaders() []string { return slices.Clone(transportHeaders[:]) }

// Compile validates doc, the agent's output, with what is known of the
// workspace it will run in (the zero Options know nothing: the document is
// checked alone), and returns its Plan with every diagnostic found. The Plan
// is nil when any diagnostic is an error; it has no steps when the document
// asks for no action.
func Compile(doc []byte, opts Options) (*Plan, Diagnostics) {
	c := &compiler{doc: doc, opts: opts}
	plan := c.compile()
	ds := c.finish()
	if ds.HasErrors() {
		return nil, ds
	}
	return plan, ds
}

// Outline is what a document holds at its top level, as the compiler reads
// it (strictly: of duplicate keys, none is taken for another).
type Outline struct {
	// Object reports whether the document is a JSON object.
	Object bool
	// Result reports whether it has a "result" member.
	Result bool
	// Workflow reports whether its "workflow" member is present and is
	// neither null nor an empty array: the agent asked for steps (which
	// may not validate).
	Workflow bool
}

// OutlineOf returns doc's Outline, for a caller that decides what to do
// with an agent's answer (is it an answer at all, does it ask for a
// workflow) whether or not it compiles. A document that is not JSON has the
// zero Outline.
func OutlineOf(doc []byte) Outline {
	if len(doc) > MaxDocumentSize {
		return Outline{}
	}
	root, _, fatal := jsonpos.Parse(doc)
	if fatal || root.Kind != jsonpos.Object {
		return Outline{}
	}
	return outlineOf(root)
}

// outlineOf reads the outline of a document whose root is an object.
func outlineOf(root *jsonpos.Value) Outline {
	workflow := root.Get("workflow")
	return Outline{
		Object:   true,
		Result:   root.Get("result") != nil,
		Workflow: workflow != nil && workflow.Kind != jsonpos.Null && (workflow.Kind != jsonpos.Array || len(workflow.Elems) > 0),
	}
}

// issue is a diagnostic before its byte range is mapped to lines and columns.
type issue struct {
	sev        Severity
	code       string
	msg        string
	ptr        string
	start, end int
	suggestion string
}

type compiler struct {
	doc    []byte
	opts   Options
	issues []issue
}

func (c *compiler) add(sev Severity, code, ptr string, start, end int, suggestion, format string, args ...any) {
	c.issues = append(c.issues, issue{sev: sev, code: code, msg: fmt.Sprintf(format, args...), ptr: ptr, start: start, end: end, suggestion: suggestion})
}

func (c *compiler) errorAt(v *jsonpos.Value, code, ptr, format string, args ...any) {
	c.add(SeverityError, code, ptr, v.Start, v.End, "", format, args...)
}

func (c *compiler) finish() Diagnostics {
	if len(c.issues) == 0 {
		return nil
	}
	sort.SliceStable(c.issues, func(i, j int) bool { return c.issues[i].start < c.issues[j].start })
	li := newLineIndex(c.doc)
	ds := make(Diagnostics, len(c.issues))
	for i, is := range c.issues {
		ds[i] = Diagnostic{
			Severity: is.sev, Code: is.code, Message: is.msg, Pointer: is.ptr,
			Range:      Range{Start: li.pos(is.start), End: li.pos(is.end)},
			Suggestion: is.suggestion,
		}
	}
	return ds
}

func (c *compiler) compile() *Plan {
	if len(c.doc) > MaxDocumentSize {
		c.add(SeverityError, CodeTooLarge, "", 0, 0, "", "document is %d bytes; the limit is %d bytes (1 MiB)", len(c.doc), MaxDocumentSize)
		return nil
	}
	root, problems, fatal := jsonpos.Parse(c.doc)
	for _, p := range problems {
		ptr := ""
		if p.Key != nil {
			ptr = c.pointerOf(root, p.Key)
		}
		c.add(SeverityError, p.Code, ptr, p.Start, p.End, "", "%s", p.Message)
	}
	if fatal {
		return nil
	}
	if root.Kind != jsonpos.Object {
		c.errorAt(root, CodeNotObject, "", `the document must be a JSON object {"result": …, "workflow": […]}, not %s %s`, article(root.Kind), root.Kind)
		return nil
	}
	plan := &Plan{}
	var workflow *jsonpos.Value
	for _, m := range root.Members {
		switch m.Key.Text {
		case "result":
			if plan.Result == nil {
				plan.Result = json.RawMessage(c.doc[m.Value.Start:m.Value.End])
			}
		case "workflow":
			if workflow == nil {
				workflow = m.Value
			}
		case "$schema":
			// Points editors at workflow.schema.json; not part of the output.
		default:
			sugg := suggest.Closest(m.Key.Text, []string{"result", "workflow"})
			msg := fmt.Sprintf("unknown top-level key %q is ignored: the document has \"result\" and, optionally, \"workflow\"", m.Key.Text)
			if sugg != "" {
				msg += fmt.Sprintf("; did you mean %q?", sugg)
			}
			c.add(SeverityWarning, CodeUnknownTopLevel, pointer(m.Key.Text), m.Key.Start, m.Key.End, sugg, "%s", msg)
		}
	}
	if root.Get("result") == nil {
		c.add(SeverityWarning, CodeMissingResult, "", root.Start, root.Start+1, "", `the document has no "result": the agent's analysis belongs there`)
	}
	if workflow == nil {
		return plan
	}
	if workflow.Kind == jsonpos.Null {
		return plan
	}
	if workflow.Kind != jsonpos.Array {
		c.errorAt(workflow, CodeWorkflowType, "/workflow", `"workflow" must be an array of steps, not %s %s`, article(workflow.Kind), workflow.Kind)
		return nil
	}
	if len(workflow.Elems) == 0 {
		c.add(SeverityWarning, CodeWorkflowEmpty, "/workflow", workflow.Start, workflow.End, "", `"workflow" is empty: omit it when no action is needed`)
		return plan
	}
	if n := len(workflow.Elems); n > MaxSteps {
		extra := workflow.Elems[MaxSteps]
		c.add(SeverityError, CodeTooManySteps, "/workflow", extra.Start, workflow.End, "", "the workflow has %d steps; at most %d are allowed", n, MaxSteps)
	}
	for i, sv := range workflow.Elems {
		if st := c.step(i, len(workflow.Elems), sv); st != nil {
			plan.Steps = append(plan.Steps, st)
		}
	}
	return plan
}

func article(k jsonpos.Kind) string {
	switch k {
	case jsonpos.Object, jsonpos.Array:
		return "an"
	}
	return "a"
}

// step compiles one step; it returns nil when the step is too broken to plan.
func (c *compiler) step(i, total int, v *jsonpos.Value) *Step {
	base := pointer("workflow", strconv.Itoa(i))
	if v.Kind != jsonpos.Object {
		c.errorAt(v, CodeStepType, base, `step %d must be an object such as {"type": %q, "url": "https://…"}, not %s %s`, i, stepTypes[0].Name, article(v.Kind), v.Kind)
		return nil
	}
	st := &Step{Index: i, Method: "POST"}
	sc := stepCompiler{compiler: c, step: st, base: base, total: total}
	fields := map[string]*jsonpos.Value{}
	for _, m := range v.Members {
		name := m.Key.Text
		if _, dup := fields[name]; dup {
			continue // already reported as a duplicate key
		}
		fields[name] = m.Value
		known := false
		for _, f := range stepFields {
			if f == name {
				known = true
				break
			}
		}
		if !known {
			sugg := suggest.Closest(name, stepFields[:])
			msg := fmt.Sprintf("unknown field %q in step %d: a step has %s", name, i, strings.Join(stepFields[:], ", "))
			if sugg != "" {
				msg = fmt.Sprintf("unknown field %q in step %d; did you mean %q? A step has %s", name, i, sugg, strings.Join(stepFields[:], ", "))
			}
			c.add(SeverityError, CodeUnknownField, base+"/"+escapePointer(name), m.Key.Start, m.Key.End, sugg, "%s", msg)
		}
	}
	ok := true
	// type
	if t := fields["type"]; t == nil {
		c.add(SeverityError, CodeMissingField, base, v.Start, v.Start+1, "", `step %d has no "type": %s`, i, StepTypesText())
		ok = false
	} else if sc.noPlaceholder(t, "type") && sc.wantString(t, "type") {
		if !IsStepType(t.Text) {
			c.errorAt(t, CodeUnknownStepType, base+"/type", `unknown step type %q: %s; a workflow with an unknown step is rejected whole`, t.Text, StepTypesText())
			ok = false
		}
	} else {
		ok = false
	}
	// label
	if l := fields["label"]; l != nil && sc.wantString(l, "label") && sc.noPlaceholder(l, "label") {
		st.Label = l.Text
	}
	// method
	if m := fields["method"]; m != nil && sc.wantString(m, "method") && sc.noPlaceholder(m, "method") {
		if !validMethod(m.Text) {
			up := strings.ToUpper(strings.TrimSpace(m.Text))
			if validMethod(up) && strings.TrimSpace(m.Text) != m.Text {
				c.add(SeverityError, CodeMethod, base+"/method", m.Start, m.End, up, "method %q has spaces around it: write %q", m.Text, up)
			} else if validMethod(up) {
				c.add(SeverityError, CodeMethod, base+"/method", m.Start, m.End, up, "method %q must be written in upper case: %q", m.Text, up)
			} else {
				c.errorAt(m, CodeMethod, base+"/method", "method %q is not supported: use one of %s", m.Text, strings.Join(methods[:], ", "))
			}
		} else {
			st.Method = m.Text
		}
	}
	// url
	if u := fields["url"]; u == nil {
		c.add(SeverityError, CodeMissingField, base, v.Start, v.Start+1, "", `step %d has no "url": every request step needs one`, i)
	} else if sc.wantString(u, "url") {
		st.URL = sc.template(u, base+"/url")
		sc.checkURL(u, st.URL)
		sc.scanLiterals(u, base+"/url", st.URL, inURL, "")
	}
	// headers
	if h := fields["headers"]; h != nil {
		sc.headers(h)
	}
	body, form := fields["body"], fields["form"]
	if body != nil && form != nil {
		c.add(SeverityError, CodeBodyAndForm, base+"/form", keyStart(v, "form"), form.End, "", `step %d has both "body" and "form": use "body" for JSON or text, "form" for multipart/form-data, not both`, i)
	}
	if body != nil {
		sc.body(body)
	}
	if form != nil {
		sc.form(form)
	}
	// expected_status
	if es := fields["expected_status"]; es != nil {
		sc.expectedStatus(es)
	}
	st.DependsOn = sc.deps()
	sc.checkPolicy(fields["url"])
	if !ok {
		return nil
	}
	return st
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func keyStart(obj *jsonpos.Value, key string) int {
	for _, m := range obj.Members {
		if m.Key.Text == key {
			return m.Key.Start
		}
	}
	return obj.Start
}

func validMethod(m string) bool {
	for _, x := range methods {
		if m == x {
			return true
		}
	}
	return false
}

// stepCompiler holds the state of one step being compiled.
type stepCompiler struct {
	*compiler
	step  *Step
	base  string
	total int
	refs  map[int]bool
	// headerKeys maps each kept header name to its key in the document.
	headerKeys map[string]*jsonpos.Value
	// secrets are the step's references to secrets, in document order.
	secrets []placedSecret
	// flagged are the string values already reported as holding a
	// credential or file content, by their start offset: one such
	// diagnostic per value.
	flagged map[int]bool
}

func (sc *stepCompiler) wantString(v *jsonpos.Value, field string) bool {
	if v.Kind == jsonpos.String {
		return true
	}
	sc.errorAt(v, CodeFieldType, sc.base+"/"+field, "%q must be a string, not %s %s", field, article(v.Kind), v.Kind)
	return false
}

// noPlaceholder reports a placeholder in a field that does not take them.
func (sc *stepCompiler) noPlaceholder(v *jsonpos.Value, what string) bool {
	if v.Kind != jsonpos.String {
		return true
	}
	i := strings.Index(v.Text, "${{")
	if i < 0 {
		return true
	}
	start := jsonpos.SourceOffset(sc.doc, v, i)
	end := v.End - 1
	if j := strings.Index(v.Text[i:], "}}"); j >= 0 {
		end = jsonpos.SourceOffset(sc.doc, v, i+j+2)
	}
	ptr := sc.base + "/" + escapePointer(what)
	if what == "header name" || what == "form field name" || what == "body key" {
		ptr = sc.base
	}
	sc.add(SeverityError, CodeNotAllowed, ptr, start, end, "", "placeholders are not allowed in %s: they may appear in the url, header values, body string values and form values", describeField(what))
	return false
}

func describeField(what string) string {
	switch what {
	case "type", "method", "label":
		return fmt.Sprintf("%q", what)
	}
	return what + "s"
}

// template parses a string value that may hold placeholders, reporting
// problems at their exact place in the document.
func (sc *stepCompiler) template(v *jsonpos.Value, ptr string) lang.Template {
	t, err := lang.Parse(v.Text)
	if err != nil {
		var list lang.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				start := jsonpos.SourceOffset(sc.doc, v, e.Span.Start)
				end := jsonpos.SourceOffset(sc.doc, v, e.Span.End)
				msg := e.Message
				if e.Suggestion != "" {
					msg += fmt.Sprintf("; did you mean %s?", e.Suggestion)
				}
				sc.add(SeverityError, e.Code, ptr, start, end, e.Suggestion, "%s", msg)
			}
		}
	}
	for _, r := range t.Refs() {
		sc.checkRef(v, ptr, r)
	}
	return t
}

// checkRef applies the rules that need the workflow around a reference.
func (sc *stepCompiler) checkRef(v *jsonpos.Value, ptr string, r *lang.Ref) {
	if r.Namespace == lang.Secrets {
		sc.secrets = append(sc.secrets, placedSecret{ref: r, v: v, ptr: ptr})
		sc.checkSecretName(v, ptr, r)
		return
	}
	if r.Namespace != lang.Steps {
		return
	}
	i := sc.step.Index
	if r.Index < i {
		if sc.refs == nil {
			sc.refs = map[int]bool{}
		}
		sc.refs[r.Index] = true
		return
	}
	start := jsonpos.SourceOffset(sc.doc, v, r.Span.Start)
	end := jsonpos.SourceOffset(sc.doc, v, r.Span.End)
	var why string
	switch {
	case r.Index == i:
		why = fmt.Sprintf("step %d refers to its own response", i)
	case r.Index >= sc.total:
		why = fmt.Sprintf("step %d refers to step %d, but the workflow has %s (indices start at 0)", i, r.Index, plural(sc.total, "step"))
	default:
		why = fmt.Sprintf("step %d refers to step %d, which runs after it", i, r.Index)
	}
	allowed := "the first step cannot reference any response"
	switch i {
	case 0:
	case 1:
		allowed = "only step 0 can be referenced"
	default:
		allowed = fmt.Sprintf("only earlier steps (0 to %d) can be referenced", i-1)
	}
	sc.step.Forward = append(sc.step.Forward, r)
	sc.add(SeverityWarning, CodeForwardReference, ptr, start, end, "", "%s: %s; this step will fail at run time without sending anything (the other steps still run)", why, allowed)
}

func (sc *stepCompiler) deps() []int {
	if len(sc.refs) == 0 {
		return nil
	}
	out := make([]int, 0, len(sc.refs))
	for n := range sc.refs {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// checkURL checks what can be known of a URL before substitution: it holds
// no control character; a literal URL is an absolute http(s) URL with a
// host; a URL that starts with literal text starts with a scheme the guard
// allows and, when that text shows the host, has one. Characters that may
// never appear in a URL, in the literal text, are reported as sent
// percent-encoded.
func (sc *stepCompiler) checkURL(v *jsonpos.Value, t lang.Template) {
	ptr := sc.base + "/url"
	for i := 0; i < len(v.Text); i++ {
		if sendurl.IsControl(v.Text[i]) {
			p := jsonpos.SourceOffset(sc.doc, v, i)
			sc.add(SeverityError, CodeURL, ptr, p, jsonpos.SourceOffset(sc.doc, v, i+1), "", "the url contains %s, a control character no URL may hold: write it percent-encoded (%%%02X) if it belongs there", sendurl.ControlName(v.Text[i]), v.Text[i])
			return
		}
	}
	prefix := v.Text
	if !t.IsLiteral() {
		prefix = ""
		if t.Segments[0].Ref == nil {
			prefix = t.Segments[0].Literal
		}
	}
	if strings.TrimSpace(v.Text) == "" {
		sc.errorAt(v, CodeURL, ptr, "the url is empty: write an absolute https:// or http:// URL, or build it of placeholders")
		return
	}
	if slices.ContainsFunc(t.Segments, func(s lang.Segment) bool { return s.Invalid }) {
		return // a broken placeholder, already reported
	}
	for _, r := range t.Refs() {
		if r.Namespace == lang.Email && (r.Attachment == lang.AttachmentContent || r.Attachment == lang.AttachmentBase64) {
			sc.add(SeverityWarning, CodeFileOutsideForm, ptr, v.Start, v.End, "", "the url would carry the whole attachment %d as base64; send files in a form field instead", r.Index)
		}
	}
	sc.checkURLCharacters(v, t)
	if prefix == "" {
		return // the scheme comes from a placeholder; the guard checks it after substitution
	}
	scheme, rest, found := strings.Cut(prefix, ":")
	if found {
		s := strings.ToLower(scheme)
		if s != "http" && s != "https" {
			sc.errorAt(v, CodeURL, ptr, "url scheme %q is not allowed: only http and https", scheme)
			return
		}
	} else if t.IsLiteral() || len(prefix) >= len("https://") {
		sc.errorAt(v, CodeURL, ptr, "url %q is not absolute: it must start with https:// or http://", clip(v.Text))
		return
	}
	if t.IsLiteral() {
		live, _, err := sendurl.Build(v.Text, nil)
		if err != nil {
			sc.errorAt(v, CodeURL, ptr, "url %q cannot be sent: %v", clip(v.Text), err)
			return
		}
		u, err := url.Parse(live)
		if err != nil {
			var ue *url.Error
			msg := err.Error()
			if errors.As(err, &ue) {
				msg = ue.Err.Error()
			}
			sc.errorAt(v, CodeURL, ptr, "url %q does not parse: %s", clip(v.Text), msg)
			return
		}
		if u.Hostname() == "" {
			sc.errorAt(v, CodeURL, ptr, "url %q has no host: write it as %s://host/path", clip(v.Text), strings.ToLower(scheme))
		}
		return
	}
	if found && literalHasNoHost(rest) {
		sc.errorAt(v, CodeURL, ptr, "url %q has no host, whatever its placeholders hold: write it as %s://host/path", clip(v.Text), strings.ToLower(scheme))
	}
}

// literalHasNoHost reports whether a URL whose literal text after the
// scheme's colon is rest, followed by a placeholder, certainly has no host:
// it has no authority ("https:a.example/…"), or its authority ends within
// rest with an empty host ("https:///…", "https://user@/…", "https://:80/…").
// When a placeholder may still supply the host, it reports false.
func literalHasNoHost(rest string) bool {
	switch {
	case rest == "" || rest == "/":
		return false // the placeholder may hold "//host…"
	case !strings.HasPrefix(rest, "//"):
		return true
	}
	auth := rest[2:]
	end := strings.IndexAny(auth, "/?#")
	if end < 0 {
		return false // the authority runs into the placeholder
	}
	host := auth[strings.LastIndexByte(auth[:end], '@')+1 : end]
	return host == "" || host[0] == ':'
}

// checkURLCharacters reports the literal characters of a URL that a URL
// may not hold as written: they are sent percent-encoded, or, in the host,
// as its punycode form. One diagnostic per URL, at the first of them.
func (sc *stepCompiler) checkURLCharacters(v *jsonpos.Value, t lang.Template) {
	refs := t.Refs()
	first, count := -1, 0
	for i, r := 0, 0; i < len(v.Text); i++ {
		if r < len(refs) && i >= refs[r].Span.Start {
			i = refs[r].Span.End - 1
			r++
			continue
		}
		c := v.Text[i]
		if sendurl.UnsafeByte(c) || c == '%' && sendurl.LoneEscape(v.Text, i) {
			if c >= 0x80 && !utf8.RuneStart(c) {
				continue // the rest of a character already counted
			}
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if first < 0 {
		return
	}
	size := 1
	if v.Text[first] >= 0x80 {
		_, size = utf8.DecodeRuneInString(v.Text[first:])
	}
	char := v.Text[first : first+size]
	more := ""
	switch count {
	case 1:
	case 2:
		more = " (the url has 1 more such character)"
	default:
		more = fmt.Sprintf(" (the url has %d more such characters)", count-1)
	}
	start, end := jsonpos.SourceOffset(sc.doc, v, first), jsonpos.SourceOffset(sc.doc, v, first+size)
	ptr := sc.base + "/url"
	if hs, he := sendurl.HostSpan(v.Text); first >= hs && first < he {
		host := v.Text[hs:he]
		if slices.ContainsFunc(refs, func(r *lang.Ref) bool { return r.Span.Start < he && r.Span.End > hs }) {
			sc.add(SeverityWarning, CodeURLUnencoded, ptr, start, end, "", "the host name %q is not ASCII: it is sent in its international (punycode) form, once its placeholders are filled in%s", host, more)
			return
		}
		ascii, err := sendurl.ASCIIHost(host)
		if err != nil {
			if t.IsLiteral() {
				return // the url cannot be sent: an error says so
			}
			sc.add(SeverityWarning, CodeURLUnencoded, ptr, start, end, "", "the host name %q is not ASCII and has no international (punycode) form, so the step fails before sending: %v", host, errors.Unwrap(err))
			return
		}
		sc.add(SeverityWarning, CodeURLUnencoded, ptr, start, end, "", "the host name %q is not ASCII: it is sent as %s, its international (punycode) form%s", host, ascii, more)
		return
	}
	var enc strings.Builder
	for j := 0; j < len(char); j++ {
		fmt.Fprintf(&enc, "%%%02X", char[j])
	}
	what := fmt.Sprintf("%q", char)
	switch char {
	case " ":
		what = "a space"
	case "%":
		what = "a % that does not start a %XX escape"
	}
	sc.add(SeverityWarning, CodeURLUnencoded, ptr, start, end, "", "the url contains %s, which a URL may not hold as written: it is sent percent-encoded as %s, so write %s%s", what, enc.String(), enc.String(), more)
}

// clip shortens s to at most 80 bytes for a message, cut on a rune
// boundary so that a diagnostic stays UTF-8.
func clip(s string) string {
	if len(s) > 80 {
		cut := 77
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "..."
	}
	return s
}

func (sc *stepCompiler) headers(h *jsonpos.Value) {
	ptr := sc.base + "/headers"
	if h.Kind != jsonpos.Object {
		sc.errorAt(h, CodeFieldType, ptr, `"headers" must be an object of header name → string value, not %s %s`, article(h.Kind), h.Kind)
		return
	}
	seen := map[string]string{}
	sc.headerKeys = map[string]*jsonpos.Value{}
	for _, m := range h.Members {
		name := m.Key.Text
		hp := ptr + "/" + escapePointer(name)
		keyOK := sc.noPlaceholder(m.Key, "header name")
		if keyOK && !httpguts.ValidHeaderFieldName(name) {
			sc.add(SeverityError, CodeHeaderName, hp, m.Key.Start, m.Key.End, "", "header name %q is not a valid HTTP token: use letters, digits and !#$%%&'*+-.^_`|~ only, no spaces, colons or line breaks", name)
			keyOK = false
		}
		if keyOK && isReserved(name) {
			sc.add(SeverityError, CodeReservedHeader, hp, m.Key.Start, m.Key.End, "", "header %q is reserved: %s are set by the platform, and x-kobana-* names belong to Kobana", name, strings.Join(reservedHeaders[:], ", "))
			keyOK = false
		}
		if keyOK && isTransportHeader(name) {
			sc.add(SeverityError, CodeReservedHeader, hp, m.Key.Start, m.Key.End, "", "header %q is reserved: the transport cannot send it as written (it drops or rewrites %s), so the request sent would not be the one recorded", name, strings.Join(transportHeaders[:], ", "))
			keyOK = false
		}
		if keyOK {
			lower := strings.ToLower(name)
			if prev, dup := seen[lower]; dup && prev != name {
				sc.add(SeverityError, CodeHeaderDuplicate, hp, m.Key.Start, m.Key.End, "", "header %q is also given as %q: header names are case-insensitive, give it once", name, prev)
				keyOK = false
			} else if !dup {
				seen[lower] = name
			}
		}
		if m.Value.Kind != jsonpos.String {
			sc.errorAt(m.Value, CodeFieldType, hp, "the value of header %q must be a string, not %s %s", name, article(m.Value.Kind), m.Value.Kind)
			continue
		}
		val := sc.template(m.Value, hp)
		sc.scanLiterals(m.Value, hp, val, inHeader, name)
		if bad := invalidHeaderValueByte(m.Value.Text); bad >= 0 {
			p := jsonpos.SourceOffset(sc.doc, m.Value, bad)
			sc.add(SeverityError, CodeHeaderValue, hp, p, jsonpos.SourceOffset(sc.doc, m.Value, bad+1), "", "the value of header %q contains a control character (%q): CR, LF and NUL would allow header injection", name, m.Value.Text[bad:bad+1])
			continue
		}
		if !keyOK {
			continue
		}
		if ref := val.WholeRef(); ref != nil && ref.Namespace == lang.Email && ref.Attachment == lang.AttachmentContent {
			sc.add(SeverityWarning, CodeFileOutsideForm, hp, m.Value.Start, m.Value.End, "", "header %q would carry the whole attachment %d as base64; send files in a form field instead", name, ref.Index)
		}
		sc.headerKeys[name] = m.Key
		sc.step.Headers = append(sc.step.Headers, Header{Name: name, Value: val})
	}
}

// invalidHeaderValueByte returns the index of the first byte that may not
// appear in a header value (CR, LF, NUL and other controls except tab), or -1.
func invalidHeaderValueByte(s string) int {
	if httpguts.ValidHeaderFieldValue(s) {
		return -1
	}
	for i := 0; i < len(s); i++ {
		if !httpguts.ValidHeaderFieldValue(s[i : i+1]) {
			return i
		}
	}
	return 0
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func isTransportHeader(name string) bool {
	for _, h := range transportHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

func isReserved(name string) bool {
	for _, r := range reservedHeaders {
		if strings.EqualFold(r, name) {
			return true
		}
	}
	return len(name) >= len("x-kobana-") && strings.EqualFold(name[:len("x-kobana-")], "x-kobana-")
}

func (sc *stepCompiler) body(b *jsonpos.Value) {
	ptr := sc.base + "/body"
	switch b.Kind {
	case jsonpos.String:
		t := sc.template(b, ptr)
		sc.scanLiterals(b, ptr, t, inBody, "")
		sc.step.Body = &Body{Kind: BodyText, Text: t}
	case jsonpos.Object, jsonpos.Array:
		sc.step.Body = &Body{Kind: BodyJSON, JSON: sc.jsonValue(b, ptr, "")}
	default:
		sc.errorAt(b, CodeFieldType, ptr, `"body" must be a string (sent as is), an object or an array (sent as JSON), not %s %s`, article(b.Kind), b.Kind)
	}
}

// jsonValue compiles a value of a JSON body; key is the key of the member
// it is the value of ("" in an array or at the top).
func (sc *stepCompiler) jsonValue(v *jsonpos.Value, ptr, key string) *Value {
	switch v.Kind {
	case jsonpos.String:
		t := sc.template(v, ptr)
		sc.scanLiterals(v, ptr, t, inBody, key)
		return &Value{Kind: ValueString, Text: t}
	case jsonpos.Object:
		out := &Value{Kind: ValueObject, Members: make([]Member, 0, len(v.Members))}
		for _, m := range v.Members {
			sc.noPlaceholder(m.Key, "body key")
			out.Members = append(out.Members, Member{Key: m.Key.Text, Value: sc.jsonValue(m.Value, ptr+"/"+escapePointer(m.Key.Text), m.Key.Text)})
		}
		return out
	case jsonpos.Array:
		out := &Value{Kind: ValueArray, Elems: make([]*Value, 0, len(v.Elems))}
		for i, e := range v.Elems {
			out.Elems = append(out.Elems, sc.jsonValue(e, ptr+"/"+strconv.Itoa(i), ""))
		}
		return out
	default:
		return &Value{Kind: ValueLiteral, Literal: v.Text}
	}
}

func (sc *stepCompiler) form(f *jsonpos.Value) {
	ptr := sc.base + "/form"
	if f.Kind != jsonpos.Object {
		sc.errorAt(f, CodeFieldType, ptr, `"form" must be an object of field name → string value, not %s %s`, article(f.Kind), f.Kind)
		return
	}
	fields := make([]FormField, 0, len(f.Members))
	for _, m := range f.Members {
		fp := ptr + "/" + escapePointer(m.Key.Text)
		if sc.noPlaceholder(m.Key, "form field name") {
			if m.Key.Text == "" {
				sc.add(SeverityError, CodeFormFieldName, fp, m.Key.Start, m.Key.End, "", "a form field needs a name")
				continue
			}
			if bad := strings.IndexFunc(m.Key.Text, isControl); bad >= 0 {
				sc.add(SeverityError, CodeFormFieldName, fp, m.Key.Start, m.Key.End, "", "form field name %q contains a control character: names go into the part's header, so CR, LF, NUL and other controls are not allowed", m.Key.Text)
				continue
			}
		}
		if m.Value.Kind != jsonpos.String {
			sc.errorAt(m.Value, CodeFieldType, fp, "form field %q must be a string, not %s %s; use ${{email.attachments.N}} as the whole value to upload a file", m.Key.Text, article(m.Value.Kind), m.Value.Kind)
			continue
		}
		t := sc.template(m.Value, fp)
		sc.scanLiterals(m.Value, fp, t, inForm, m.Key.Text)
		field := FormField{Name: m.Key.Text, Value: t}
		if ref := t.WholeRef(); ref != nil && ref.Namespace == lang.Email && ref.Attachment == lang.AttachmentContent {
			field.File = ref
		}
		fields = append(fields, field)
	}
	sc.step.Form = fields
	// A content-type header on a form step is dropped: the boundary is ours.
	kept := sc.step.Headers[:0]
	for _, h := range sc.step.Headers {
		if strings.EqualFold(h.Name, "content-type") {
			start, end := f.Start, f.Start+1
			if k := sc.headerKeys[h.Name]; k != nil {
				start, end = k.Start, k.End
			}
			sc.add(SeverityWarning, CodeFormContentType, sc.base+"/headers/"+escapePointer(h.Name), start, end, "",
				"header %q is dropped on a form step: the body is sent as multipart/form-data with our boundary", h.Name)
			continue
		}
		kept = append(kept, h)
	}
	sc.step.Headers = kept
}

func (sc *stepCompiler) expectedStatus(v *jsonpos.Value) {
	ptr := sc.base + "/expected_status"
	if v.Kind != jsonpos.Number {
		hint := ""
		if v.Kind == jsonpos.String {
			if n, err := strconv.Atoi(v.Text); err == nil && n >= 100 && n <= 599 {
				hint = fmt.Sprintf("; write %d without quotes", n)
			}
		}
		sc.errorAt(v, CodeExpectedStatus, ptr, `"expected_status" must be an integer status code from 100 to 599, not %s %s%s`, article(v.Kind), v.Kind, hint)
		return
	}
	n, err := strconv.Atoi(v.Text)
	if err != nil || n < 100 || n > 599 {
		sc.errorAt(v, CodeExpectedStatus, ptr, `"expected_status" must be an integer status code from 100 to 599, not %s`, clip(v.Text))
		return
	}
	sc.step.ExpectedStatus = n
}

// pointerOf finds the JSON pointer of a key token inside the tree.
func (c *compiler) pointerOf(root *jsonpos.Value, key *jsonpos.Value) string {
	if root == nil {
		return ""
	}
	var walk func(v *jsonpos.Value, path []string) (string, bool)
	walk = func(v *jsonpos.Value, path []string) (string, bool) {
		switch v.Kind {
		case jsonpos.Object:
			for _, m := range v.Members {
				p := append(path[:len(path):len(path)], m.Key.Text)
				if m.Key == key {
					return pointer(p...), true
				}
				if s, ok := walk(m.Value, p); ok {
					return s, true
				}
			}
		case jsonpos.Array:
			for i, e := range v.Elems {
				if s, ok := walk(e, append(path[:len(path):len(path)], strconv.Itoa(i))); ok {
					return s, true
				}
			}
		}
		return "", false
	}
	s, _ := walk(root, nil)
	return s
}
