package pipeline_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
)

func rateLimited() inbox.AgentResult {
	return inbox.AgentResult{Status: inbox.RunFailed, Cause: inbox.CauseRateLimited, Error: "the provider limited the rate of requests (429)", Transient: true}
}

// schedule sets the agent retry schedule.
func schedule(ds ...time.Duration) func(*pipeline.Config) {
	return func(c *pipeline.Config) { c.AgentRetrySchedule = ds }
}

// waiting waits until the e-mail waits for its agent to run again, and
// returns it.
func (e *env) waiting(id string, retry int) inbox.Email {
	e.t.Helper()
	var m inbox.Email
	err := testwait.Until(30*time.Second, func() error {
		var err error
		if m, err = e.repo().Emails.Get(e.ctx, testWS, id); err != nil {
			return err
		}
		run, err := e.repo().AgentRuns.Get(e.ctx, testWS, m.AgentRunID)
		if err != nil || m.NextAttemptAt.IsZero() || run.Retry != retry {
			return fmt.Errorf("e-mail %s: %s %q, next attempt %v", id, m.Status, m.StatusDetail, m.NextAttemptAt)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// TestATransientFailureWaitsAndRunsAgain: a run that fails for a cause
// that may pass (here a rate limit) leaves the e-mail pending, saying when
// its agent runs again; every run is recorded; the e-mail is processed
// once the model answers.
func TestATransientFailureWaitsAndRunsAgain(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testTransientFailure(t, options{start: true}) })
	t.Run("postgres", func(t *testing.T) { testTransientFailure(t, options{start: true, pg: true}) })
}

func testTransientFailure(t *testing.T, opt options) {
	a := agentAnswering(`{"result": {"ok": true}}`)
	a.results = []inbox.AgentResult{rateLimited(), rateLimited()}
	opt.cfg = schedule(300*time.Millisecond, 300*time.Millisecond, time.Hour)
	e := newEnv(t, a, opt)
	m := e.receive(sampleEmail)
	w := e.waiting(m.ID, 0)
	if w.Status != inbox.EmailPending || !strings.HasPrefix(w.StatusDetail, "waiting: rate_limited; the agent runs again at ") || !strings.HasSuffix(w.StatusDetail, "(attempt 2 of 4)") {
		t.Errorf("the waiting e-mail: %s %q", w.Status, w.StatusDetail)
	}
	got := e.settled(m.ID)
	if got.Status != inbox.EmailProcessed || !got.NextAttemptAt.IsZero() {
		t.Fatalf("e-mail %s (%s), next attempt %v", got.Status, got.StatusDetail, got.NextAttemptAt)
	}
	runs := all(e, e.repo().AgentRuns)
	if len(runs) != 3 {
		t.Fatalf("%d agent runs, want 3 (two rate-limited, one answer)", len(runs))
	}
	slices.SortFunc(runs, func(x, y inbox.AgentRun) int { return x.Retry - y.Retry })
	for i, r := range runs {
		wantStatus := inbox.RunFailed
		if i == 2 {
			wantStatus = inbox.RunSucceeded
		}
		if r.Retry != i || r.Status != wantStatus || (i < 2) == r.NextAttemptAt.IsZero() {
			t.Errorf("run %d: retry %d %s, next attempt %v", i, r.Retry, r.Status, r.NextAttemptAt)
		}
	}
	if got.AgentRunID != runs[2].ID {
		t.Errorf("the e-mail points at %s, not its last run %s", got.AgentRunID, runs[2].ID)
	}
	n := 0
	for _, ev := range events(e) {
		if ev == inbox.EventAgentRunRetryScheduled {
			n++
		}
	}
	if n != 2 || slices.Contains(events(e), inbox.EventEmailFailed) {
		t.Errorf("events %v: want two retries scheduled and no failure", events(e))
	}
}

// TestATransientFailureGivesUpAfterTheSchedule: once the schedule is used
// up, the e-mail fails, saying how often it was tried; a cause that would
// recur fails it at once, whatever the schedule.
func TestATransientFailureGivesUpAfterTheSchedule(t *testing.T) {
	a := &scripted{result: inbox.AgentResult{Status: inbox.RunFailed, Cause: inbox.CauseModelTimeout, Error: "the model did not answer within the agent's timeout of 2m0s"}}
	e := newEnv(t, a, options{start: true, cfg: schedule(200 * time.Millisecond)})
	m := e.receive(sampleEmail)
	got := e.settled(m.ID)
	if got.Status != inbox.EmailFailed || got.StatusDetail != string(inbox.CauseModelTimeout) {
		t.Fatalf("e-mail %s (%s)", got.Status, got.StatusDetail)
	}
	runs := all(e, e.repo().AgentRuns)
	if len(runs) != 2 || !strings.Contains(runs[0].Error, "the e-mail was tried 2 times on the retry schedule and is not tried again") {
		t.Fatalf("runs %+v", runs)
	}

	p := &scripted{result: inbox.AgentResult{Status: inbox.RunFailed, Cause: inbox.CauseContextLength, Error: "too long"}}
	e = newEnv(t, p, options{start: true, cfg: schedule(200 * time.Millisecond)})
	m = e.receive(sampleEmail)
	if got := e.settled(m.ID); got.Status != inbox.EmailFailed || len(all(e, e.repo().AgentRuns)) != 1 {
		t.Errorf("a permanent failure: %s, %d runs", got.Status, len(all(e, e.repo().AgentRuns)))
	}
}

// TestAReprocessSupersedesAScheduledRetry: reprocessing a waiting e-mail
// runs its agent now, and the retry that was scheduled does nothing when
// its time comes.
func TestAReprocessSupersedesAScheduledRetry(t *testing.T) {
	a := agentAnswering(`{"result": {"ok": true}}`)
	a.results = []inbox.AgentResult{rateLimited()}
	e := newEnv(t, a, options{start: true, cfg: schedule(time.Second)})
	done, cancel := e.q.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	m := e.receive(sampleEmail)
	e.waiting(m.ID, 0)
	if _, err := e.p.Processor().Reprocess(e.ctx, inbox.ReprocessRequest{Workspace: testWS, EmailID: m.ID, Actor: inbox.PersonActor("per_test")}); err != nil {
		t.Fatal(err)
	}
	if got := e.settled(m.ID); got.Status != inbox.EmailProcessed {
		t.Fatalf("e-mail %s (%s)", got.Status, got.StatusDetail)
	}
	// The scheduled retry's job completes without running the agent.
	deadline := time.After(30 * time.Second)
	for retried := false; !retried; {
		select {
		case ev := <-done:
			retried = ev.Job.Kind == queue.KindAgent && strings.Contains(string(ev.Job.EncodedArgs), `"retry":1`)
		case <-deadline:
			t.Fatal("the scheduled retry never ran")
		}
	}
	if n := a.called(); n != 2 {
		t.Errorf("the agent ran %d times, want 2 (the rate-limited run and the reprocess)", n)
	}
	if got, _ := e.repo().Emails.Get(e.ctx, testWS, m.ID); got.Status != inbox.EmailProcessed {
		t.Errorf("after the superseded retry the e-mail is %s", got.Status)
	}
}
