package emit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/internal/jsonstr"
	"github.com/kobana/workflow/internal/sendurl"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// Error says a step cannot be sent as rendered: the step fails before any
// byte leaves the machine.
type Error struct {
	// Field is where the problem is: "url", "header Authorization", "body", "form field file".
	Field string
	// Msg says what is wrong.
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

// ErrHeaderValue is wrapped by the Error of a header whose value, after
// substitution, holds a character a header may not (CR, LF, NUL, another
// control character): sending it could inject headers.
var ErrHeaderValue = errors.New("a header value that could inject headers")

func (e *Error) Unwrap() error { return e.Err }

// MaxScrubbedAttachment is the largest attachment whose bytes (raw and
// base64) are also removed from the rest of the run's record, should a
// receiver echo them back: a response is recorded up to 64 KiB, so larger
// files cannot appear there whole.
const MaxScrubbedAttachment = 64 << 10

// MaxInlineAttachment is the largest attachment that may be inlined as
// base64 into a URL or a header value, which are built in memory.
const MaxInlineAttachment = 64 << 10

// Request is a rendered step: what is sent, and its redacted record.
type Request struct {
	Method string
	URL    *url.URL
	// Header is sent as is; it includes the body's Content-Type.
	Header http.Header
	// Record is the persisted copy of the request.
	Record *runrecord.Request

	body *body
}

// ContentLength is the exact length of the body in bytes (0 without one).
func (r *Request) ContentLength() int64 {
	if r.body == nil {
		return 0
	}
	return r.body.length
}

// Body returns a fresh reader over the whole body; each call starts again
// from the first byte (attachments are streamed again from the .eml).
func (r *Request) Body() io.ReadCloser {
	if r.body == nil {
		return http.NoBody
	}
	return r.body.open()
}

// HTTPRequest returns the request ready for an http.Client, with an exact
// ContentLength and a GetBody that replays the body.
func (r *Request) HTTPRequest(ctx context.Context) (*http.Request, error) {
	if ctx == nil {
		return nil, errors.New("emit: nil context")
	}
	u := *r.URL
	req := (&http.Request{
		Method:     r.Method,
		URL:        &u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     r.Header, // net/http does not modify a client request's headers
		Host:       u.Host,
	}).WithContext(ctx)
	switch {
	case r.body == nil:
	case r.body.length == 0:
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	case r.body.inMemory() != nil:
		// Bytes already in memory go as a bytes.Reader, which net/http
		// writes together with the headers in one packet.
		data := r.body.inMemory()
		req.ContentLength = int64(len(data))
		req.Body = io.NopCloser(bytes.NewReader(data))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	default:
		req.ContentLength = r.body.length
		req.Body = r.body.open()
		req.GetBody = r.body.replay
	}
	return req, nil
}

// Render resolves every reference of step against scope and renders the
// live request and its record in one walk. It fails with *resolve.SkipError,
// *resolve.RefError or *Error before anything could be sent.
func Render(step *compile.Step, scope *resolve.Scope) (*Request, error) {
	return RenderWith(step, scope, Options{})
}

// Options change how RenderWith renders a step. The executor uses none: it
// calls Render.
type Options struct {
	// StandIn, when set, is asked first for each reference of the step
	// other than a forward one. A caller that describes a request instead
	// of sending it (a dry run, package plan) answers for what it cannot
	// know before the run — a secret's value, the response of a step it has
	// no example of, a fact it was not given — with a stand-in value for
	// the live request and the text the record shows in its place (empty
	// for the record's usual text, such as a secret's marker). With ok
	// false the scope resolves the reference as usual.
	StandIn func(r *lang.Ref) (v resolve.Value, record string, ok bool)
	// StepID, when set, is the step's identity (runrecord.Journal.Identity):
	// sent, and recorded, as runrecord.HeaderStepID and — for a method that
	// is not idempotent whose step sets no Idempotency-Key — as
	// runrecord.HeaderIdempotencyKey.
	StepID string
}

// RenderWith is Render with options.
func RenderWith(step *compile.Step, scope *resolve.Scope, opts Options) (*Request, error) {
	// A reference to this step or a later one can never resolve: the step
	// fails, whatever happened to the steps before it.
	if len(step.Forward) > 0 {
		r := step.Forward[0]
		if _, err := scope.Resolve(r); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("emit: step %d refers forward to %s, yet it resolved", step.Index, r)
	}
	if err := scope.Check(step.DependsOn); err != nil {
		return nil, err
	}
	red := scope.Redactor
	if red == nil {
		red = &resolve.Redactor{}
		scope.Redactor = red
	}
	rd := &renderer{scope: scope, red: red, standIn: opts.StandIn}
	req := &Request{Method: step.Method, Header: http.Header{}}
	rec := &runrecord.Request{Method: step.Method, Headers: map[string]string{}}
	req.Record = rec

	// URL
	u, record, err := rd.url(step.URL)
	if err != nil {
		return nil, err
	}
	req.URL = u
	rec.URL = record

	// Headers
	for _, h := range step.Headers {
		live, record, err := rd.inline(h.Value, "header "+h.Name)
		if err != nil {
			return nil, err
		}
		if !httpguts.ValidHeaderFieldValue(live) {
			bad := "a control character"
			if i := strings.IndexAny(live, "\r\n\x00"); i >= 0 {
				bad = sendurl.ControlName(live[i])
			}
			return nil, &Error{Field: "header " + h.Name, Msg: fmt.Sprintf("the value contains %s after substitution; it is not sent, as it could inject headers", bad), Err: ErrHeaderValue}
		}
		// net/http sends a value without its leading and trailing spaces
		// and tabs; so is it recorded.
		req.Header.Add(h.Name, textproto.TrimString(live))
		rec.Headers[h.Name] = textproto.TrimString(record)
	}

	// Body
	b := builder{buf: make([]byte, 0, 512)}
	switch {
	case step.Body != nil && step.Body.Kind == compile.BodyText:
		recText, err := rd.stream(&b, step.Body.Text, "body", nil)
		if err != nil {
			return nil, err
		}
		rec.Body = mustJSONString(recText)
	case step.Body != nil:
		recBuf, err := rd.jsonValue(&b, step.Body.JSON, make([]byte, 0, 256))
		if err != nil {
			return nil, err
		}
		rec.Body = json.RawMessage(recBuf)
		if _, ok := step.HeaderValue("Content-Type"); !ok {
			req.Header.Set("Content-Type", "application/json")
			rec.Headers["Content-Type"] = "application/json"
		}
	case step.Form != nil:
		recForm, ctype, err := rd.form(&b, step.Form)
		if err != nil {
			return nil, err
		}
		rec.Form = recForm
		req.Header.Set("Content-Type", ctype)
		rec.Headers["Content-Type"] = ctype
	}
	if id := opts.StepID; id != "" {
		req.Header.Set(runrecord.HeaderStepID, id)
		rec.Headers[runrecord.HeaderStepID] = id
		if _, own := step.HeaderValue(runrecord.HeaderIdempotencyKey); !own && runrecord.NeedsIdempotencyKey(step.Method) {
			key := runrecord.IdempotencyKey(id)
			req.Header.Set(runrecord.HeaderIdempotencyKey, key)
			rec.Headers[runrecord.HeaderIdempotencyKey] = key
		}
	}
	if step.Body != nil || step.Form != nil {
		var atts resolve.Attachments
		if b.streams() {
			atts, _ = scope.Email() // already opened to resolve the stream's reference
		}
		req.body = b.body(atts)
	}
	Redact(rec, red)
	return req, nil
}

// Redact rewrites a request record with every value red knows redacted in
// every form it covers (see resolve.Redactor): the url, header names and
// values, the body (a JSON body as JSON, so a number that spells a secret
// is redacted too) and the form. Render calls it once, at the end: the
// record it returns has been through it. Redacting again changes nothing.
func Redact(r *runrecord.Request, red *resolve.Redactor) {
	r.URL = red.String(r.URL)
	r.Headers = redactHeaders(red, r.Headers)
	r.Body = redactJSON(red, r.Body)
	r.Form = redactJSON(red, r.Form)
}

// redactHeaders redacts header names and values; two names that redact to
// the same marker keep both values, joined in name order.
func redactHeaders(red *resolve.Redactor, h map[string]string) map[string]string {
	same := true
	for name, value := range h {
		if red.String(name) != name || red.String(value) != value {
			same = false
			break
		}
	}
	if same {
		return h
	}
	out := make(map[string]string, len(h))
	for _, name := range slices.Sorted(maps.Keys(h)) {
		rn, rv := red.String(name), red.String(h[name])
		if prev, dup := out[rn]; dup {
			rv = prev + ", " + rv
		}
		out[rn] = rv
	}
	return out
}

func redactJSON(red *resolve.Redactor, doc json.RawMessage) json.RawMessage {
	if doc == nil {
		return nil
	}
	if out, ok := red.JSON(doc); ok {
		return out
	}
	return mustJSONString(red.String(string(doc))) // not reached: emit writes valid JSON
}

func mustJSONString(s string) json.RawMessage {
	out := append([]byte{'"'}, jsonstr.Append(nil, s)...)
	return append(out, '"')
}

type renderer struct {
	scope   *resolve.Scope
	red     *resolve.Redactor
	standIn func(*lang.Ref) (resolve.Value, string, bool)
	// records are the record texts stand-ins asked for, by reference.
	records map[*lang.Ref]string
}

// resolve returns the value of r: a stand-in's (see Options.StandIn), or
// the scope's.
func (rd *renderer) resolve(r *lang.Ref) (resolve.Value, error) {
	if rd.standIn != nil {
		if v, record, ok := rd.standIn(r); ok {
			if record != "" {
				if rd.records == nil {
					rd.records = map[*lang.Ref]string{}
				}
				rd.records[r] = record
			}
			return v, nil
		}
	}
	return rd.scope.Resolve(r)
}

// recordOf is the record's text for a resolved value: what is known here
// and nowhere else — that a value is a secret, or an attachment's bytes —
// or the text a stand-in asked for.
func (rd *renderer) recordOf(r *lang.Ref, v resolve.Value) string {
	if record, ok := rd.records[r]; ok {
		return record
	}
	switch v.Kind {
	case resolve.Secret:
		return resolve.Placeholder(r.Key)
	case resolve.File, resolve.Base64:
		return rd.describe(v)
	}
	return v.Text
}

// describe returns the record's description of an attachment's bytes,
// "[attachment N: name, type, size bytes]" (with "; repaired: code, …"
// before the bracket when reading it needed repairs: eml.Defect codes), and
// makes it a marker the redactor leaves alone (its name and type redacted
// first).
func (rd *renderer) describe(v resolve.Value) string {
	a := v.Attachment
	repaired := ""
	if len(a.Defects) > 0 {
		codes := make([]string, len(a.Defects))
		for i, d := range a.Defects {
			codes[i] = d.Code
		}
		repaired = "; repaired: " + strings.Join(codes, ", ")
	}
	desc := fmt.Sprintf("[attachment %d: %s, %s, %d bytes%s]", a.Index, rd.red.String(a.Filename), rd.red.String(a.ContentType), a.Size, repaired)
	rd.red.AddMarker(desc)
	return desc
}

// url renders the step's URL: the URL sent, made a valid URL the way
// browsers make one (package sendurl), and its record text, which shows the
// same URL with secrets and inlined attachments replaced by their redacted
// form or description.
func (rd *renderer) url(t lang.Template) (*url.URL, string, error) {
	var stack [256]byte
	var pstack [4]sendurl.Piece
	text, pieces := stack[:0], pstack[:0]
	for _, seg := range t.Segments {
		if seg.Ref == nil {
			text = append(text, seg.Literal...)
			continue
		}
		v, err := rd.resolve(seg.Ref)
		if err != nil {
			return nil, "", err
		}
		start := len(text)
		switch v.Kind {
		case resolve.File, resolve.Base64:
			enc, err := rd.inlineBase64(v, "url")
			if err != nil {
				return nil, "", err
			}
			text = append(text, enc...)
			rd.scrubEchoes(v)
		default:
			text = append(text, v.Text...)
		}
		if _, standIn := rd.records[seg.Ref]; v.Kind != resolve.Text || standIn {
			pieces = append(pieces, sendurl.Piece{Start: start, End: len(text), Record: rd.recordOf(seg.Ref, v)})
		}
	}
	raw := t.Source
	if !t.IsLiteral() {
		raw = string(text)
	}
	live, record, err := sendurl.Build(raw, pieces)
	if err != nil {
		shown := sendurl.ReplacePieces(raw, pieces)
		var ce *sendurl.ControlError
		if errors.As(err, &ce) {
			return nil, "", &Error{Field: "url", Msg: fmt.Sprintf("the url contains %s after substitution, which no URL may hold: %q", sendurl.ControlName(ce.Char), shown), Err: err}
		}
		return nil, "", &Error{Field: "url", Msg: fmt.Sprintf("%v: %q", err, shown), Err: err}
	}
	u, err := url.Parse(live)
	if err != nil {
		return nil, "", &Error{Field: "url", Msg: "the url does not parse after substitution: " + record, Err: err}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", &Error{Field: "url", Msg: fmt.Sprintf("the url must be http or https after substitution, not %q: %s", u.Scheme, record)}
	}
	if u.Hostname() == "" {
		return nil, "", &Error{Field: "url", Msg: "the url has no host after substitution: " + record}
	}
	return u, record, nil
}

// inline renders a template that must be built in memory (a header value).
// Both renderings are built in stack buffers, so each costs one allocation
// (its string) up to 256 bytes.
func (rd *renderer) inline(t lang.Template, field string) (live, record string, err error) {
	if t.IsLiteral() {
		return t.Source, t.Source, nil
	}
	var lstack, rstack [256]byte
	lb, rb := lstack[:0], rstack[:0]
	for _, seg := range t.Segments {
		if seg.Ref == nil {
			lb = append(lb, seg.Literal...)
			rb = append(rb, seg.Literal...)
			continue
		}
		v, err := rd.resolve(seg.Ref)
		if err != nil {
			return "", "", err
		}
		rb = append(rb, rd.recordOf(seg.Ref, v)...)
		switch v.Kind {
		case resolve.File, resolve.Base64:
			enc, err := rd.inlineBase64(v, field)
			if err != nil {
				return "", "", err
			}
			lb = append(lb, enc...)
			rd.scrubEchoes(v)
		default:
			lb = append(lb, v.Text...)
		}
	}
	return string(lb), string(rb), nil
}

func (rd *renderer) inlineBase64(v resolve.Value, field string) (string, error) {
	a := v.Attachment
	if a.Size > MaxInlineAttachment {
		return "", &Error{Field: field, Msg: fmt.Sprintf("attachment %d (%s, %d bytes) is too large to inline as base64 here (limit %d bytes); send it as a form file", a.Index, a.Filename, a.Size, MaxInlineAttachment)}
	}
	atts, err := rd.scope.Email()
	if err != nil {
		return "", &Error{Field: field, Msg: err.Error(), Err: err}
	}
	rc, err := atts.Open(a.Index)
	if err != nil {
		return "", &Error{Field: field, Msg: fmt.Sprintf("attachment %d cannot be read: %v", a.Index, err), Err: err}
	}
	defer rc.Close()
	raw, err := io.ReadAll(io.LimitReader(rc, MaxInlineAttachment+1))
	if err != nil {
		return "", &Error{Field: field, Msg: fmt.Sprintf("attachment %d cannot be read: %v", a.Index, err), Err: err}
	}
	if int64(len(raw)) != a.Size {
		return "", &Error{Field: field, Msg: fmt.Sprintf("attachment %d: %v", a.Index, ErrBodyChanged), Err: ErrBodyChanged}
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// stream renders a template into a streamed body: text as is, or JSON string
// contents when esc is set. It returns the record text (unescaped).
func (rd *renderer) stream(b *builder, t lang.Template, field string, esc func([]byte, string) []byte) (string, error) {
	if esc == nil {
		esc = func(dst []byte, s string) []byte { return append(dst, s...) }
	}
	if t.IsLiteral() {
		b.buf = esc(b.buf, t.Source)
		return t.Source, nil
	}
	var rb strings.Builder
	for _, seg := range t.Segments {
		if seg.Ref == nil {
			b.buf = esc(b.buf, seg.Literal)
			rb.WriteString(seg.Literal)
			continue
		}
		v, err := rd.resolve(seg.Ref)
		if err != nil {
			return "", err
		}
		rb.WriteString(rd.recordOf(seg.Ref, v))
		switch v.Kind {
		case resolve.File, resolve.Base64:
			// Base64 needs no escaping in JSON or anywhere else.
			b.stream(v.Attachment.Index, v.Attachment.Size, true)
			rd.scrubEchoes(v)
		default:
			b.buf = esc(b.buf, v.Text)
		}
	}
	return rb.String(), nil
}

// jsonValue writes v as JSON into the live body and appends its record to rec.
func (rd *renderer) jsonValue(b *builder, v *compile.Value, rec []byte) ([]byte, error) {
	switch v.Kind {
	case compile.ValueLiteral:
		b.buf = append(b.buf, v.Literal...)
		return append(rec, v.Literal...), nil
	case compile.ValueString:
		b.buf = append(b.buf, '"')
		text, err := rd.stream(b, v.Text, "body", jsonstr.Append)
		if err != nil {
			return nil, err
		}
		b.buf = append(b.buf, '"')
		rec = append(rec, '"')
		rec = jsonstr.Append(rec, text)
		return append(rec, '"'), nil
	case compile.ValueObject:
		b.buf = append(b.buf, '{')
		rec = append(rec, '{')
		for i, m := range v.Members {
			if i > 0 {
				b.buf = append(b.buf, ',')
				rec = append(rec, ',')
			}
			b.buf = append(b.buf, '"')
			b.buf = jsonstr.Append(b.buf, m.Key)
			b.buf = append(b.buf, '"', ':')
			rec = append(rec, '"')
			rec = jsonstr.Append(rec, m.Key)
			rec = append(rec, '"', ':')
			var err error
			if rec, err = rd.jsonValue(b, m.Value, rec); err != nil {
				return nil, err
			}
		}
		b.buf = append(b.buf, '}')
		return append(rec, '}'), nil
	default:
		b.buf = append(b.buf, '[')
		rec = append(rec, '[')
		for i, e := range v.Elems {
			if i > 0 {
				b.buf = append(b.buf, ',')
				rec = append(rec, ',')
			}
			var err error
			if rec, err = rd.jsonValue(b, e, rec); err != nil {
				return nil, err
			}
		}
		b.buf = append(b.buf, ']')
		return append(rec, ']'), nil
	}
}

// scrubEchoes teaches the redactor the bytes of an attachment this step
// sends, raw and in base64, so that a receiver echoing them back does not
// put them into the record. Larger attachments than MaxScrubbedAttachment
// are left out (see there); a read failure here is left to the send.
func (rd *renderer) scrubEchoes(v resolve.Value) {
	a := v.Attachment
	if a.Size > MaxScrubbedAttachment || a.Size < resolve.MinReplaced {
		return
	}
	atts, err := rd.scope.Email()
	if err != nil {
		return
	}
	rc, err := atts.Open(a.Index)
	if err != nil {
		return
	}
	defer rc.Close()
	raw, err := io.ReadAll(io.LimitReader(rc, MaxScrubbedAttachment+1))
	if err != nil || int64(len(raw)) != a.Size {
		return
	}
	desc := rd.describe(v)
	rd.red.Replace(string(raw), desc)
	rd.red.Replace(base64.StdEncoding.EncodeToString(raw), desc)
}

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// safeFilename keeps a filename from the e-mail fit for a part header.
func safeFilename(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, name)
	if name == "" {
		name = "attachment"
	}
	return quoteEscaper.Replace(name)
}

// form lays out a multipart/form-data body. multipart.Writer writes the
// boundaries and part headers into a buffer; attachment bytes become streams
// between them.
func (rd *renderer) form(b *builder, fields []compile.FormField) (json.RawMessage, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	take := func() {
		b.buf = append(b.buf, buf.Bytes()...)
		buf.Reset()
	}
	rec := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			rec = append(rec, ',')
		}
		rec = append(rec, '"')
		rec = jsonstr.Append(rec, f.Name)
		rec = append(rec, '"', ':')
		if f.File != nil {
			v, err := rd.resolve(f.File)
			if err != nil {
				return nil, "", err
			}
			a := v.Attachment
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quoteEscaper.Replace(f.Name), safeFilename(a.Filename)))
			ct := a.ContentType
			if ct == "" || !httpguts.ValidHeaderFieldValue(ct) {
				ct = "application/octet-stream"
			}
			h.Set("Content-Type", ct)
			if _, err := mw.CreatePart(h); err != nil {
				return nil, "", err
			}
			take()
			b.stream(a.Index, a.Size, false)
			rd.scrubEchoes(v)
			rec = append(rec, `{"attachment":`...)
			rec = strconv.AppendInt(rec, int64(a.Index), 10)
			rec = append(rec, `,"filename":"`...)
			rec = jsonstr.Append(rec, a.Filename)
			rec = append(rec, `","content_type":"`...)
			rec = jsonstr.Append(rec, a.ContentType)
			rec = append(rec, `","size":`...)
			rec = strconv.AppendInt(rec, a.Size, 10)
			if len(a.Defects) > 0 {
				rec = append(rec, `,"defects":[`...)
				for i, d := range a.Defects {
					if i > 0 {
						rec = append(rec, ',')
					}
					rec = append(rec, `{"code":"`...)
					rec = jsonstr.Append(rec, d.Code)
					rec = append(rec, `","message":"`...)
					rec = jsonstr.Append(rec, d.Message)
					rec = append(rec, `"}`...)
				}
				rec = append(rec, ']')
			}
			rec = append(rec, '}')
			continue
		}
		if _, err := mw.CreateFormField(f.Name); err != nil {
			return nil, "", err
		}
		take()
		text, err := rd.stream(b, f.Value, "form field "+f.Name, nil)
		if err != nil {
			return nil, "", err
		}
		rec = append(rec, '"')
		rec = jsonstr.Append(rec, text)
		rec = append(rec, '"')
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	take()
	return append(rec, '}'), mw.FormDataContentType(), nil
}

// IsFailBeforeSend reports whether err means the step fails without sending
// (as opposed to being skipped).
func IsFailBeforeSend(err error) bool {
	var skip *resolve.SkipError
	return err != nil && !errors.As(err, &skip)
}

// Secrets are the names of the secrets whose values the request carries,
// sorted: every secret a placeholder substituted, anywhere in the request,
// and every secret value the redactor found in it otherwise (echoed back
// by an earlier step's response and forwarded), as the record shows them
// ("[redacted secrets.KEY]"). This is what a destinations policy checks
// before the request is sent.
func (req *Request) Secrets() []string {
	r := req.Record
	var names []string
	scan := func(s string) {
		for {
			i := strings.Index(s, secretMarker)
			if i < 0 {
				return
			}
			s = s[i+len(secretMarker):]
			j := strings.IndexByte(s, ']')
			if j < 0 {
				return
			}
			if name := s[:j]; lang.IsName(name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
			s = s[j+1:]
		}
	}
	scan(r.URL)
	for k, v := range r.Headers {
		scan(k)
		scan(v)
	}
	scan(string(r.Body))
	scan(string(r.Form))
	slices.Sort(names)
	return names
}

// secretMarker starts the record's text for a secret's value
// (resolve.Placeholder).
var secretMarker = strings.TrimSuffix(resolve.Placeholder(""), "]")
