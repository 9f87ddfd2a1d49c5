package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/inbox/queue"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/store"
)

// workflowWorker runs the workflow stage: the workflow an agent run
// answered with.
type workflowWorker struct {
	river.WorkerDefaults[queue.WorkflowArgs]
	p *Pipeline
}

// Timeout bounds a run: the executor's run timeout, and time to record it.
func (w *workflowWorker) Timeout(*river.Job[queue.WorkflowArgs]) time.Duration {
	rt := w.p.cfg.Executor.RunTimeout
	if rt <= 0 {
		rt = executor.DefaultRunTimeout
	}
	return rt + time.Minute
}

// Work runs the agent run's workflow once. Before each request is sent,
// the run record (status running, the step being sent) is committed on its
// own; after the response, the step's outcome. At the end, in one
// transaction: the redacted run record, the agent run and the e-mail's
// outcome, the events and their deliveries, and the job's completion. A job
// that runs again and finds the record running — its earlier attempt
// stopped mid-run — records the run as interrupted and sends nothing.
func (w *workflowWorker) Work(ctx context.Context, job *river.Job[queue.WorkflowArgs]) error {
	p, a := w.p, job.Args
	run, err := p.repo.AgentRuns.Get(ctx, a.Workspace, a.AgentRunID)
	if errors.Is(err, store.ErrNotFound) {
		p.log.Info("pipeline: the agent run of a workflow job was deleted; nothing to do", "workspace", a.Workspace, "agent_run", a.AgentRunID)
		return nil
	}
	if err != nil {
		return err
	}
	wfID := run.WorkflowRunID
	if wfID == "" {
		wfID = workflowRunID(a.Workspace, run.ID)
	}
	prev, err := p.repo.WorkflowRuns.Get(ctx, a.Workspace, wfID)
	switch {
	case err == nil && prev.Status == inbox.RunRunning:
		return w.interrupt(ctx, job, run, prev)
	case err == nil:
		return nil // recorded by an earlier attempt
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	e, err := p.repo.Emails.Get(ctx, a.Workspace, run.EmailID)
	if errors.Is(err, store.ErrNotFound) {
		p.log.Info("pipeline: the e-mail of a workflow job was deleted; nothing is sent", "workspace", a.Workspace, "email", run.EmailID)
		return nil
	}
	if err != nil {
		return err
	}
	rc, err := w.runContext(ctx, a.Workspace, e, run, wfID)
	if err != nil {
		return err
	}
	secrets, err := p.userSecrets(ctx, a.Workspace)
	if err != nil {
		return err
	}
	msg, err := p.cfg.Raw.OpenMessage(ctx, a.Workspace, e.ID)
	if err != nil && !errors.Is(err, inbox.ErrPurged) {
		return fmt.Errorf("opening the raw message of e-mail %s: %w", e.ID, err)
	}
	if msg != nil {
		defer msg.Close()
	}
	hit("workflow.start")
	wr := inbox.WorkflowRun{ID: wfID, AgentRunID: run.ID, EmailID: e.ID, InboxID: e.InboxID, StartedAt: p.now()}
	prog := &progress{p: p, ws: a.Workspace, run: wr, red: resolve.NewRedactor(resolve.SecretMap(secrets))}
	plan, _ := compile.Compile(run.Output)
	if plan != nil {
		prog.plan = plan
	}
	opts := p.cfg.Executor
	opts.Transport = &gate{base: p.base, prog: prog}
	opts.OnStep = prog.finished
	var index *eml.Index
	if msg != nil && p.cfg.Index != nil {
		index, err = p.cfg.Index(ctx, a.Workspace, e.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("reading the part index of e-mail %s: %w", e.ID, err)
		}
	}
	env := executor.Env{Secrets: resolve.SecretMap(secrets), Facts: resolve.FactMap(rc.Facts()), Attachments: attachments(msg, index, e)}
	rec := executor.New(opts).RunDocument(ctx, run.Output, env)
	if prog.conflict {
		// Another worker started this run (a job rescued while its first
		// worker still ran): its record is the truth; this attempt sent
		// nothing and records nothing.
		return fmt.Errorf("workflow run %s was started by another worker; this attempt sent nothing", wfID)
	}
	steps, err := json.Marshal(rec.Steps)
	if err != nil {
		return err
	}
	wr.Status, wr.Steps, wr.Error = rec.Status, steps, rec.Error
	if len(rec.Diagnostics) > 0 {
		if wr.Diagnostics, err = json.Marshal(rec.Diagnostics); err != nil {
			return err
		}
	}
	wr.StartedAt, wr.FinishedAt = rec.StartedAt, rec.FinishedAt
	if wr.StartedAt.IsZero() {
		wr.StartedAt = prog.run.StartedAt
	}
	hit("workflow.ran")
	// The requests were sent: record them even if the job is being stopped.
	ctx = context.WithoutCancel(ctx)
	if err := w.finish(ctx, job, run, wr); err != nil {
		return fmt.Errorf("recording workflow run %s: %w", wr.ID, err)
	}
	hit("workflow.committed")
	return nil
}

// runContext gathers the kobana.* facts of a run from its records.
func (w *workflowWorker) runContext(ctx context.Context, ws string, e inbox.Email, run inbox.AgentRun, wfID string) (inbox.RunContext, error) {
	p := w.p
	rc := inbox.RunContext{AppURL: p.cfg.AppURL, Email: e, AgentRunID: run.ID, WorkflowRunID: wfID}
	w2, err := p.repo.Workspaces.Get(ctx, ws, ws)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rc, err
	}
	if errors.Is(err, store.ErrNotFound) {
		w2 = inbox.Workspace{ID: ws}
	}
	rc.Workspace, rc.Environment = w2, p.environment(w2)
	ib, err := p.repo.Inboxes.Get(ctx, ws, e.InboxID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rc, err
	}
	if errors.Is(err, store.ErrNotFound) {
		ib = inbox.Inbox{ID: e.InboxID}
	}
	rc.Inbox = ib
	ag, err := p.repo.Agents.Get(ctx, ws, run.AgentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rc, err
	}
	if errors.Is(err, store.ErrNotFound) {
		ag = inbox.Agent{ID: run.AgentID}
	}
	rc.Agent = ag
	return rc, nil
}

// attachments opens the e-mail's attachments over the run's one snapshot of
// its raw message, with the part index stored when it arrived when there is
// one (only the ranges a step sends are read); a purged message fails every
// step that uses an attachment before it is sent, saying so.
func attachments(msg inbox.Message, index *eml.Index, e inbox.Email) resolve.AttachmentsFunc {
	if msg == nil {
		return func() (resolve.Attachments, error) {
			when := ""
			if !e.PurgedAt.IsZero() {
				when = " on " + e.PurgedAt.UTC().Format("2006-01-02")
			}
			return nil, fmt.Errorf("%w: the raw message of e-mail %s was purged by retention%s, so its attachments can no longer be read", eml.ErrUnreadable, e.ID, when)
		}
	}
	open := resolve.EMLIndexed(msg, msg.Size(), index)
	return func() (resolve.Attachments, error) {
		a, err := open()
		if err != nil {
			return nil, fmt.Errorf("reading e-mail %s: %w", e.ID, err)
		}
		return a, nil
	}
}

// finish writes the outcome of a workflow run in one transaction: the run
// record, the agent run (failed when the workflow failed), the e-mail's
// status, the events and their deliveries, and the job's completion.
func (w *workflowWorker) finish(ctx context.Context, job *river.Job[queue.WorkflowArgs], run inbox.AgentRun, wr inbox.WorkflowRun) error {
	p, ws := w.p, job.Args.Workspace
	return p.cfg.Store.WithTx(ctx, func(tx store.Tx) error {
		repo := p.repo.In(tx)
		if err := repo.WorkflowRuns.Put(ctx, ws, wr); err != nil {
			return err
		}
		run, err := repo.AgentRuns.Get(ctx, ws, run.ID)
		if err != nil {
			return err
		}
		run.WorkflowRunID = wr.ID
		switch wr.Status {
		case inbox.RunInterrupted:
			run.Status, run.Cause, run.Error = inbox.RunFailed, inbox.CauseInterrupted, wr.Error
		case inbox.RunFailed:
			run.Status, run.Cause, run.Error = inbox.RunFailed, inbox.CauseWorkflowFailed, "one or more workflow steps failed or were skipped"
			if wr.Error != "" {
				run.Error = wr.Error
			}
		}
		if err := repo.AgentRuns.Put(ctx, ws, run); err != nil {
			return err
		}
		e, err := repo.Emails.Get(ctx, ws, run.EmailID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err == nil {
			// A later reprocess may have moved the e-mail on: only the run it
			// points at sets its status.
			if e.AgentRunID == run.ID {
				e.ApplyRun(run)
				if err := repo.Emails.Put(ctx, ws, e); err != nil {
					return err
				}
			}
			events, err := runEvents(run, &wr, e, p.now())
			if err != nil {
				return err
			}
			for _, ev := range events {
				if err := p.record(ctx, tx, ws, ev); err != nil {
					return err
				}
			}
		}
		return queue.CompleteTx(ctx, tx, job)
	})
}

// interrupt records a run its earlier attempt left running: the step that
// was being sent is unknown, the ones after it were not run, and nothing is
// sent again.
func (w *workflowWorker) interrupt(ctx context.Context, job *river.Job[queue.WorkflowArgs], run inbox.AgentRun, wr inbox.WorkflowRun) error {
	p := w.p
	var steps []json.RawMessage
	if err := json.Unmarshal(wr.Steps, &steps); err != nil && len(wr.Steps) > 0 {
		return fmt.Errorf("reading the steps of workflow run %s: %w", wr.ID, err)
	}
	var inFlight *noteStep
	var done []json.RawMessage
	for _, s := range steps {
		var n noteStep
		if json.Unmarshal(s, &n) == nil && n.State == stateSending {
			n.State, n.Reason = inbox.StepUnknown, reasonInterrupted
			n.Error = "the server stopped while this request was being sent: the receiver may or may not have got it, and it was not sent again"
			inFlight = &n
			continue
		}
		done = append(done, s)
	}
	if inFlight != nil {
		b, err := json.Marshal(inFlight)
		if err != nil {
			return err
		}
		done = append(done, b)
	}
	total := len(done)
	plan, _ := compile.Compile(run.Output)
	if inFlight == nil && plan != nil && len(done) == len(plan.Steps) {
		return w.complete(ctx, job, run, wr, done)
	}
	if plan != nil {
		total = max(total, len(plan.Steps))
		for i := len(done); i < len(plan.Steps); i++ {
			b, err := json.Marshal(noteStep{Index: i, Label: plan.Steps[i].Label, State: "skipped", Reason: executor.ReasonCancelled,
				Error: "not run: the run was interrupted before this step"})
			if err != nil {
				return err
			}
			done = append(done, b)
		}
	}
	b, err := json.Marshal(done)
	if err != nil {
		return err
	}
	wr.Steps, wr.Status, wr.InFlight, wr.FinishedAt = b, inbox.RunInterrupted, nil, p.now()
	if inFlight != nil {
		wr.Error = fmt.Sprintf("the server stopped while step %d of %d was being sent; whether its receiver got it is unknown, so nothing was sent again. Reprocess the e-mail to run the workflow again.", inFlight.Index, total)
	} else {
		wr.Error = fmt.Sprintf("the server stopped during the run, between requests (%d of %d steps done); nothing was sent again. Reprocess the e-mail to run the workflow again.", len(steps), total)
	}
	p.log.Warn("pipeline: a workflow run was interrupted by a stop; recorded as interrupted, nothing re-sent", "workspace", job.Args.Workspace, "workflow_run", wr.ID)
	if err := w.finish(context.WithoutCancel(ctx), job, run, wr); err != nil {
		return fmt.Errorf("recording interrupted workflow run %s: %w", wr.ID, err)
	}
	hit("workflow.interrupted")
	return nil
}

// complete records a run its earlier attempt left running after every step
// had been recorded (the process stopped before the final commit): its
// outcome is known, so it is recorded as it was, and nothing is sent.
func (w *workflowWorker) complete(ctx context.Context, job *river.Job[queue.WorkflowArgs], run inbox.AgentRun, wr inbox.WorkflowRun, steps []json.RawMessage) error {
	wr.Status = inbox.RunSucceeded
	for _, s := range steps {
		var n noteStep
		if json.Unmarshal(s, &n) != nil || n.State != inbox.RunSucceeded {
			wr.Status = inbox.RunFailed
		}
	}
	b, err := json.Marshal(steps)
	if err != nil {
		return err
	}
	wr.Steps, wr.InFlight, wr.FinishedAt = b, nil, w.p.now()
	w.p.log.Warn("pipeline: a workflow run had sent every step when its process stopped; its outcome is recorded now, nothing re-sent", "workspace", job.Args.Workspace, "workflow_run", wr.ID)
	if err := w.finish(context.WithoutCancel(ctx), job, run, wr); err != nil {
		return fmt.Errorf("recording workflow run %s: %w", wr.ID, err)
	}
	hit("workflow.interrupted")
	return nil
}

// Step states and reasons only the pipeline writes.
const (
	// stateSending marks, in a running record, the step being sent.
	stateSending = "sending"
	// reasonInterrupted is the reason of a step left unknown by a stop.
	reasonInterrupted = "interrupted"
)

// noteStep is a step record the pipeline writes itself: the step being
// sent (running record) and what an interruption leaves.
type noteStep struct {
	Index     int          `json:"index"`
	Label     string       `json:"label,omitempty"`
	State     string       `json:"state"`
	Error     string       `json:"error,omitempty"`
	Reason    string       `json:"reason,omitempty"`
	StartedAt time.Time    `json:"started_at,omitzero"`
	Request   *sentRequest `json:"request,omitempty"`
}

// sentRequest is what the pipeline knows of a request it let through: the
// method and the URL, redacted.
type sentRequest struct {
	Method string `json:"method"`
	URL    string `json:"url"`
}

// progress keeps a run's record up to date while it sends: before each
// request the record says which step is being sent, after the response
// the step's outcome. Each write commits on its own before the run goes on.
type progress struct {
	p    *Pipeline
	ws   string
	run  inbox.WorkflowRun
	plan *compile.Plan
	red  *resolve.Redactor

	mu       sync.Mutex
	steps    []json.RawMessage
	created  bool
	sending  int // index of the step being sent, -1 when none
	err      error
	conflict bool
}

// beforeSend commits the record of step i being sent. An error refuses the
// request: nothing is sent that the record would not show.
func (g *progress) beforeSend(ctx context.Context, req *http.Request) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	i := len(g.steps)
	n := noteStep{Index: i, State: stateSending, StartedAt: g.p.now(), Request: &sentRequest{Method: req.Method, URL: g.red.String(redactURL(req))}}
	if g.plan != nil && i < len(g.plan.Steps) {
		n.Label = g.red.String(g.plan.Steps[i].Label)
	}
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	rec := g.run
	rec.Status, rec.InFlight = inbox.RunRunning, &i
	if rec.Steps, err = json.Marshal(append(g.steps[:len(g.steps):len(g.steps)], b)); err != nil {
		return err
	}
	if !g.created {
		err = g.p.repo.WorkflowRuns.Create(ctx, g.ws, rec)
		if errors.Is(err, store.ErrConflict) {
			g.conflict = true
		}
	} else {
		err = g.p.repo.WorkflowRuns.Put(ctx, g.ws, rec)
	}
	if err != nil {
		g.err = fmt.Errorf("not sent: the run could not record that step %d is being sent (%v)", i, err)
		return g.err
	}
	g.created, g.sending = true, i
	hit("workflow.sending")
	return nil
}

// finished is the executor's OnStep: it keeps the step's record and, for a
// step that was sent, commits it.
func (g *progress) finished(sr executor.StepRecord) {
	b, err := json.Marshal(sr)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		b, _ = json.Marshal(noteStep{Index: sr.Index, Label: sr.Label, State: sr.State.String(), Error: "the step record could not be encoded: " + err.Error()})
	}
	g.steps = append(g.steps, b)
	if g.sending != sr.Index || !g.created || g.err != nil {
		return
	}
	g.sending = -1
	hit("workflow.sent")
	rec := g.run
	rec.Status = inbox.RunRunning
	if rec.Steps, err = json.Marshal(g.steps); err == nil {
		err = g.p.repo.WorkflowRuns.Put(context.Background(), g.ws, rec)
	}
	if err != nil {
		// The record still says the step is being sent: if the server
		// stops now, the step is reported unknown rather than lost.
		g.p.log.Warn("pipeline: could not record a sent step's outcome", "workflow_run", g.run.ID, "step", sr.Index, "err", err)
	}
}

// redactURL is the URL a request goes to, without its fragment (never
// sent) and with its user information removed.
func redactURL(req *http.Request) string {
	u := *req.URL
	u.Fragment, u.RawFragment, u.User = "", "", nil
	return u.String()
}

// gate is the transport of a run: it lets a request through only once the
// run's record says it is being sent.
type gate struct {
	base http.RoundTripper
	prog *progress
}

// RoundTrip implements http.RoundTripper.
func (g *gate) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.prog.beforeSend(req.Context(), req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return g.base.RoundTrip(req)
}
