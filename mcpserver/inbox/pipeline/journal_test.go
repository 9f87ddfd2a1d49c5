package pipeline_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// Each step a pipeline run sends carries its identity — the workflow run's
// id and the step's index — in X-Kobana-Step-Id and, on a POST, as its
// Idempotency-Key; the record shows both.
func TestAPipelineRunCarriesItsStepsIdentities(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{start: true})
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	wr, err := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
	if err != nil || wr.Status != runrecord.RunSucceeded {
		t.Fatalf("workflow run %+v (%v)", wr, err)
	}
	for i, path := range []string{"/payables", "/payables/pay_1/attachments", "/notify"} {
		reqs := e.recv.requests(path)
		id := runrecord.StepID(wr.ID, i)
		if len(reqs) != 1 || reqs[0].Header.Get(runrecord.HeaderStepID) != id || reqs[0].Header.Get(runrecord.HeaderIdempotencyKey) != `"`+id+`"` {
			t.Errorf("%s: %d requests, headers %v", path, len(reqs), reqs)
			continue
		}
		s := wr.Steps[i]
		if s.ID != id || s.Request.Headers[runrecord.HeaderStepID] != id || s.Request.Headers[runrecord.HeaderIdempotencyKey] != `"`+id+`"` {
			t.Errorf("step %d's record: id %q, headers %v", i, s.ID, s.Request.Headers)
		}
	}
}

// A stop while a request is held by its receiver — the queue cancels the
// job — records that step unknown, never failed, and the run interrupted,
// as a restart would find it: the steps after it were not run, and nothing
// is sent again.
func TestAStopMidRequestRecordsTheStepUnknown(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{})
	arrived := e.recv.hold("/payables/pay_1/attachments")
	if err := e.q.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	m := e.receive(sampleEmail)
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the attachment step never reached the receiver")
	}
	// A hard stop: the running job's context is cancelled.
	if err := e.q.StopAndCancel(e.ctx); err != nil {
		t.Fatal(err)
	}
	var wr inbox.WorkflowRun
	err := testwait.Until(30*time.Second, func() error {
		got, err := e.repo().Emails.Get(e.ctx, testWS, m.ID)
		if err != nil || got.WorkflowRunID == "" {
			return errorf("no workflow run yet (%v)", err)
		}
		if wr, err = e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID); err != nil || wr.Status == runrecord.RunRunning {
			return errorf("workflow run not ended (%v)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if wr.Status != runrecord.RunInterrupted || len(wr.Steps) != 3 || !strings.Contains(wr.Error, "step 1 of 3") {
		t.Fatalf("run %s %q: %+v", wr.Status, wr.Error, wr.Steps)
	}
	if s := wr.Steps[1]; s.State != runrecord.Unknown || s.Reason != runrecord.ReasonInterrupted || s.Request == nil {
		t.Errorf("the step in flight: %+v", s)
	}
	if s := wr.Steps[2]; s.State != runrecord.Skipped || s.Reason != runrecord.ReasonCancelled || s.Label != "notify" {
		t.Errorf("the step after it: %+v", s)
	}
	got, _ := e.repo().Emails.Get(e.ctx, testWS, m.ID)
	if got.Status != inbox.EmailFailed || got.StatusDetail != string(inbox.CauseInterrupted) {
		t.Errorf("e-mail %s (%s)", got.Status, got.StatusDetail)
	}
	if n := len(e.recv.requests("/payables/pay_1/attachments")); n != 1 || len(e.recv.requests("/notify")) != 0 {
		t.Errorf("after the stop: the attachment step reached the receiver %d times, notify %d", n, len(e.recv.requests("/notify")))
	}
}

// An answer whose "workflow" is written twice is read as the compiler reads
// it: an error, so the run sends nothing and records why — not, as the
// last key would have it, an answer that asks for no workflow.
func TestAnAnswerWithAKeyWrittenTwiceSendsNothingAndSaysWhy(t *testing.T) {
	doc := strings.Replace(invoiceWorkflow, `"workflow": [`, `"workflow": [], "workflow": [`, 1)
	e := newEnv(t, agentAnswering(doc), options{start: true})
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	if got.Status != inbox.EmailFailed || got.WorkflowRunID == "" {
		t.Fatalf("e-mail %s (%s), workflow run %q", got.Status, got.StatusDetail, got.WorkflowRunID)
	}
	wr, _ := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
	if wr.Status != runrecord.RunFailed || wr.Error != runrecord.NotValidError || !strings.Contains(string(wr.Diagnostics), "json-duplicate-key") {
		t.Errorf("workflow run %s %q %s", wr.Status, wr.Error, wr.Diagnostics)
	}
	if n := len(e.recv.requests("/payables")); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// flakyStore fails the writes of workflow runs it is told to — through the
// store or a transaction — as a full disk or a cut connection would.
type flakyStore struct {
	store.Store
	mu     sync.Mutex
	writes int          // workflow-run writes so far
	fail   map[int]bool // the writes (from 1) that fail
}

func (f *flakyStore) failing(r store.Record) error {
	if r.Kind != inbox.KindWorkflowRun {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.fail[f.writes] {
		return errors.New("database or disk is full (injected)")
	}
	return nil
}

func (f *flakyStore) PutRecord(ctx context.Context, r store.Record) error {
	if err := f.failing(r); err != nil {
		return err
	}
	return f.Store.PutRecord(ctx, r)
}

func (f *flakyStore) CreateRecord(ctx context.Context, r store.Record) error {
	if err := f.failing(r); err != nil {
		return err
	}
	return f.Store.CreateRecord(ctx, r)
}

func (f *flakyStore) WithTx(ctx context.Context, fn func(store.Tx) error) error {
	return f.Store.WithTx(ctx, func(tx store.Tx) error { return fn(flakyTx{tx, f}) })
}

// flakyTx is a transaction of a flakyStore; it hands the queue the SQL
// transaction underneath.
type flakyTx struct {
	store.Tx
	f *flakyStore
}

func (t flakyTx) PutRecord(ctx context.Context, r store.Record) error {
	if err := t.f.failing(r); err != nil {
		return err
	}
	return t.Tx.PutRecord(ctx, r)
}

func (t flakyTx) CreateRecord(ctx context.Context, r store.Record) error {
	if err := t.f.failing(r); err != nil {
		return err
	}
	return t.Tx.CreateRecord(ctx, r)
}

func (t flakyTx) SQLTx() *sql.Tx { return t.Tx.(interface{ SQLTx() *sql.Tx }).SQLTx() }

// A write of a step's outcome that fails is retried: a store that refuses
// the first two attempts loses nothing — the run goes on and ends as it
// did, every step sent once.
func TestAFailedOutcomeWriteIsRetried(t *testing.T) {
	var flaky *flakyStore
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{cfg: func(c *pipeline.Config) {
		// Write 1 records step 0 being sent; 2 and 3 its outcome.
		flaky = &flakyStore{Store: c.Store, fail: map[int]bool{2: true, 3: true}}
		c.Store = flaky
	}})
	e.start()
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	wr, _ := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
	if got.Status != inbox.EmailProcessed || wr.Status != runrecord.RunSucceeded {
		t.Fatalf("e-mail %s (%s), run %s: %+v", got.Status, got.StatusDetail, wr.Status, wr.Steps)
	}
	for _, path := range []string{"/payables", "/payables/pay_1/attachments", "/notify"} {
		if n := len(e.recv.requests(path)); n != 1 {
			t.Errorf("%s sent %d times", path, n)
		}
	}
}

// A step's outcome that cannot be recorded at all — the store refuses
// every retry and the final commit — is not taken for a stop: the job's
// next attempt finds the step still being sent and records it unknown
// because recording failed after the response arrived, saying so, and
// nothing after it is sent. The run is failed, not interrupted (the server
// did not stop), and its agent run's cause says the outcome was not
// recorded.
func TestAnOutcomeThatCannotBeRecordedIsNotTakenForAStop(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{cfg: func(c *pipeline.Config) {
		fail := map[int]bool{}
		for i := 2; i <= 8; i++ { // the outcome's six attempts, then the final commit
			fail[i] = true
		}
		c.Store = &flakyStore{Store: c.Store, fail: fail}
	}})
	e.start()
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	wr, _ := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
	if got.Status != inbox.EmailFailed || wr.Status != runrecord.RunFailed || len(wr.Steps) != 3 {
		t.Fatalf("e-mail %s (%s), run %s %q: %+v", got.Status, got.StatusDetail, wr.Status, wr.Error, wr.Steps)
	}
	if !runrecord.Resumable(wr.Status, wr.Steps) {
		t.Errorf("the run cannot be resumed: %+v", wr.Steps)
	}
	if run, err := e.repo().AgentRuns.Get(e.ctx, testWS, got.AgentRunID); err != nil || run.Cause != inbox.CauseOutcomeNotRecorded {
		t.Errorf("agent run: cause %q (%v), want %q", run.Cause, err, inbox.CauseOutcomeNotRecorded)
	}
	s := wr.Steps[0]
	if s.State != runrecord.Unknown || s.Reason != runrecord.ReasonOutcomeNotRecorded ||
		!strings.Contains(s.Error, "its response arrived, but recording its outcome failed") || !strings.Contains(s.Error, "disk is full") {
		t.Errorf("step 0: %+v", s)
	}
	if strings.Contains(wr.Error, "server stopped") || !strings.Contains(wr.Error, "could not be recorded") {
		t.Errorf("the run's error: %q", wr.Error)
	}
	if len(e.recv.requests("/payables")) != 1 || len(e.recv.requests("/payables/pay_1/attachments")) != 0 {
		t.Errorf("requests after the unrecorded outcome were sent")
	}
}

// An interrupted run resumed through the processor: the step that ended
// is not sent again (its recorded response answers the steps after it),
// the unknown step is sent again with the interrupted run's identity and
// Idempotency-Key, the step after it follows; the new run says what it
// resumes, and the e-mail and its agent run are processed. The record
// taken up is one a server of the version before wrote.
func TestAnInterruptedRunIsResumedWithTheSameIdentities(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{})
	m := e.receive(sampleEmail)
	one := 1
	e.leaveRunning(m, "left", &one, `[{"index":0,"label":"create the payable","state":"succeeded","started_at":"2026-11-30T10:00:00Z","duration_ms":40,
			"request":{"method":"POST","url":"[redacted secrets.ERP_URL]/payables","headers":{"Authorization":"Bearer [redacted secrets.ERP_TOKEN]","Content-Type":"application/json"},"body":{"n":1}},
			"response":{"status":201,"headers":{"Content-Type":"application/json"},"body":{"data":{"id":"pay_1"}},"size":22}},
		{"index":1,"label":"attach the invoice","state":"sending","started_at":"2026-11-30T10:00:01Z","request":{"method":"POST","url":"[redacted secrets.ERP_URL]/payables/pay_1/attachments"}}]`)
	e.start()
	if got := e.settled(m.ID); got.Status != inbox.EmailFailed {
		t.Fatalf("e-mail %s (%s), want failed (interrupted)", got.Status, got.StatusDetail)
	}
	proc := e.p.Processor()
	resume := inbox.ReprocessRequest{Workspace: testWS, EmailID: m.ID, Mode: inbox.ReprocessResume, Actor: "person:test"}
	if _, err := proc.Reprocess(e.ctx, resume); err != nil {
		t.Fatal(err)
	}
	var de *inbox.Error
	if err := proc.Check(e.ctx, resume); !errors.As(err, &de) || de.Code != inbox.CodeNotResumable {
		t.Errorf("a second resume while the first is queued: %v", err)
	}
	got := e.settled(m.ID)
	wr, err := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
	if err != nil || got.Status != inbox.EmailProcessed || wr.Status != runrecord.RunSucceeded || wr.ResumeOf != "wrun_left" || wr.ID == "wrun_left" {
		t.Fatalf("e-mail %s (%s), run %s %s resumes %q: %+v (%v)", got.Status, got.StatusDetail, wr.ID, wr.Status, wr.ResumeOf, wr.Steps, err)
	}
	if s := wr.Steps[0]; s.FromRun != "wrun_left" || s.State != runrecord.Succeeded || len(e.recv.requests("/payables")) != 0 {
		t.Errorf("the step that ended: %+v, sent %d times", s, len(e.recv.requests("/payables")))
	}
	att := e.recv.requests("/payables/pay_1/attachments")
	if len(att) != 1 || att[0].Header.Get(runrecord.HeaderStepID) != "wrun_left/1" || att[0].Header.Get(runrecord.HeaderIdempotencyKey) != `"wrun_left/1"` ||
		wr.Steps[1].ID != "wrun_left/1" || wr.Steps[1].FromRun != "" {
		t.Errorf("the unknown step sent again: %+v, record %+v", att, wr.Steps[1])
	}
	if n := len(e.recv.requests("/notify")); n != 1 || wr.Steps[2].ID != "wrun_left/2" {
		t.Errorf("notify sent %d times, record %+v", n, wr.Steps[2])
	}
	ar, _ := e.repo().AgentRuns.Get(e.ctx, testWS, "arun_left")
	if ar.Status != inbox.RunSucceeded || ar.Cause != "" || ar.WorkflowRunID != wr.ID {
		t.Errorf("agent run %s (%s) → %s", ar.Status, ar.Cause, ar.WorkflowRunID)
	}
	// Only an interrupted run is resumed.
	if err := proc.Check(e.ctx, resume); !errors.As(err, &de) || de.Code != inbox.CodeNotResumable {
		t.Errorf("resuming a run that succeeded: %v", err)
	}
}

// The processor refuses, before changing anything, a reprocess that could
// not start: an e-mail that does not exist (or is another workspace's), an
// inbox without an agent or whose agent was deleted, a mode it does not
// know, and a resume of an e-mail whose latest run was not interrupted.
func TestTheProcessorRefusesWhatCannotStart(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{start: true})
	m := e.receive(sampleEmail)
	e.settled(m.ID)
	proc := e.p.Processor()
	req := func(id, mode string) inbox.ReprocessRequest {
		return inbox.ReprocessRequest{Workspace: testWS, EmailID: id, Mode: mode, Actor: "person:test"}
	}
	code := func(err error) string {
		var de *inbox.Error
		if errors.As(err, &de) {
			return de.Code
		}
		if errors.Is(err, store.ErrNotFound) {
			return "not_found"
		}
		return fmt.Sprint(err)
	}
	reprocessed := func() int { return strings.Count(strings.Join(events(e), " "), inbox.EventEmailReprocessed) }
	if c := code(proc.Check(e.ctx, req("eml_missing", ""))); c != "not_found" {
		t.Errorf("a missing e-mail: %s", c)
	}
	if c := code(proc.Check(e.ctx, inbox.ReprocessRequest{Workspace: "ws_other", EmailID: m.ID})); c != "not_found" {
		t.Errorf("another workspace's e-mail: %s", c)
	}
	if c := code(proc.Check(e.ctx, req(m.ID, "again"))); c != "invalid_arguments" {
		t.Errorf("an unknown mode: %s", c)
	}
	if c := code(proc.Check(e.ctx, req(m.ID, inbox.ReprocessResume))); c != inbox.CodeNotResumable {
		t.Errorf("resuming a run that succeeded: %s", c)
	}
	ib, _ := e.repo().Inboxes.Get(e.ctx, testWS, testInbox)
	ib.AgentID = ""
	e.put(ib)
	if _, err := proc.Reprocess(e.ctx, req(m.ID, "")); code(err) != inbox.CodeNoAgent {
		t.Errorf("an inbox without agent: %v", err)
	}
	ib.AgentID = testAgent
	e.put(ib)
	if err := e.repo().Agents.Delete(e.ctx, testWS, testAgent); err != nil {
		t.Fatal(err)
	}
	if c := code(proc.Check(e.ctx, req(m.ID, inbox.ReprocessRestart))); c != inbox.CodeNoAgent {
		t.Errorf("a deleted agent: %s", c)
	}
	if n := reprocessed(); n != 0 {
		t.Errorf("refusals recorded %d reprocesses", n)
	}
}

// Workflow steps and webhook deliveries reach the network through the one
// seam, Config.Executor.Network, checked by the guard: a dialer given there
// opens their connections, and with a guard that denies loopback the same
// dialer is refused for both.
func TestStepsAndWebhooksGoThroughTheNetworkAndTheGuard(t *testing.T) {
	for _, allowed := range []bool{true, false} {
		var mu sync.Mutex
		dials := 0
		e := newEnv(t, agentAnswering(invoiceWorkflow), options{cfg: func(c *pipeline.Config) {
			var d net.Dialer
			c.Executor.Network = guard.Network{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				mu.Lock()
				dials++
				mu.Unlock()
				return d.DialContext(ctx, network, addr)
			}}
			if !allowed {
				c.Executor.Guard = &guard.Guard{}
			}
		}})
		e.start()
		m := e.receive(sampleEmail)
		got := e.settled(m.ID)
		err := testwait.Until(30*time.Second, func() error {
			for _, d := range all(e, e.repo().Deliveries) {
				if d.Status == inbox.DeliveryPending || len(d.Attempts) == 0 {
					return errorf("delivery %s not attempted yet", d.ID)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := dials
		mu.Unlock()
		ds := all(e, e.repo().Deliveries)
		switch {
		case allowed && (got.Status != inbox.EmailProcessed || n == 0 || len(e.recv.requests("/hooks")) == 0):
			t.Errorf("allowed: e-mail %s, %d dials, %d hooks", got.Status, n, len(e.recv.requests("/hooks")))
		case !allowed && (got.Status != inbox.EmailFailed || e.recv.total() != 0 || ds[0].Status != inbox.DeliveryFailed || !strings.Contains(ds[0].Error, "denied")):
			t.Errorf("denied: e-mail %s, receiver got %d, delivery %s %q", got.Status, e.recv.total(), ds[0].Status, ds[0].Error)
		}
	}
}
