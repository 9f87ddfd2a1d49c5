package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve"
)

// Defaults of Options.
const (
	DefaultStepTimeout     = 30 * time.Second
	DefaultRunTimeout      = 5 * time.Minute
	DefaultCaptureLimit    = 10 << 20
	DefaultRecordBodyLimit = 64 << 10
	// drainLimit bounds how much of an over-limit body is read and thrown
	// away to keep the connection reusable; beyond it the connection is closed.
	drainLimit = 64 << 20
)

// Options configure an Executor. The zero value is ready: deny-list guard,
// default timeouts and limits.
type Options struct {
	// Guard decides which addresses may be dialled; nil is the deny-list only.
	Guard *guard.Guard
	// Transport, when set, replaces the guard's transport. It must dial
	// through Guard.Control (tests use this to count connections).
	Transport http.RoundTripper
	// StepTimeout bounds each step from sending to the last response byte.
	StepTimeout time.Duration
	// RunTimeout bounds the whole run; steps not started by then are skipped.
	RunTimeout time.Duration
	// CaptureLimit is the largest response body kept for references.
	CaptureLimit int64
	// RecordBodyLimit is the largest response body copied into the record.
	RecordBodyLimit int64
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// OnStep, when set, is called after each step with its record (already
	// redacted), e.g. to print progress.
	OnStep func(StepRecord)
}

// Env is what one run's references resolve against.
type Env struct {
	Secrets resolve.Secrets
	Facts   resolve.Facts
	// Attachments opens the triggering e-mail; nil when the run has none.
	Attachments resolve.AttachmentsFunc
}

// Executor runs plans. It is safe for concurrent use.
type Executor struct {
	opts   Options
	guard  *guard.Guard
	client *http.Client
}

// New returns an Executor with opts, filling in defaults.
func New(opts Options) *Executor {
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = DefaultStepTimeout
	}
	if opts.RunTimeout <= 0 {
		opts.RunTimeout = DefaultRunTimeout
	}
	if opts.CaptureLimit <= 0 {
		opts.CaptureLimit = DefaultCaptureLimit
	}
	if opts.RecordBodyLimit <= 0 {
		opts.RecordBodyLimit = DefaultRecordBodyLimit
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := opts.Guard
	if g == nil {
		g = &guard.Guard{}
	}
	client := g.Client()
	if opts.Transport != nil {
		client.Transport = opts.Transport
	}
	return &Executor{opts: opts, guard: g, client: client}
}

// Run runs plan with env and returns its record. It never returns a
// partial record: when ctx ends, the steps not yet started are recorded as
// skipped with ReasonCancelled.
func (e *Executor) Run(ctx context.Context, plan *compile.Plan, env Env) *RunRecord {
	// The run's deadline bounds each step's context (see step), rather than
	// wrapping the run in a context of its own.
	run := runState{ctx: ctx, deadline: time.Now().Add(e.opts.RunTimeout)}
	red := resolve.NewRedactor(env.Secrets)
	scope := &resolve.Scope{Secrets: env.Secrets, Facts: env.Facts, Attachments: env.Attachments, Redactor: red}
	defer scope.Close()
	if usesAttachments(plan) {
		// One snapshot of the e-mail for the whole run, taken now: a message
		// purged while the run goes on is still read as it was.
		scope.Email()
	}
	rec := &RunRecord{Status: RunSucceeded, StartedAt: e.opts.Now().UTC(), Steps: []StepRecord{}}
	for i, step := range plan.Steps {
		var sr StepRecord
		var res *resolve.Result
		if run.over() {
			sr = StepRecord{Index: i, Label: step.Label, State: resolve.StateSkipped, StartedAt: e.opts.Now().UTC(),
				Reason: ReasonCancelled, Error: "not run: " + run.cause()}
			res = &resolve.Result{State: resolve.StateSkipped}
		} else {
			sr, res = e.step(run, step, scope)
		}
		// The edge: everything the step record holds crosses the redactor
		// here, once, before anyone sees it.
		sr.redact(red)
		scope.Record(i, res)
		if sr.State != resolve.StateSucceeded {
			rec.Status = RunFailed
		}
		rec.Steps = append(rec.Steps, sr)
		if e.opts.OnStep != nil {
			e.opts.OnStep(sr)
		}
	}
	rec.FinishedAt = e.opts.Now().UTC()
	return rec
}

// runState is a run's context and deadline.
type runState struct {
	ctx      context.Context
	deadline time.Time
}

// over reports whether the run was cancelled or reached its deadline.
func (r runState) over() bool {
	return r.ctx.Err() != nil || !time.Now().Before(r.deadline)
}

func (r runState) cause() string {
	if r.ctx.Err() != nil && !errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		return "the run was cancelled"
	}
	return "the run reached its deadline"
}

// step runs one step and returns its record and its result for later steps.
// The record it returns is not yet redacted (see StepRecord.redact), apart
// from the request, which emit.Render redacts.
func (e *Executor) step(run runState, step *compile.Step, scope *resolve.Scope) (StepRecord, *resolve.Result) {
	start := e.opts.Now()
	scope.Begin(step.Index, start)
	sr := StepRecord{Index: step.Index, Label: step.Label, StartedAt: start.UTC()}
	finish := func(state resolve.State, reason, msg string) {
		sr.State, sr.Reason, sr.Error = state, reason, msg
		sr.DurationMS = e.opts.Now().Sub(start).Milliseconds()
	}

	req, err := emit.Render(step, scope)
	if err != nil {
		var skip *resolve.SkipError
		switch {
		case errors.As(err, &skip):
			finish(resolve.StateSkipped, ReasonSkipped, err.Error())
			return sr, &resolve.Result{State: resolve.StateSkipped}
		case isRefError(err):
			finish(resolve.StateFailed, ReasonReference, "not sent: "+err.Error())
		default:
			finish(resolve.StateFailed, ReasonInvalidRequest, "not sent: "+err.Error())
		}
		return sr, &resolve.Result{State: resolve.StateFailed}
	}
	sr.Request = req.Record
	if err := e.guard.CheckURL(req.URL); err != nil {
		finish(resolve.StateFailed, ReasonDenied, "not sent: "+err.Error())
		return sr, &resolve.Result{State: resolve.StateFailed}
	}

	deadline := time.Now().Add(e.opts.StepTimeout)
	if run.deadline.Before(deadline) {
		deadline = run.deadline
	}
	sctx, cancel := context.WithDeadline(run.ctx, deadline)
	defer cancel()
	hreq, err := req.HTTPRequest(sctx)
	if err != nil {
		finish(resolve.StateFailed, ReasonInvalidRequest, "not sent: "+err.Error())
		return sr, &resolve.Result{State: resolve.StateFailed}
	}
	resp, err := e.client.Do(hreq)
	var cut *emit.StreamError
	if errors.As(err, &cut) {
		// The e-mail could not be read mid-body: the body stopped short of
		// its Content-Length and the transport closed the connection.
		sr.PartialUpload = true
		finish(resolve.StateFailed, ReasonUploadAborted, "aborted mid-body: "+cut.Error()+
			"; the connection was cut before the announced Content-Length, so the receiver may have received part of the request, never a complete one")
		return sr, &resolve.Result{State: resolve.StateFailed}
	}
	if err != nil {
		reason, msg := describeTransportError(run, sctx, err, e.opts.StepTimeout)
		finish(resolve.StateFailed, reason, msg)
		return sr, &resolve.Result{State: resolve.StateFailed}
	}
	captured, received, readErr := e.capture(resp)
	sr.Response = e.responseRecord(captured, received)
	if readErr != nil {
		reason, msg := describeTransportError(run, sctx, readErr, e.opts.StepTimeout)
		finish(resolve.StateFailed, reason, "reading the response: "+msg)
		return sr, &resolve.Result{State: resolve.StateFailed, Response: captured}
	}
	if !step.Succeeds(resp.StatusCode) {
		finish(resolve.StateFailed, ReasonStatus, fmt.Sprintf("the response status is %d; the step expects %s", resp.StatusCode, step.Expects()))
		return sr, &resolve.Result{State: resolve.StateFailed, Response: captured}
	}
	finish(resolve.StateSucceeded, "", "")
	return sr, &resolve.Result{State: resolve.StateSucceeded, Response: captured}
}

// usesAttachments reports whether any step references the e-mail.
func usesAttachments(plan *compile.Plan) bool {
	for _, st := range plan.Steps {
		for _, r := range st.Refs() {
			if r.Namespace == lang.Email {
				return true
			}
		}
	}
	return false
}

func isRefError(err error) bool {
	var re *resolve.RefError
	return errors.As(err, &re)
}

// capture reads the response body up to the capture limit; a larger body is
// drained (up to drainLimit) and marked truncated. received is the number
// of body bytes read, kept or not.
func (e *Executor) capture(resp *http.Response) (_ *resolve.Response, received int64, _ error) {
	defer resp.Body.Close()
	out := &resolve.Response{Status: resp.StatusCode, Header: resp.Header, Limit: e.opts.CaptureLimit}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, e.opts.CaptureLimit+1))
	if err != nil {
		out.Body = buf.Bytes()
		return out, n, err
	}
	if n > e.opts.CaptureLimit {
		out.Truncated = true
		out.Body = nil
		drained, err := io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
		return out, n + drained, err
	}
	out.Body = buf.Bytes()
	return out, n, nil
}

// responseRecord builds the record of a response, before redaction.
func (e *Executor) responseRecord(r *resolve.Response, received int64) *ResponseRecord {
	return &ResponseRecord{Status: r.Status, Size: received, Truncated: r.Truncated, body: r, limit: e.opts.RecordBodyLimit}
}

// redact is the edge every byte of a step record crosses before it is
// kept, printed or passed to OnStep: the label, the error and the response
// (headers, and the body — JSON as JSON, so a number that spells a secret
// is redacted, anything else as text) are redacted with red. The request
// was redacted by emit.Render. A response body is redacted whole before it
// is clipped to RecordBodyLimit, so a secret cut by the clip cannot leave a
// piece behind.
func (sr *StepRecord) redact(red *resolve.Redactor) {
	sr.Label = red.String(sr.Label)
	sr.Error = red.String(sr.Error)
	rr := sr.Response
	if rr == nil {
		return
	}
	r := rr.body
	rr.body = nil
	if r == nil {
		return
	}
	rr.Headers = make(map[string]string, len(r.Header))
	var renamed []string // names redaction changes, which may then collide
	for k, vs := range r.Header {
		if name := red.String(k); name != k {
			renamed = append(renamed, k)
			continue
		}
		rr.Headers[k] = red.String(strings.Join(vs, ", "))
	}
	slices.Sort(renamed)
	for _, k := range renamed {
		name, value := red.String(k), red.String(strings.Join(r.Header[k], ", "))
		if prev, dup := rr.Headers[name]; dup {
			value = prev + ", " + value // two names that redact alike
		}
		rr.Headers[name] = value
	}
	if r.Truncated || len(r.Body) == 0 {
		return
	}
	var text string
	if r.IsJSON() {
		if v, ok := red.JSON(r.Body); ok {
			if int64(len(v)) <= rr.limit {
				rr.Body = v
				return
			}
			text = string(v)
		}
	}
	if text == "" {
		text = red.String(string(r.Body))
	}
	if int64(len(text)) > rr.limit {
		cut := int(rr.limit)
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
		rr.BodyClipped = true
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	b, _ := json.Marshal(text)
	rr.Body = b
}

// describeTransportError explains a failed exchange without the URL (which
// may be a secret) in words a person understands.
func describeTransportError(run runState, stepCtx context.Context, err error, timeout time.Duration) (string, string) {
	var denied *guard.DeniedError
	if errors.As(err, &denied) {
		return ReasonDenied, "not sent: " + denied.Error()
	}
	if run.over() {
		return ReasonCancelled, "stopped: " + run.cause()
	}
	if stepCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
		return ReasonTimeout, fmt.Sprintf("no complete response within %s", timeout)
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonTransport, "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return ReasonTransport, "connection reset by the server"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return ReasonTransport, "the server closed the connection before the response was complete"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return ReasonTransport, fmt.Sprintf("host %q not found", dnsErr.Name)
		}
		return ReasonTransport, "name resolution failed: " + dnsErr.Err
	}
	return ReasonTransport, innerError(err)
}

// innerError strips the *url.Error wrapper, whose message holds the URL.
func innerError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return innerError(ue.Err)
	}
	return err.Error()
}

var defaultExecutor = sync.OnceValue(func() *Executor { return New(Options{}) })

// Run runs plan with env on a shared Executor with default Options: the
// deny-list guard, DefaultStepTimeout, DefaultRunTimeout and
// DefaultCaptureLimit.
func Run(ctx context.Context, plan *compile.Plan, env Env) *RunRecord {
	return defaultExecutor().Run(ctx, plan, env)
}
