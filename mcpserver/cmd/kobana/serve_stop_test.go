package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/smtp"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/runrecord"
)

// heldReceiver is an ERP on loopback whose POST /payables holds each
// request until the test releases it, then answers 201.
type heldReceiver struct {
	*httptest.Server
	arrived chan struct{}
	release chan struct{}

	mu       sync.Mutex
	requests int // requests received
	answered int // requests answered in full
}

func newHeldReceiver(t *testing.T) *heldReceiver {
	rv := &heldReceiver{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	rv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rv.mu.Lock()
		rv.requests++
		rv.mu.Unlock()
		rv.arrived <- struct{}{}
		select {
		case <-rv.release:
		case <-r.Context().Done():
			return // the client went away: nothing answered
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		if _, err := io.WriteString(w, `{"data":{"id":"pay_1"}}`); err == nil {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			rv.mu.Lock()
			rv.answered++
			rv.mu.Unlock()
		}
	}))
	t.Cleanup(func() {
		select {
		case <-rv.release:
		default:
			close(rv.release)
		}
		rv.Close()
	})
	return rv
}

func (rv *heldReceiver) counts() (requests, answered int) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.requests, rv.answered
}

// stopFixture is a demo store whose invoice agent answers (through a model
// stand-in) with a one-step workflow posting to a held receiver, and the
// flags of a kobana serve that receives mail for it and processes it.
type stopFixture struct {
	db   string
	rv   *heldReceiver
	args []string
}

func newStopFixture(t *testing.T, grace string) *stopFixture {
	t.Helper()
	f := &stopFixture{db: filepath.Join(t.TempDir(), "kobana.db"), rv: newHeldReceiver(t)}
	seedDemo(t, f.db)
	doc := fmt.Sprintf(`{"result": {"supplier": "ACME"}, "workflow": [
  {"type": "request", "label": "create the payable", "method": "POST", "url": %q,
   "body": {"email_id": "${{kobana.email_id}}"}, "expected_status": 201}]}`, f.rv.URL+"/payables")
	model := httptest.NewServer(standin.New(standin.Always(standin.Answer(doc))))
	t.Cleanup(model.Close)
	f.args = []string{"serve", "-db", f.db, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0", "-dns", spfZone(t),
		"-allow", "127.0.0.1/32", "-model-base-url", model.URL + "/v1", "-grace", grace}
	return f
}

var smtpLine = regexp.MustCompile(`over SMTP on (\S+)`)

// send sends the demo invoice to the invoice inbox.
func (f *stopFixture) send(t *testing.T, p *kobanaProcess) {
	t.Helper()
	addr := p.await(smtpLine, 30*time.Second)[1]
	if err := smtp.SendMail(addr, nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(demoInvoice)); err != nil {
		t.Fatal(err)
	}
}

// sendAndHold sends the demo invoice and returns once its workflow's
// request reaches the receiver, which holds it.
func (f *stopFixture) sendAndHold(t *testing.T, p *kobanaProcess) {
	t.Helper()
	f.send(t, p)
	select {
	case <-f.rv.arrived:
	case <-time.After(60 * time.Second):
		t.Fatalf("the workflow's request never reached the receiver; output:\n%s", p.output)
	}
}

// runOf reads the e-mail the test sent and its workflow run.
func (f *stopFixture) runOf(t *testing.T) (inbox.Email, inbox.WorkflowRun, []runrecord.Step) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), f.db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, ok := invoiceEmail(t, st)
	if !ok {
		t.Fatal("the e-mail sent is not in the store")
	}
	if e.WorkflowRunID == "" {
		t.Fatalf("e-mail %s (%s) has no workflow run", e.ID, e.Status)
	}
	wr, err := inbox.NewRepo(st).WorkflowRuns.Get(context.Background(), "ws_finance", e.WorkflowRunID)
	if err != nil {
		t.Fatal(err)
	}
	return e, wr, wr.Steps
}

// SIGTERM while a step is being sent: serve takes no new work and lets the
// step finish within -grace, records it as it ended (the receiver's answer)
// and exits 0. Before River's soft stop, the signal cancelled the job at
// once: the request was cut and the run recorded failed ("stopped").
func TestServeSIGTERMLetsTheStepInFlightFinish(t *testing.T) {
	f := newStopFixture(t, "20s")
	p := startKobana(t, nil, f.args...)
	f.sendAndHold(t, p)
	sent := p.signal(syscall.SIGTERM)
	p.await(regexp.MustCompile(`stopping: taking no new work`), 10*time.Second)
	close(f.rv.release)
	code, exited := p.wait(30 * time.Second)
	if code != exitOK {
		t.Fatalf("exit %d; output:\n%s", code, p.output)
	}
	// The time is measured, not asserted (it is reported, see
	// docs/operations.md).
	t.Logf("a step in flight, answered once serve is stopping: SIGTERM to exit %v (-grace 20s)", exited.Sub(sent))
	if req, ans := f.rv.counts(); req != 1 || ans != 1 {
		t.Errorf("the receiver got %d requests and answered %d, want 1 and 1", req, ans)
	}
	e, wr, steps := f.runOf(t)
	if wr.Status != runrecord.RunSucceeded || len(steps) != 1 || steps[0].State != runrecord.Succeeded || e.Status != inbox.EmailProcessed {
		t.Errorf("after SIGTERM: e-mail %s (%s), run %s, steps %v; want processed, succeeded", e.Status, e.StatusDetail, wr.Status, steps)
	}
}

// SIGTERM with nothing in flight: serve exits at once, 0.
func TestServeSIGTERMIdle(t *testing.T) {
	f := newStopFixture(t, "20s")
	p := startKobana(t, nil, f.args...)
	p.await(smtpLine, 30*time.Second)
	p.await(regexp.MustCompile(`processing the Inbox's queue`), 30*time.Second)
	sent := p.signal(syscall.SIGTERM)
	code, exited := p.wait(30 * time.Second)
	if code != exitOK {
		t.Fatalf("exit %d; output:\n%s", code, p.output)
	}
	t.Logf("idle: SIGTERM to exit %v", exited.Sub(sent))
}

// SIGHUP does not stop serve: it says what it reloaded and keeps serving.
func TestServeSIGHUPKeepsServing(t *testing.T) {
	f := newStopFixture(t, "20s")
	p := startKobana(t, nil, f.args...)
	p.await(regexp.MustCompile(`processing the Inbox's queue`), 30*time.Second)
	p.signal(syscall.SIGHUP)
	p.await(regexp.MustCompile(`SIGHUP: nothing to reload .*; still serving`), 10*time.Second)
	f.send(t, p) // still takes mail
	select {
	case <-f.rv.arrived:
	case <-time.After(60 * time.Second):
		t.Fatalf("after SIGHUP the mail was not processed; output:\n%s", p.output)
	}
	close(f.rv.release)
	if err := testwait.Until(30*time.Second, func() error {
		if _, ans := f.rv.counts(); ans != 1 {
			return fmt.Errorf("the receiver answered %d requests", ans)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p.signal(syscall.SIGTERM)
	if code, _ := p.wait(30 * time.Second); code != exitOK {
		t.Fatalf("exit %d; output:\n%s", code, p.output)
	}
	if strings.Contains(p.output.String(), "panic") {
		t.Errorf("output:\n%s", p.output)
	}
}

// SIGTERM while the agent's model is being asked and does not answer
// within -grace: the call is cut, nothing is recorded as the model's
// failure (no model_timeout), and the agent runs again at the next start.
func TestServeSIGTERMDuringAModelCallRetriesIt(t *testing.T) {
	db := filepath.Join(t.TempDir(), "kobana.db")
	seedDemo(t, db)
	var mu sync.Mutex
	hold := true
	asked := make(chan struct{}, 16)
	answer := standin.New(standin.Always(standin.Answer(`{"result": {"note": "no action"}}`)))
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		held := hold
		mu.Unlock()
		if held {
			io.Copy(io.Discard, r.Body) // so that the client's going away ends r's context
			asked <- struct{}{}
			<-r.Context().Done() // never answers: the stop cuts the call
			return
		}
		answer.ServeHTTP(w, r)
	}))
	t.Cleanup(model.Close)
	args := []string{"serve", "-db", db, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0", "-dns", spfZone(t),
		"-model-base-url", model.URL + "/v1", "-grace", "2s"}
	p := startKobana(t, nil, args...)
	addr := p.await(smtpLine, 30*time.Second)[1]
	if err := smtp.SendMail(addr, nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(demoInvoice)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(60 * time.Second):
		t.Fatalf("the model was never asked; output:\n%s", p.output)
	}
	p.signal(syscall.SIGTERM)
	if code, _ := p.wait(30 * time.Second); code != exitOK {
		t.Fatalf("exit %d; output:\n%s", code, p.output)
	}
	email := func() inbox.Email {
		st, err := sqlite.Open(context.Background(), db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		e, ok := invoiceEmail(t, st)
		if !ok {
			t.Fatal("the e-mail sent is not in the store")
		}
		return e
	}
	if e := email(); e.Status != inbox.EmailPending || e.AgentRunID != "" {
		t.Fatalf("after the cut: e-mail %s (%s), agent run %q; want it pending, no run recorded", e.Status, e.StatusDetail, e.AgentRunID)
	}
	mu.Lock()
	hold = false
	mu.Unlock()
	p2 := startKobana(t, nil, args...)
	var e inbox.Email
	if err := testwait.Until(60*time.Second, func() error {
		if e = email(); e.Status == inbox.EmailPending {
			return fmt.Errorf("the e-mail is still pending")
		}
		return nil
	}); err != nil {
		t.Fatalf("%v; output:\n%s", err, p2.output)
	}
	if e.Status != inbox.EmailProcessed {
		t.Errorf("after the restart: e-mail %s (%s), want processed", e.Status, e.StatusDetail)
	}
	p2.signal(syscall.SIGTERM)
	p2.wait(30 * time.Second)
}
