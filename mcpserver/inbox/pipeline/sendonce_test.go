package pipeline_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/runrecord"
)

// A receiver that reads a step's whole request and resets the connection
// it had already answered the step before on gets that step once: the run
// ends failed with the step unknown (not interrupted: the server did not
// stop), nothing after it is sent, and a person's resume sends it again
// with the same Idempotency-Key — the second and last time it arrives.
func TestAStepWhoseAnswerNeverCameIsSentOnceAndResumed(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{})
	var resets atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/payables/pay_1/attachments" && resets.Add(1) == 1 {
			// Record the arrival as the receiver does, then reset.
			e.recv.mu.Lock()
			e.recv.got = append(e.recv.got, received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
			e.recv.mu.Unlock()
			io.Copy(io.Discard, r.Body)
			c, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
			return
		}
		e.recv.serve(w, r)
	}))
	t.Cleanup(front.Close)
	if err := e.st.SetSecret(e.ctx, testWS, "ERP_URL", front.URL); err != nil {
		t.Fatal(err)
	}
	e.start()
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	wr, err := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
	if err != nil || got.Status != inbox.EmailFailed || wr.Status != runrecord.RunFailed || len(wr.Steps) != 3 {
		t.Fatalf("e-mail %s (%s), run %s %q: %+v (%v)", got.Status, got.StatusDetail, wr.Status, wr.Error, wr.Steps, err)
	}
	if s := wr.Steps[1]; s.State != runrecord.Unknown || s.Reason != runrecord.ReasonTransport || s.ID != wr.ID+"/1" {
		t.Errorf("the step whose answer never came: %+v", s)
	}
	if n := len(e.recv.requests("/payables/pay_1/attachments")); n != 1 {
		t.Fatalf("the step reached its receiver %d times, want once", n)
	}
	if n := len(e.recv.requests("/notify")); n != 0 {
		t.Errorf("the step after it was sent %d times before the resume", n)
	}

	resume := inbox.ReprocessRequest{Workspace: testWS, EmailID: m.ID, Mode: inbox.ReprocessResume, Actor: "person:test"}
	if _, err := e.p.Processor().Reprocess(e.ctx, resume); err != nil {
		t.Fatalf("resuming a run whose step is unknown: %v", err)
	}
	got = e.settled(m.ID)
	resumed, err := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
	if err != nil || got.Status != inbox.EmailProcessed || resumed.Status != runrecord.RunSucceeded || resumed.ResumeOf != wr.ID {
		t.Fatalf("after the resume: e-mail %s (%s), run %s resumes %q (%v)", got.Status, got.StatusDetail, resumed.Status, resumed.ResumeOf, err)
	}
	att := e.recv.requests("/payables/pay_1/attachments")
	key := runrecord.IdempotencyKey(wr.ID + "/1")
	if len(att) != 2 || att[0].Header.Get(runrecord.HeaderIdempotencyKey) != key || att[1].Header.Get(runrecord.HeaderIdempotencyKey) != key {
		t.Errorf("the step arrived %d times; keys %v", len(att), att)
	}
	if n := len(e.recv.requests("/payables")); n != 1 {
		t.Errorf("the step that succeeded was sent %d times", n)
	}
	if n := len(e.recv.requests("/notify")); n != 1 {
		t.Errorf("notify was sent %d times", n)
	}
}
