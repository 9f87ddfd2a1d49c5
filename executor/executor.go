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
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
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
	// Network is how requests reach their receivers: the zero value dials
	// each host as named, through the guard's dialer. A Network's own Dial
	// (tests send every request to one local receiver with it) is checked
	// too: the guard judges the address each connection reached before a
	// byte is written to it (guard.Guard.TransportVia), so no Network can
	// take a request where the guard would not let it go.
	Network guard.Network
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
}

// Env is one run's world: what its references resolve against, who is told
// of its steps, and the earlier run it resumes.
type Env struct {
	Secrets resolve.Secrets
	Facts   resolve.Facts
	// Attachments opens the triggering e-mail; nil when the run has none.
	Attachments resolve.AttachmentsFunc
	// Journal is told of each step as the run goes, and gives each step
	// its identity (see runrecord.Journal); nil tells no one and sends no
	// identity.
	Journal runrecord.Journal
	// Resume, when set, is an earlier run of the same plan that did not
	// end, which this run takes up.
	Resume *Resume
	// Policy says where the run's requests may go: each secret's
	// destinations and the egress list. A step it refuses, on its URL
	// after substitution and the secrets its request carries
	// (emit.Request.Secrets), fails before sending with
	// runrecord.ReasonDestination. nil allows every host the guard does.
	Policy *egress.Policy
}

// Resume is the record of an earlier run that a run takes up: the steps
// before its runrecord.ResumePoint are not sent again — their records are
// kept, naming the run (runrecord.Step.FromRun), and their recorded
// responses answer the references to them as far as the record holds them
// whole (resolve.Restore) — and the run goes on from there, sending again
// the step whose outcome was unknown with its identity unchanged (the
// Journal gives it).
type Resume struct {
	// RunID is the earlier run's id.
	RunID string
	// Steps are its step records.
	Steps []runrecord.Step
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
	return &Executor{opts: opts, guard: g, client: g.SendOnceVia(opts.Network)}
}

// Run runs plan, as compile.Compile returned it, with env and returns its
// record. It never returns a partial record: when ctx ends, the steps not yet
// started are recorded as skipped with ReasonCancelled; a step whose request
// may have left when ctx is cancelled (a stop, not a deadline) is recorded
// Unknown. A nil plan, or one without steps (the document asked for no
// action), is a succeeded run with no steps.
func (e *Executor) Run(ctx context.Context, plan *compile.Plan, env Env) *runrecord.Run {
	if plan == nil || len(plan.Steps) == 0 {
		now := e.opts.Now().UTC()
		return &runrecord.Run{Status: runrecord.RunSucceeded, StartedAt: now, FinishedAt: now, Steps: []runrecord.Step{}}
	}
	// The run's deadline bounds each step's context (see step), rather than
	// wrapping the run in a context of its own.
	run := runState{ctx: ctx, deadline: time.Now().Add(e.opts.RunTimeout), journal: env.Journal, policy: env.Policy}
	if run.journal == nil {
		run.journal = noJournal
	}
	red := resolve.NewRedactor(env.Secrets)
	scope := &resolve.Scope{Secrets: env.Secrets, Facts: env.Facts, Attachments: env.Attachments, Redactor: red}
	defer scope.Close()
	if usesAttachments(plan) {
		// One snapshot of the e-mail for the whole run, taken now: a message
		// purged while the run goes on is still read as it was.
		scope.Email()
	}
	kept := env.Resume.kept(len(plan.Steps))
	rec := &runrecord.Run{Status: runrecord.RunSucceeded, StartedAt: e.opts.Now().UTC(), Steps: []runrecord.Step{}}
	stopped := ""    // why the journal stopped the run
	unanswered := "" // why the run sends nothing more: a step's outcome is unknown
	for i, step := range plan.Steps {
		var sr runrecord.Step
		var res *resolve.Result
		var resp *resolve.Response // the captured response, until redacted
		switch {
		case i < len(kept):
			sr, res = e.keep(kept[i], env.Resume.RunID)
		case stopped != "":
			sr = runrecord.Step{Index: i, Label: step.Label, State: runrecord.Skipped, StartedAt: e.opts.Now().UTC(),
				Reason: runrecord.ReasonNotRecorded, Error: "not run: " + stopped}
			res = &resolve.Result{State: runrecord.Skipped}
		case run.over():
			sr = runrecord.Step{Index: i, Label: step.Label, State: runrecord.Skipped, StartedAt: e.opts.Now().UTC(),
				Reason: runrecord.ReasonCancelled, Error: "not run: " + run.cause()}
			res = &resolve.Result{State: runrecord.Skipped}
		case unanswered != "":
			// A resume starts again at the unknown step and sends every
			// step after it, so none of them may be sent now.
			sr = runrecord.Step{Index: i, Label: step.Label, State: runrecord.Skipped, StartedAt: e.opts.Now().UTC(),
				Reason: runrecord.ReasonCancelled, Error: "not run: " + unanswered}
			res = &resolve.Result{State: runrecord.Skipped}
		default:
			sr, res, resp = e.step(run, step, scope, red)
			if sr.State == runrecord.Unknown {
				unanswered = fmt.Sprintf("the outcome of step %d is unknown, and the run sends nothing after it (resuming it sends that step again and goes on)", i)
			}
		}
		// The edge: everything the step record holds crosses the redactor
		// here, once, before anyone sees it.
		e.redact(&sr, resp, red)
		scope.Record(i, res)
		if sr.State != runrecord.Succeeded {
			rec.Status = runrecord.RunFailed
		}
		rec.Steps = append(rec.Steps, sr)
		if err := run.journal.Done(run.doneContext(), sr); err != nil && stopped == "" {
			stopped = red.String(fmt.Sprintf("the outcome of step %d could not be recorded (%v)", i, err))
		}
	}
	rec.FinishedAt = e.opts.Now().UTC()
	return rec
}

// kept returns the step records of an earlier run that resuming keeps:
// those before its resume point, at most n.
func (r *Resume) kept(n int) []runrecord.Step {
	if r == nil {
		return nil
	}
	k := r.Steps[:runrecord.ResumePoint(r.Steps)]
	return k[:min(len(k), n)]
}

// keep is the record and result of a step a resumed run does not send
// again: its earlier record, naming the run it is from, and, for a step
// that succeeded, its recorded response.
func (e *Executor) keep(prev runrecord.Step, from string) (runrecord.Step, *resolve.Result) {
	sr := prev
	if sr.FromRun == "" {
		sr.FromRun = from
	}
	res := &resolve.Result{State: prev.State}
	if prev.State == runrecord.Succeeded && prev.Response != nil {
		res.Response = resolve.Restore(prev.Response, e.opts.CaptureLimit)
	}
	return sr, res
}

// noJournal is the journal of a run given none: it records nothing.
var noJournal runrecord.Journal = runrecord.DoneFunc(func(runrecord.Step) {})

// runState is a run's context, deadline and journal.
type runState struct {
	ctx      context.Context
	deadline time.Time
	journal  runrecord.Journal
	policy   *egress.Policy
}

// over reports whether the run was cancelled or reached its deadline.
func (r runState) over() bool {
	return r.ctx.Err() != nil || !time.Now().Before(r.deadline)
}

// stopped reports whether the run was stopped: its context cancelled, not
// past a deadline.
func (r runState) stopped() bool {
	return errors.Is(r.ctx.Err(), context.Canceled)
}

func (r runState) cause() string {
	if r.ctx.Err() != nil && !errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		return "the run was cancelled"
	}
	return "the run reached its deadline"
}

// doneContext is the context the journal records an outcome in: the run's,
// without its cancellation — what happened is recorded even when the run
// is being stopped.
func (r runState) doneContext() context.Context { return context.WithoutCancel(r.ctx) }

// step runs one step and returns its record, its result for later steps
// and the response it captured. The record it returns is not yet redacted
// (see Executor.redact), apart from the request, which emit redacts.
func (e *Executor) step(run runState, step *compile.Step, scope *resolve.Scope, red *resolve.Redactor) (runrecord.Step, *resolve.Result, *resolve.Response) {
	start := e.opts.Now()
	scope.Begin(step.Index, start)
	sr := runrecord.Step{Index: step.Index, Label: step.Label, StartedAt: start.UTC(), ID: run.journal.Identity(step.Index)}
	finish := func(state runrecord.State, reason runrecord.Reason, msg string) {
		sr.State, sr.Reason, sr.Error = state, reason, msg
		sr.DurationMS = e.opts.Now().Sub(start).Milliseconds()
	}
	failed := &resolve.Result{State: runrecord.Failed}

	req, err := emit.RenderWith(step, scope, emit.Options{StepID: sr.ID})
	if err != nil {
		var skip *resolve.SkipError
		switch {
		case errors.As(err, &skip):
			finish(runrecord.Skipped, runrecord.ReasonSkipped, err.Error())
			return sr, &resolve.Result{State: runrecord.Skipped}, nil
		case isRefError(err):
			finish(runrecord.Failed, refReason(err), "not sent: "+err.Error())
		default:
			finish(runrecord.Failed, runrecord.ReasonInvalidRequest, "not sent: "+err.Error())
		}
		return sr, failed, nil
	}
	sr.Request = req.Record
	if err := e.guard.CheckURL(req.URL); err != nil {
		finish(runrecord.Failed, runrecord.ReasonDenied, "not sent: "+err.Error())
		return sr, failed, nil
	}
	if t, ok := egress.TargetOf(req.URL); ok {
		if vs := run.policy.Check(t, req.Secrets()); vs != nil {
			finish(runrecord.Failed, runrecord.ReasonDestination, "not sent: "+egress.Error(vs).Error())
			return sr, failed, nil
		}
	}

	deadline := time.Now().Add(e.opts.StepTimeout)
	if run.deadline.Before(deadline) {
		deadline = run.deadline
	}
	sctx, cancel := context.WithDeadline(run.ctx, deadline)
	defer cancel()
	hreq, err := req.HTTPRequest(sctx)
	if err != nil {
		finish(runrecord.Failed, runrecord.ReasonInvalidRequest, "not sent: "+err.Error())
		return sr, failed, nil
	}
	if run.over() {
		// Stopped or out of time while the step was being rendered.
		finish(runrecord.Skipped, runrecord.ReasonCancelled, "not run: "+run.cause())
		return sr, &resolve.Result{State: runrecord.Skipped}, nil
	}
	// The journal hears of the request before its first byte leaves; a
	// journal that cannot record it refuses it.
	sending := sr
	sending.State, sending.Label = runrecord.Sending, red.String(sr.Label)
	if err := run.journal.Sending(run.ctx, sending); err != nil {
		finish(runrecord.Failed, runrecord.ReasonNotRecorded, "not sent: the run could not record that this step was being sent ("+err.Error()+")")
		return sr, failed, nil
	}
	if run.over() {
		// Stopped or out of time between the journal and the wire: nothing
		// was sent.
		finish(runrecord.Skipped, runrecord.ReasonCancelled, "not run: "+run.cause())
		return sr, &resolve.Result{State: runrecord.Skipped}, nil
	}
	resp, err := e.client.Do(hreq)
	var cut *emit.StreamError
	if errors.As(err, &cut) {
		// The e-mail could not be read mid-body: the body stopped short of
		// its Content-Length and the transport closed the connection.
		sr.PartialUpload = true
		finish(runrecord.Failed, runrecord.ReasonUploadAborted, "aborted mid-body: "+cut.Error()+
			"; the connection was cut before the announced Content-Length, so the receiver may have received part of the request, never a complete one")
		return sr, failed, nil
	}
	if err != nil {
		state, reason, msg := describeTransportError(run, sctx, err, e.opts.StepTimeout)
		finish(state, reason, msg)
		return sr, &resolve.Result{State: state}, nil
	}
	captured, received, readErr := e.capture(resp)
	sr.Response = &runrecord.Response{Status: captured.Status, Size: received, Truncated: captured.Truncated}
	if readErr != nil {
		state, reason, msg := describeTransportError(run, sctx, readErr, e.opts.StepTimeout)
		switch {
		case state == runrecord.Failed && !step.Succeeds(resp.StatusCode):
			// The answer is a status the step does not expect.
			reason, msg = runrecord.ReasonStatus, fmt.Sprintf("the response status is %d; the step expects %s (and its body was cut off: %s)", resp.StatusCode, step.Expects(), msg)
		case state == runrecord.Failed:
			// The receiver answered, so it had the whole request: it may
			// have acted on it.
			state, msg = runrecord.Unknown, fmt.Sprintf("the response (status %d) was cut off: %s; the receiver had the request and may have acted on it, and it is not sent again on its own", resp.StatusCode, msg)
		}
		finish(state, reason, "reading the response: "+msg)
		return sr, &resolve.Result{State: state, Response: captured}, captured
	}
	if !step.Succeeds(resp.StatusCode) {
		finish(runrecord.Failed, runrecord.ReasonStatus, fmt.Sprintf("the response status is %d; the step expects %s", resp.StatusCode, step.Expects()))
		return sr, &resolve.Result{State: runrecord.Failed, Response: captured}, captured
	}
	finish(runrecord.Succeeded, "", "")
	return sr, &resolve.Result{State: runrecord.Succeeded, Response: captured}, captured
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

// refReason is the reason a record gives a reference that fails its step:
// ReasonReference, or ReasonResponseUnavailable for a resumed run's earlier
// response its record does not hold whole — the user must know the step
// was not sent for that reason, not for a mistake in the workflow.
func refReason(err error) runrecord.Reason {
	var re *resolve.RefError
	if errors.As(err, &re) && re.Reason == runrecord.ReasonResponseUnavailable {
		return runrecord.ReasonResponseUnavailable
	}
	return runrecord.ReasonReference
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

// redact is the edge every byte of a step record crosses before it is
// kept, printed or handed to the journal: the label, the error and the
// response (headers from resp, the response captured, and its body —
// JSON as JSON, so a number that spells a secret is redacted, anything
// else as text) are redacted with red. The request was redacted by emit.
// A response body is redacted whole before it is clipped to
// RecordBodyLimit, so a secret cut by the clip cannot leave a piece behind.
func (e *Executor) redact(sr *runrecord.Step, r *resolve.Response, red *resolve.Redactor) {
	sr.Label = red.String(sr.Label)
	sr.Error = red.String(sr.Error)
	rr := sr.Response
	if rr == nil || r == nil {
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
	limit := e.opts.RecordBodyLimit
	var text string
	if r.IsJSON() {
		if v, ok := red.JSON(r.Body); ok {
			if int64(len(v)) <= limit {
				rr.Body = v
				return
			}
			text = string(v)
		}
	}
	if text == "" {
		text = red.String(string(r.Body))
	}
	if int64(len(text)) > limit {
		cut := int(limit)
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
// may be a secret) in words a person understands. A run that was stopped
// while the request may have left leaves the step Unknown: the receiver
// may have it, so it is never recorded as failed.
func describeTransportError(run runState, stepCtx context.Context, err error, timeout time.Duration) (runrecord.State, runrecord.Reason, string) {
	var denied *guard.DeniedError
	if errors.As(err, &denied) {
		return runrecord.Failed, runrecord.ReasonDenied, "not sent: " + denied.Error()
	}
	if run.stopped() {
		return runrecord.Unknown, runrecord.ReasonInterrupted, "stopped while this request was being sent: " + run.cause() +
			"; the receiver may or may not have got it, and it is not sent again on its own"
	}
	var unanswered *guard.UnansweredError
	if errors.As(err, &unanswered) {
		// Every byte of the request was written: the receiver may have it.
		reason, msg := transportCause(run, stepCtx, unanswered.Err, timeout)
		return runrecord.Unknown, reason, "the request was sent whole and no complete response came (" + msg +
			"); the receiver may have acted on it, and it is not sent again on its own"
	}
	reason, msg := transportCause(run, stepCtx, err, timeout)
	return runrecord.Failed, reason, msg
}

// transportCause names what went wrong in an exchange, without the URL.
func transportCause(run runState, stepCtx context.Context, err error, timeout time.Duration) (runrecord.Reason, string) {
	if run.over() {
		return runrecord.ReasonCancelled, "stopped: " + run.cause()
	}
	if stepCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
		return runrecord.ReasonTimeout, fmt.Sprintf("no complete response within %s", timeout)
	}
	switch {
	case errors.Is(err, guard.ErrNotSentAgain):
		return runrecord.ReasonTransport, guard.ErrNotSentAgain.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return runrecord.ReasonTransport, "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return runrecord.ReasonTransport, "connection reset by the server"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return runrecord.ReasonTransport, "the server closed the connection before the response was complete"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return runrecord.ReasonTransport, fmt.Sprintf("host %q not found", dnsErr.Name)
		}
		return runrecord.ReasonTransport, "name resolution failed: " + dnsErr.Err
	}
	return runrecord.ReasonTransport, innerError(err)
}

// innerError strips the *url.Error wrapper, whose message holds the URL.
func innerError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return innerError(ue.Err)
	}
	return err.Error()
}
