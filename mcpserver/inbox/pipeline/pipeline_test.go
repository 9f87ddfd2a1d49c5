package pipeline_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

func TestAnEmailRunsThroughEveryStage(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testEveryStage(t, options{start: true}) })
	t.Run("postgres", func(t *testing.T) { testEveryStage(t, options{start: true, pg: true}) })
}

func testEveryStage(t *testing.T, opt options) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), opt)
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	if got.Status != inbox.EmailProcessed {
		t.Fatalf("e-mail status %q (%s), want processed", got.Status, got.StatusDetail)
	}

	runs := all(e, e.repo().AgentRuns)
	if len(runs) != 1 {
		t.Fatalf("%d agent runs, want 1", len(runs))
	}
	run := runs[0]
	if run.Status != inbox.RunSucceeded || run.EmailID != m.ID || run.AgentID != testAgent || run.Model != "gpt-4.1-mini" {
		t.Errorf("agent run %+v", run)
	}
	if run.Tokens != testTokens || run.CostUSD != inbox.Cost("gpt-4.1-mini", testTokens) || run.CostUSD == 0 {
		t.Errorf("agent run tokens %+v cost %v, want %+v and the catalog's price", run.Tokens, run.CostUSD, testTokens)
	}
	wrs := all(e, e.repo().WorkflowRuns)
	if len(wrs) != 1 {
		t.Fatalf("%d workflow runs, want 1", len(wrs))
	}
	wr := wrs[0]
	if wr.Status != runrecord.RunSucceeded || wr.AgentRunID != run.ID || run.WorkflowRunID != wr.ID || got.AgentRunID != run.ID || got.WorkflowRunID != wr.ID {
		t.Errorf("workflow run %s (%s) of agent run %s; e-mail points at %s/%s", wr.ID, wr.Status, wr.AgentRunID, got.AgentRunID, got.WorkflowRunID)
	}
	if wr.InFlight != nil || wr.FinishedAt.IsZero() {
		t.Errorf("finished run has in_flight %v, finished_at %v", wr.InFlight, wr.FinishedAt)
	}
	if len(wr.Steps) != 3 {
		t.Fatalf("steps %+v", wr.Steps)
	}

	// Each step reached the receiver once, with every kobana.* fact taken
	// from the records, the token, and the attachment's bytes.
	pay := e.recv.requests("/payables")
	if len(pay) != 1 {
		t.Fatalf("the receiver got %d payables, want 1", len(pay))
	}
	if h := pay[0].Header.Get("Authorization"); h != "Bearer "+testToken {
		t.Errorf("Authorization %q", h)
	}
	var facts map[string]string
	if err := json.Unmarshal(pay[0].Body, &facts); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"env": "sandbox", "app_url": "https://kobana.test", "workspace_id": testWS, "workspace_slug": "test",
		"workspace_external_id": "ext-42", "inbox_id": testInbox, "inbox_email": testAddress, "email_id": m.ID,
		"email_message_id": m.MessageID, "agent_id": testAgent, "agent_run_id": run.ID, "workflow_run_id": wr.ID}
	for k, v := range want {
		if facts[k] != v {
			t.Errorf("kobana.%s = %q, want %q", k, facts[k], v)
		}
	}
	if _, err := time.Parse(time.RFC3339, facts["now"]); err != nil {
		t.Errorf("kobana.now %q: %v", facts["now"], err)
	}
	att := e.recv.requests("/payables/pay_1/attachments")
	if len(att) != 1 || att[0].Files["file"] != attachmentSHA(t, sampleEmail, 0) {
		t.Errorf("attachment uploads %+v, want one with the e-mail's attachment 0", att)
	}
	if n := len(e.recv.requests("/notify")); n != 1 {
		t.Errorf("%d notifications, want 1", n)
	}
	if e.indexed.Load() != 1 {
		t.Errorf("the run loaded %d part indexes, want the one stored with the e-mail", e.indexed.Load())
	}

	// No record holds a secret value.
	for _, kind := range []string{inbox.KindWorkflowRun, inbox.KindAgentRun, inbox.KindEvent, inbox.KindDelivery, inbox.KindEmail} {
		recs, err := e.st.ListRecords(e.ctx, testWS, kind, store.Query{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			for _, secret := range []string{testToken, e.recv.URL("/payables"), testHookSec} {
				if strings.Contains(string(r.Data), secret) {
					t.Errorf("%s %s holds a secret value %q", kind, r.ID, secret)
				}
			}
		}
	}

	// Webhooks: email.received and email.processed, each delivered once,
	// signed.
	e.waitDeliveries(2)
	for _, d := range all(e, e.repo().Deliveries) {
		if d.Status != inbox.DeliveryDelivered || len(d.Attempts) != 1 || !d.NextAttemptAt.IsZero() {
			t.Errorf("delivery %s of %s: %s, %d attempts", d.ID, d.Event, d.Status, len(d.Attempts))
		}
	}
	hooks := e.recv.requests("/hooks")
	if len(hooks) != 2 {
		t.Fatalf("the webhook got %d requests, want 2", len(hooks))
	}
	var processed json.RawMessage
	for _, h := range hooks {
		if err := inbox.VerifySignature(testHookSec, h.Header.Get(inbox.HeaderSignature), h.Body, time.Now(), time.Minute); err != nil {
			t.Errorf("delivery %s: %v", h.Header.Get(inbox.HeaderDelivery), err)
		}
		if h.Header.Get(inbox.HeaderEvent) == inbox.EventEmailProcessed {
			var body inbox.DeliveryBody
			json.Unmarshal(h.Body, &body)
			processed = body.Data
		}
	}
	var data struct {
		EmailID       string `json:"email_id"`
		WorkflowRunID string `json:"workflow_run_id"`
		Result        struct {
			Supplier string `json:"supplier"`
		} `json:"result"`
	}
	json.Unmarshal(processed, &data)
	if data.EmailID != m.ID || data.WorkflowRunID != wr.ID || data.Result.Supplier != "ACME" {
		t.Errorf("email.processed delivered %s", processed)
	}
	for _, ev := range []string{inbox.EventEmailReceived, inbox.EventEmailProcessed, inbox.EventDeliveryDelivered} {
		if !slices.Contains(events(e), ev) {
			t.Errorf("events %v lack %s", events(e), ev)
		}
	}

	// Usage is computed from these records.
	u, err := inbox.UsageOf(e.ctx, e.repo(), testWS, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if u.EmailsReceived != 1 || u.EmailsProcessed != 1 || u.AgentRuns != 1 || u.WorkflowRuns != 1 || u.Tokens != testTokens || u.CostUSD != run.CostUSD {
		t.Errorf("usage %+v", u)
	}
}

// waitDeliveries waits until n deliveries have left pending and retrying.
func (e *env) waitDeliveries(n int) {
	e.t.Helper()
	err := testwait.Until(30*time.Second, func() error {
		ds := all(e, e.repo().Deliveries)
		done := 0
		for _, d := range ds {
			if d.Status == inbox.DeliveryDelivered || (d.Status == inbox.DeliveryFailed && d.NextAttemptAt.IsZero()) {
				done++
			}
		}
		if done < n {
			return errorf("%d of %d deliveries done", done, n)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func attachmentSHA(t *testing.T, raw string, i int) string {
	t.Helper()
	m, err := eml.New(strings.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Open(i)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	io.Copy(h, r)
	return hex.EncodeToString(h.Sum(nil))
}

func TestAnAnswerWithoutWorkflowProcessesTheEmail(t *testing.T) {
	e := newEnv(t, agentAnswering(`{"result": {"category": "not an invoice"}}`), options{start: true})
	m := e.receive(sampleEmail)
	if got := e.settled(m.ID); got.Status != inbox.EmailProcessed || got.WorkflowRunID != "" {
		t.Fatalf("e-mail %s (%s), workflow run %q", got.Status, got.StatusDetail, got.WorkflowRunID)
	}
	if n := len(all(e, e.repo().WorkflowRuns)); n != 0 {
		t.Errorf("%d workflow runs, want none", n)
	}
	if !slices.Contains(events(e), inbox.EventEmailProcessed) {
		t.Errorf("events %v", events(e))
	}
}

func TestAFailedAgentRunFailsTheEmail(t *testing.T) {
	a := &scripted{result: inbox.AgentResult{Status: inbox.RunFailed, Cause: inbox.CauseRefusal, Error: "the model declined"}}
	e := newEnv(t, a, options{start: true})
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	if got.Status != inbox.EmailFailed || got.StatusDetail != string(inbox.CauseRefusal) {
		t.Fatalf("e-mail %s (%s), want failed (refusal)", got.Status, got.StatusDetail)
	}
	runs := all(e, e.repo().AgentRuns)
	if len(runs) != 1 || runs[0].Cause != inbox.CauseRefusal || runs[0].Error != "the model declined" {
		t.Fatalf("agent runs %+v", runs)
	}
	evs := events(e)
	if !slices.Contains(evs, inbox.EventAgentRunFailed) || !slices.Contains(evs, inbox.EventEmailFailed) {
		t.Errorf("events %v", evs)
	}
}

func TestAnAgentThatCannotRunIsRetried(t *testing.T) {
	a := agentAnswering(`{"result": {}}`)
	a.errs = 1
	e := newEnv(t, a, options{start: true})
	m := e.receive(sampleEmail)
	if got := e.settled(m.ID); got.Status != inbox.EmailProcessed {
		t.Fatalf("e-mail %s (%s)", got.Status, got.StatusDetail)
	}
	if n := a.called(); n != 2 {
		t.Errorf("the agent was called %d times, want 2 (one failure, one retry)", n)
	}
	if n := len(all(e, e.repo().AgentRuns)); n != 1 {
		t.Errorf("%d agent runs, want 1", n)
	}
}

func TestAnInboxWithoutAgentFailsTheEmailWithTheReason(t *testing.T) {
	a := agentAnswering(`{"result": {}}`)
	e := newEnv(t, a, options{})
	ib, err := e.repo().Inboxes.Get(e.ctx, testWS, testInbox)
	if err != nil {
		t.Fatal(err)
	}
	ib.AgentID = ""
	e.put(ib)
	e.start()
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	if got.Status != inbox.EmailFailed || !strings.HasPrefix(got.StatusDetail, inbox.CodeNoAgent+":") {
		t.Fatalf("e-mail %s (%s)", got.Status, got.StatusDetail)
	}
	if a.called() != 0 {
		t.Error("an agent ran")
	}
}

func TestAFailedStepIsNeverSentAgain(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{})
	e.recv.fail("/payables", 1)
	e.start()
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	if got.Status != inbox.EmailFailed || got.StatusDetail != string(inbox.CauseWorkflowFailed) {
		t.Fatalf("e-mail %s (%s), want failed (workflow_failed)", got.Status, got.StatusDetail)
	}
	wr := all(e, e.repo().WorkflowRuns)[0]
	steps := wr.Steps
	if wr.Status != runrecord.RunFailed || len(steps) != 3 || steps[0].State != runrecord.Failed || steps[1].State != runrecord.Skipped || steps[2].State != runrecord.Skipped {
		t.Errorf("workflow run %s, steps %+v", wr.Status, wr.Steps)
	}
	if n := len(e.recv.requests("/payables")); n != 1 {
		t.Errorf("the receiver got step 0 %d times, want 1", n)
	}
	evs := events(e)
	for _, ev := range []string{inbox.EventWorkflowRunFailed, inbox.EventAgentRunFailed, inbox.EventEmailFailed} {
		if !slices.Contains(evs, ev) {
			t.Errorf("events %v lack %s", evs, ev)
		}
	}
}

func TestAWorkflowThatDoesNotValidateSendsNothing(t *testing.T) {
	doc := `{"result": {}, "workflow": [{"type": "request", "method": "post", "url": "${{secrets.ERP_URL}}/payables"}]}`
	e := newEnv(t, agentAnswering(doc), options{start: true})
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	if got.Status != inbox.EmailFailed {
		t.Fatalf("e-mail %s", got.Status)
	}
	wr := all(e, e.repo().WorkflowRuns)[0]
	if wr.Status != runrecord.RunFailed || !strings.Contains(wr.Error, "did not validate") || !strings.Contains(string(wr.Diagnostics), "POST") {
		t.Errorf("workflow run %s: %q %s", wr.Status, wr.Error, wr.Diagnostics)
	}
	if n := len(e.recv.requests("/payables")); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

func TestARunLeftRunningIsRecordedInterruptedAndNotResent(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{})
	m := e.receive(sampleEmail)
	// The state a server leaves when it stops while step 1 is being sent:
	// step 0 recorded, step 1 marked as being sent, the job to run again.
	one := 1
	e.leaveRunning(m, "left", &one, `[{"index":0,"state":"succeeded","label":"create the payable"},
			{"index":1,"label":"attach the invoice","state":"sending","request":{"method":"POST","url":"[redacted secrets.ERP_URL]/payables/pay_1/attachments"}}]`)
	e.start()
	got := e.settled(m.ID)
	if got.Status != inbox.EmailFailed || got.StatusDetail != string(inbox.CauseInterrupted) {
		t.Fatalf("e-mail %s (%s), want failed (interrupted)", got.Status, got.StatusDetail)
	}
	wr, err := e.repo().WorkflowRuns.Get(e.ctx, testWS, "wrun_left")
	if err != nil {
		t.Fatal(err)
	}
	steps := wr.Steps
	if wr.Status != runrecord.RunInterrupted || wr.InFlight != nil || len(steps) != 3 {
		t.Fatalf("run %s in flight %v, steps %+v", wr.Status, wr.InFlight, wr.Steps)
	}
	if steps[0].State != runrecord.Succeeded || steps[1].State != runrecord.Unknown || steps[1].Reason != runrecord.ReasonInterrupted ||
		steps[1].Request == nil || steps[1].Request.Method != "POST" || steps[2].State != runrecord.Skipped || steps[2].Label != "notify" {
		t.Errorf("steps %+v", steps)
	}
	if !strings.Contains(wr.Error, "step 1 of 3") {
		t.Errorf("error %q", wr.Error)
	}
	for _, path := range []string{"/payables", "/payables/pay_1/attachments", "/notify"} {
		if n := len(e.recv.requests(path)); n != 0 {
			t.Errorf("%s was sent %d times after the interruption", path, n)
		}
	}
	ar, _ := e.repo().AgentRuns.Get(e.ctx, testWS, "arun_left")
	if ar.Status != inbox.RunFailed || ar.Cause != inbox.CauseInterrupted {
		t.Errorf("agent run %s (%s)", ar.Status, ar.Cause)
	}
}

func TestAFailingWebhookIsRetriedOnItsScheduleAndEveryAttemptRecorded(t *testing.T) {
	e := newEnv(t, agentAnswering(`{"result": {}}`), options{})
	wh, _ := e.repo().Webhooks.Get(e.ctx, testWS, "whk_test")
	wh.Events = []string{inbox.EventEmailProcessed}
	e.put(wh)
	e.recv.fail("/hooks", 2)
	e.start()
	m := e.receive(sampleEmail)
	e.settled(m.ID)
	e.waitDeliveries(1)
	ds := all(e, e.repo().Deliveries)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries", len(ds))
	}
	d := ds[0]
	if d.Status != inbox.DeliveryDelivered || len(d.Attempts) != 3 || !d.NextAttemptAt.IsZero() {
		t.Fatalf("delivery %s, %d attempts, next %v", d.Status, len(d.Attempts), d.NextAttemptAt)
	}
	for i, a := range d.Attempts {
		want := inbox.DeliveryFailed
		if i == 2 {
			want = inbox.DeliveryDelivered
		}
		if a.Attempt != i+1 || a.Status != want {
			t.Errorf("attempt %d: %+v", i, a)
		}
		// The schedule counts from River's start of the attempt, a few
		// milliseconds before the recorded send.
		if i > 0 && a.AttemptedAt.Sub(d.Attempts[i-1].AttemptedAt) < 80*time.Millisecond {
			t.Errorf("attempt %d came %v after the one before; the schedule says 100ms", i+1, a.AttemptedAt.Sub(d.Attempts[i-1].AttemptedAt))
		}
	}
	hooks := e.recv.requests("/hooks")
	if len(hooks) != 3 {
		t.Fatalf("%d requests to the webhook", len(hooks))
	}
	for _, h := range hooks {
		if h.Header.Get(inbox.HeaderDelivery) != d.ID {
			t.Errorf("attempt sent with delivery id %q, want %q on every attempt", h.Header.Get(inbox.HeaderDelivery), d.ID)
		}
	}
	wh, _ = e.repo().Webhooks.Get(e.ctx, testWS, "whk_test")
	if wh.Status != inbox.WebhookActive || !wh.FailingSince.IsZero() {
		t.Errorf("webhook %s failing since %v after a success", wh.Status, wh.FailingSince)
	}
	var failed, delivered int
	for _, ev := range events(e) {
		switch ev {
		case inbox.EventDeliveryFailed:
			failed++
		case inbox.EventDeliveryDelivered:
			delivered++
		}
	}
	if failed != 2 || delivered != 1 {
		t.Errorf("%d failed and %d delivered attempt events, want 2 and 1", failed, delivered)
	}
}

func TestAWebhookThatKeepsFailingIsGivenUpAfterItsAttempts(t *testing.T) {
	e := newEnv(t, agentAnswering(`{"result": {}}`), options{})
	wh, _ := e.repo().Webhooks.Get(e.ctx, testWS, "whk_test")
	wh.Events = []string{inbox.EventEmailProcessed}
	e.put(wh)
	e.recv.fail("/hooks", 100)
	e.start()
	m := e.receive(sampleEmail)
	e.settled(m.ID)
	e.waitDeliveries(1)
	d := all(e, e.repo().Deliveries)[0]
	if d.Status != inbox.DeliveryFailed || len(d.Attempts) != 4 || !d.NextAttemptAt.IsZero() || d.HTTPStatus != 500 {
		t.Fatalf("delivery %s, %d attempts (schedule of 3 retries), next %v, HTTP %d", d.Status, len(d.Attempts), d.NextAttemptAt, d.HTTPStatus)
	}
	wh, _ = e.repo().Webhooks.Get(e.ctx, testWS, "whk_test")
	if wh.Status != inbox.WebhookFailing || !wh.FailingSince.Equal(d.Attempts[0].AttemptedAt) {
		t.Errorf("webhook %s failing since %v, want failing since the first attempt %v", wh.Status, wh.FailingSince, d.Attempts[0].AttemptedAt)
	}
	if n := len(e.recv.requests("/hooks")); n != 4 {
		t.Errorf("%d requests to the webhook, want 4", n)
	}
}

func TestReprocessingEnqueuesTheStagesAgain(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{start: true})
	m := e.receive(sampleEmail)
	first := e.settled(m.ID)
	out, err := e.p.Processor().Reprocess(e.ctx, inbox.ReprocessRequest{Workspace: testWS, EmailID: m.ID, Actor: inbox.PersonActor("per_test")})
	if err != nil || out.Status != inbox.ReprocessQueued {
		t.Fatalf("reprocess: %+v, %v", out, err)
	}
	err = testwait.Until(30*time.Second, func() error {
		got, err := e.repo().Emails.Get(e.ctx, testWS, m.ID)
		if err != nil {
			return err
		}
		if got.AgentRunID == first.AgentRunID || got.Status == inbox.EmailPending {
			return errorf("e-mail still on its first run or pending (%s)", got.Status)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := e.repo().Emails.Get(e.ctx, testWS, m.ID)
	run, _ := e.repo().AgentRuns.Get(e.ctx, testWS, got.AgentRunID)
	if got.Status != inbox.EmailProcessed || run.ReprocessOf != first.AgentRunID || got.WorkflowRunID == first.WorkflowRunID {
		t.Errorf("after reprocessing: %s, run %s reprocesses %q (first %s), workflow run %s", got.Status, run.ID, run.ReprocessOf, first.AgentRunID, got.WorkflowRunID)
	}
	if n := len(e.recv.requests("/payables")); n != 2 {
		t.Errorf("the workflow ran %d times, want 2 (the first run and the reprocess)", n)
	}
	if !slices.Contains(events(e), inbox.EventEmailReprocessed) {
		t.Errorf("events %v", events(e))
	}
	if err := e.p.Processor().Check(e.ctx, inbox.ReprocessRequest{Workspace: testWS, EmailID: "eml_missing"}); err == nil {
		t.Error("Check accepted an e-mail that does not exist")
	}
}

func TestRetentionPurgesOldMessagesAndAReprocessedAttachmentStepFails(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testRetention(t, options{start: true}) })
	t.Run("postgres", func(t *testing.T) { testRetention(t, options{start: true, pg: true}) })
}

func testRetention(t *testing.T, opt options) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), opt)
	old := e.receive(sampleEmail)
	e.settled(old.ID)
	recent := e.receive(uniqueEmail(2))
	e.settled(recent.ID)
	// The first message was kept 40 days ago; the workspace keeps 30.
	e.receivedAgo(old.ID, 40*24*time.Hour)
	if _, err := e.q.Insert(e.ctx, queue.RetentionArgs{Workspace: testWS}, nil); err != nil {
		t.Fatal(err)
	}
	err := testwait.Until(30*time.Second, func() error {
		got, err := e.repo().Emails.Get(e.ctx, testWS, old.ID)
		if err != nil {
			return err
		}
		if !got.Purged {
			return errorf("e-mail %s not purged yet", old.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipelineRaw(e).OpenMessage(e.ctx, testWS, old.ID); !errors.Is(err, inbox.ErrPurged) {
		t.Errorf("the purged message can still be opened: %v", err)
	}
	if got, _ := e.repo().Emails.Get(e.ctx, testWS, recent.ID); got.Purged {
		t.Error("a recent message was purged")
	}
	if !slices.Contains(events(e), inbox.EventEmailPurged) {
		t.Errorf("events %v", events(e))
	}

	uploads := len(e.recv.requests("/payables/pay_1/attachments"))
	if _, err := e.p.Processor().Reprocess(e.ctx, inbox.ReprocessRequest{Workspace: testWS, EmailID: old.ID}); err != nil {
		t.Fatal(err)
	}
	var wr inbox.WorkflowRun
	err = testwait.Until(30*time.Second, func() error {
		got, err := e.repo().Emails.Get(e.ctx, testWS, old.ID)
		if err != nil {
			return err
		}
		if got.Status == inbox.EmailPending || got.WorkflowRunID == "" {
			return errorf("not reprocessed yet")
		}
		wr, err = e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
		if err == nil && wr.Status == runrecord.RunSucceeded {
			return errorf("still the first run")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	steps := wr.Steps
	if len(steps) != 3 || steps[1].State != runrecord.Failed || !strings.Contains(steps[1].Error, "purged by retention") {
		t.Fatalf("reprocessed run %s: steps %+v", wr.Status, wr.Steps)
	}
	if n := len(e.recv.requests("/payables/pay_1/attachments")); n != uploads {
		t.Errorf("the attachment step of the purged e-mail was sent")
	}
}

func TestScriptedAgentAnswersWithItsDocumentAndSaysWhatItIs(t *testing.T) {
	s := pipeline.ScriptedAgent{Output: json.RawMessage(`{"result": {}}`)}
	res, err := s.RunAgent(t.Context(), inbox.AgentInput{})
	if err != nil || res.Status != inbox.RunSucceeded || res.Model != pipeline.ScriptedModel || string(res.Output) != `{"result": {}}` {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := (pipeline.ScriptedAgent{}).RunAgent(t.Context(), inbox.AgentInput{}); err == nil {
		t.Error("a scripted agent without output answered")
	}
}

func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	e := newEnv(t, agentAnswering(`{"result": {}}`), options{})
	good := pipeline.Config{Store: e.st, Queue: e.q, Raw: e.dir, Agents: e.agent}
	for name, change := range map[string]func(*pipeline.Config){
		"no store":        func(c *pipeline.Config) { c.Store = nil },
		"no queue":        func(c *pipeline.Config) { c.Queue = nil },
		"no raw messages": func(c *pipeline.Config) { c.Raw = nil },
		"no agent":        func(c *pipeline.Config) { c.Agents = nil },
		"bad schedule":    func(c *pipeline.Config) { c.WebhookSchedule = []time.Duration{time.Second, 0} },
		"bad jitter":      func(c *pipeline.Config) { c.WebhookJitter = 1.5 },
	} {
		cfg := good
		change(&cfg)
		if _, err := pipeline.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestARunLeftRunningAfterItsLastStepIsRecordedAsItEnded(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{})
	m := e.receive(sampleEmail)
	// The server stopped after the last step's outcome was recorded and
	// before the final commit.
	e.leaveRunning(m, "done", nil, `[{"index":0,"state":"succeeded"},{"index":1,"state":"succeeded"},{"index":2,"state":"succeeded"}]`)
	e.start()
	got := e.settled(m.ID)
	wr, _ := e.repo().WorkflowRuns.Get(e.ctx, testWS, "wrun_done")
	if got.Status != inbox.EmailProcessed || wr.Status != runrecord.RunSucceeded || wr.Error != "" {
		t.Fatalf("e-mail %s (%s), run %s %q", got.Status, got.StatusDetail, wr.Status, wr.Error)
	}
	for _, path := range []string{"/payables", "/payables/pay_1/attachments", "/notify"} {
		if n := len(e.recv.requests(path)); n != 0 {
			t.Errorf("%s was sent %d times", path, n)
		}
	}
}

func TestARejectedEmailIsNeverProcessed(t *testing.T) {
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{})
	m := e.receive(sampleEmail)
	m.Reject(&inbox.Rejection{Reason: inbox.RejectSender, Detail: "the sender is not authenticated"})
	e.put(m)
	err := e.p.Processor().Check(e.ctx, inbox.ReprocessRequest{Workspace: testWS, EmailID: m.ID})
	var de *inbox.Error
	if !errors.As(err, &de) || de.Code != pipeline.CodeEmailRejected {
		t.Fatalf("Check of a rejected e-mail: %v, want %s", err, pipeline.CodeEmailRejected)
	}
	if _, err := e.p.Processor().Reprocess(e.ctx, inbox.ReprocessRequest{Workspace: testWS, EmailID: m.ID}); !errors.As(err, &de) {
		t.Fatalf("Reprocess of a rejected e-mail: %v", err)
	}
	// Its agent job (inserted before it was rejected, here) runs no agent.
	e.start()
	err = testwait.Until(10*time.Second, func() error {
		var left int
		if err := e.st.(interface{ SQLDB() *sql.DB }).SQLDB().QueryRowContext(e.ctx, `SELECT count(*) FROM river_job WHERE kind = 'inbox.agent' AND state <> 'completed'`).Scan(&left); err != nil {
			return err
		}
		if left > 0 {
			return errorf("%d agent jobs left", left)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.agent.called() != 0 || len(all(e, e.repo().AgentRuns)) != 0 {
		t.Errorf("an agent ran on a rejected e-mail")
	}
}
