package resolve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/kobana/workflow/internal/jsonstr"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

// Response is what an earlier step received.
type Response struct {
	Status int
	Header http.Header
	// Body is the captured body. When Truncated is set the body exceeded the
	// capture limit and nothing inside it can be referenced.
	Body      []byte
	Truncated bool
	// Limit is the capture limit in bytes, for messages.
	Limit int64
	// Unavailable, when set, says why the body cannot be referenced: the
	// response was restored from a run record that does not hold it whole
	// (see Restore). Withheld are the header names, in canonical form,
	// whose recorded values are not whole either.
	Unavailable string
	Withheld    map[string]bool

	typeChecked, isJSON bool // IsJSON, worked out once

	parsed   bool
	parser   fastjson.Parser
	root     *fastjson.Value
	parseErr error
}

// IsJSON reports whether the response declares a JSON content type
// (application/json or any */*+json).
func (r *Response) IsJSON() bool {
	if !r.typeChecked {
		r.typeChecked, r.isJSON = true, isJSONType(r.Header.Get("Content-Type"))
	}
	return r.isJSON
}

func isJSONType(ct string) bool {
	if !strings.Contains(strings.ToLower(ct), "json") {
		return false // the common case, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// json parses the body once, on first use. A lone UTF-16 surrogate escape
// is read as U+FFFD, as encoding/json reads it and as the run record shows
// it (Redactor.JSON writes it as \ufffd).
func (r *Response) json() (*fastjson.Value, error) {
	if !r.parsed {
		r.parsed = true
		body := r.Body
		if bytes.Contains(body, []byte(`\u`)) {
			body = []byte(fixSurrogates(string(body)))
		}
		r.root, r.parseErr = r.parser.ParseBytes(body)
	}
	return r.root, r.parseErr
}

// Result is the recorded outcome of a step that ran before the current one.
type Result struct {
	// State is runrecord.Succeeded, Failed or Skipped.
	State runrecord.State
	// Response is nil when nothing was received (failed before sending, or a
	// transport error).
	Response *Response
}

// ValueKind says how a resolved value is rendered.
type ValueKind uint8

// Kinds of resolved values.
const (
	// Text is plain text, the same live and in the record.
	Text ValueKind = iota + 1
	// Secret is text sent live and redacted in the record.
	Secret
	// File is an attachment's bytes: a file part as a whole form value,
	// its base64 anywhere else.
	File
	// Base64 is an attachment's bytes as base64, wherever it appears.
	Base64
)

// Value is a resolved reference.
type Value struct {
	Kind ValueKind
	// Text is the value of Text and Secret kinds.
	Text string
	// Attachment describes the attachment of File and Base64 kinds.
	Attachment eml.Attachment
}

// Scope holds what a run's references resolve against. A Scope belongs to
// one run and is used by one goroutine at a time.
type Scope struct {
	Secrets     Secrets
	Facts       Facts
	Attachments AttachmentsFunc
	// Redactor, when set, learns every secret value that is resolved.
	Redactor *Redactor

	current int
	now     time.Time
	results []*Result

	attsOpened bool
	atts       Attachments
	attsErr    error
}

// Begin marks the start of step i at time now: kobana.now is now, in UTC
// with milliseconds, and only steps before i may be referenced.
func (s *Scope) Begin(i int, now time.Time) {
	s.current = i
	s.now = now
}

// Record stores the outcome of step i for the steps after it.
func (s *Scope) Record(i int, r *Result) {
	for len(s.results) <= i {
		s.results = append(s.results, nil)
	}
	s.results[i] = r
}

// Result returns the recorded outcome of step i, or nil.
func (s *Scope) Result(i int) *Result {
	if i < 0 || i >= len(s.results) {
		return nil
	}
	return s.results[i]
}

// Check returns the first reason the current step cannot be sent at all
// because of the steps it depends on: a *SkipError when one of them failed or
// was skipped, a *RefError when one has not run.
func (s *Scope) Check(dependsOn []int) error {
	for _, d := range dependsOn {
		if err := s.dependency(d, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scope) dependency(i int, r *lang.Ref) error {
	if i >= s.current {
		name := fmt.Sprintf("steps.%d", i)
		if r != nil {
			name = r.String()
		}
		return &RefError{Ref: name, Reason: runrecord.ReasonForward,
			Detail: fmt.Sprintf("forward reference: step %d cannot use the response of step %d, only of earlier steps", s.current, i)}
	}
	res := s.Result(i)
	if res == nil {
		return &RefError{Ref: fmt.Sprintf("steps.%d", i), Reason: runrecord.ReasonForward, Detail: fmt.Sprintf("step %d has not run", i)}
	}
	if res.State != runrecord.Succeeded {
		return &SkipError{Step: i, State: res.State}
	}
	return nil
}

// Resolve returns the value of r for the current step.
func (s *Scope) Resolve(r *lang.Ref) (Value, error) {
	switch r.Namespace {
	case lang.Secrets:
		return s.secret(r)
	case lang.Kobana:
		return s.fact(r)
	case lang.Steps:
		return s.step(r)
	case lang.Email:
		return s.attachment(r)
	}
	return Value{}, fmt.Errorf("resolve: reference %s has no namespace", r)
}

func (s *Scope) secret(r *lang.Ref) (Value, error) {
	if s.Secrets == nil {
		return Value{}, refErr(r, runrecord.ReasonMissingSecret, nil, "no secret %q exists in this workspace (no secrets are configured)", r.Key)
	}
	v, ok, err := s.Secrets.Secret(r.Key)
	if err != nil {
		return Value{}, refErr(r, runrecord.ReasonSecretSourceFailed, err, "the secret store failed: %v", err)
	}
	if !ok {
		return Value{}, refErr(r, runrecord.ReasonMissingSecret, nil, "no secret %q exists in this workspace", r.Key)
	}
	if s.Redactor != nil {
		s.Redactor.Add(r.Key, v)
	}
	return Value{Kind: Secret, Text: v}, nil
}

// NowFormat is the layout of kobana.now: RFC 3339 in UTC with milliseconds.
const NowFormat = "2006-01-02T15:04:05.000Z07:00"

func (s *Scope) fact(r *lang.Ref) (Value, error) {
	if r.Key == "now" {
		now := s.now
		if now.IsZero() {
			now = time.Now()
		}
		return Value{Kind: Text, Text: now.UTC().Format(NowFormat)}, nil
	}
	if s.Facts != nil {
		if v, ok := s.Facts.Fact(r.Key); ok {
			return Value{Kind: Text, Text: v}, nil
		}
	}
	return Value{}, refErr(r, runrecord.ReasonUndefinedFact, nil, "kobana.%s has no value for this run", r.Key)
}

func (s *Scope) step(r *lang.Ref) (Value, error) {
	if err := s.dependency(r.Index, r); err != nil {
		return Value{}, err
	}
	resp := s.Result(r.Index).Response
	if resp == nil {
		return Value{}, refErr(r, runrecord.ReasonMissingPath, nil, "step %d has no response", r.Index)
	}
	switch r.Step {
	case lang.StepStatus:
		return Value{Kind: Text, Text: strconv.Itoa(resp.Status)}, nil
	case lang.StepHeaders:
		if resp.Withheld[http.CanonicalHeaderKey(r.Header)] {
			return Value{}, refErr(r, runrecord.ReasonResponseUnavailable, nil, "the record of step %d does not hold its header %q whole (it was redacted), so this run cannot use it", r.Index, r.Header)
		}
		var vals []string
		for k, vs := range resp.Header {
			if strings.EqualFold(k, r.Header) {
				vals = append(vals, vs...)
			}
		}
		if len(vals) == 0 {
			return Value{}, refErr(r, runrecord.ReasonMissingHeader, nil, "the response of step %d has no header %q", r.Index, r.Header)
		}
		return Value{Kind: Text, Text: strings.Join(vals, ", ")}, nil
	}
	if resp.Unavailable != "" {
		return Value{}, refErr(r, runrecord.ReasonResponseUnavailable, nil, "the record of step %d does not hold its response body whole (%s), so this run cannot use it", r.Index, resp.Unavailable)
	}
	if resp.Truncated {
		return Value{}, refErr(r, runrecord.ReasonNotCaptured, nil, "the response body of step %d is larger than the capture limit (%s) and cannot be referenced", r.Index, byteSize(resp.Limit))
	}
	if len(r.BodyPath) == 0 {
		return Value{Kind: Text, Text: string(resp.Body)}, nil
	}
	if !resp.IsJSON() {
		ct := resp.Header.Get("Content-Type")
		if ct == "" {
			ct = "none"
		}
		return Value{}, refErr(r, runrecord.ReasonNotJSON, nil, "the response of step %d is not JSON (content type %s), so it has no paths", r.Index, ct)
	}
	root, err := resp.json()
	if err != nil {
		return Value{}, refErr(r, runrecord.ReasonNotJSON, err, "the response of step %d declares JSON but does not parse: %v", r.Index, err)
	}
	v := root
	for i, seg := range r.BodyPath {
		var next *fastjson.Value
		switch v.Type() {
		case fastjson.TypeObject:
			o, _ := v.Object()
			next = lastMember(o, seg)
		case fastjson.TypeArray:
			if n, ok := arrayIndex(seg); ok {
				if arr, _ := v.Array(); n < len(arr) {
					next = arr[n]
				}
			}
		}
		if next == nil {
			at := "body"
			if i > 0 {
				at = "body." + strings.Join(r.BodyPath[:i], ".")
			}
			return Value{}, refErr(r, runrecord.ReasonMissingPath, nil, "the response of step %d has no %q: %s is %s", r.Index, seg, at, describe(v))
		}
		v = next
	}
	switch v.Type() {
	case fastjson.TypeNull:
		return Value{}, refErr(r, runrecord.ReasonNullValue, nil, "the value is null in the response of step %d", r.Index)
	case fastjson.TypeString:
		return Value{Kind: Text, Text: string(v.GetStringBytes())}, nil
	default:
		return Value{Kind: Text, Text: string(marshalJS(nil, v))}, nil
	}
}

// lastMember returns the value of the last member of o named key: of
// duplicate keys the last one wins, as in JavaScript's JSON.parse.
func lastMember(o *fastjson.Object, key string) *fastjson.Value {
	var found *fastjson.Value
	o.Visit(func(k []byte, v *fastjson.Value) {
		if string(k) == key {
			found = v
		}
	})
	return found
}

// marshalJS encodes v as JavaScript's JSON.stringify(JSON.parse(text))
// would: an object keeps each key once, at its first position, with its
// last value; strings are escaped as encoding/json escapes them, less the
// HTML escapes (JSON.parse reads them back the same). Numbers keep the
// digits the response wrote.
func marshalJS(dst []byte, v *fastjson.Value) []byte {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		var keys []string
		last := map[string]*fastjson.Value{}
		o.Visit(func(k []byte, val *fastjson.Value) {
			if _, seen := last[string(k)]; !seen {
				keys = append(keys, string(k))
			}
			last[string(k)] = val
		})
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = jsonstr.Append(dst, k)
			dst = append(dst, '"', ':')
			dst = marshalJS(dst, last[k])
		}
		return append(dst, '}')
	case fastjson.TypeArray:
		arr, _ := v.Array()
		dst = append(dst, '[')
		for i, e := range arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = marshalJS(dst, e)
		}
		return append(dst, ']')
	case fastjson.TypeString:
		// Not v.MarshalTo: fastjson quotes as Go source does (\x01, \a),
		// which is not JSON.
		dst = append(dst, '"')
		dst = jsonstr.Append(dst, string(v.GetStringBytes()))
		return append(dst, '"')
	}
	return v.MarshalTo(dst) // numbers as written, true, false
}

func arrayIndex(seg string) (int, bool) {
	if seg == "" || len(seg) > 9 || (len(seg) > 1 && seg[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return 0, false
		}
		n = n*10 + int(seg[i]-'0')
	}
	return n, true
}

func describe(v *fastjson.Value) string {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		var keys []string
		o.Visit(func(k []byte, _ *fastjson.Value) {
			if len(keys) < 8 {
				keys = append(keys, strconv.Quote(string(k)))
			}
		})
		if len(keys) == 0 {
			return "an empty object"
		}
		more := ""
		if o.Len() > len(keys) {
			more = ", …"
		}
		return "an object with " + strings.Join(keys, ", ") + more
	case fastjson.TypeArray:
		arr, _ := v.Array()
		return fmt.Sprintf("an array of %d", len(arr))
	case fastjson.TypeString:
		return "a string"
	case fastjson.TypeNumber:
		return "a number"
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return "a boolean"
	case fastjson.TypeNull:
		return "null"
	}
	return "a value"
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Email returns the e-mail's attachments, opening them on first use (an
// executor opens them when its run starts, so the whole run reads one
// snapshot).
func (s *Scope) Email() (Attachments, error) {
	if !s.attsOpened {
		s.attsOpened = true
		if s.Attachments == nil {
			s.attsErr = fmt.Errorf("%w: the run has no e-mail", eml.ErrUnreadable)
		} else {
			s.atts, s.attsErr = s.Attachments()
			if s.attsErr != nil {
				s.atts = nil // a typed nil beside an error is no source
			} else if s.atts == nil {
				s.attsErr = fmt.Errorf("%w: the run has no e-mail", eml.ErrUnreadable)
			}
		}
	}
	return s.atts, s.attsErr
}

func (s *Scope) attachment(r *lang.Ref) (Value, error) {
	atts, err := s.Email()
	if err != nil {
		return Value{}, refErr(r, runrecord.ReasonEmailUnreadable, err, "the e-mail can no longer be read (%v), so attachment %d is not available", err, r.Index)
	}
	a, err := atts.Attachment(r.Index)
	if err != nil {
		var ie *eml.IndexError
		if errors.As(err, &ie) {
			return Value{}, refErr(r, runrecord.ReasonMissingAttachment, err, "%v", ie)
		}
		return Value{}, refErr(r, runrecord.ReasonEmailUnreadable, err, "attachment %d cannot be read: %v", r.Index, err)
	}
	switch r.Attachment {
	case lang.AttachmentFilename:
		return Value{Kind: Text, Text: a.Filename}, nil
	case lang.AttachmentContentType:
		return Value{Kind: Text, Text: a.ContentType}, nil
	case lang.AttachmentSize:
		return Value{Kind: Text, Text: strconv.FormatInt(a.Size, 10)}, nil
	}
	// The bytes will be sent: make sure they can still be read first.
	if err := atts.Check(r.Index); err != nil {
		return Value{}, refErr(r, runrecord.ReasonEmailUnreadable, err, "the e-mail can no longer be read as it was when the run started (%v), so attachment %d is not sent", err, r.Index)
	}
	if r.Attachment == lang.AttachmentBase64 {
		return Value{Kind: Base64, Attachment: a}, nil
	}
	return Value{Kind: File, Attachment: a}, nil
}

// Close releases the e-mail the run opened, if its source is an io.Closer
// (eml.Open's file). A Scope is closed once, when its run ends.
func (s *Scope) Close() error {
	if c, ok := s.atts.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
