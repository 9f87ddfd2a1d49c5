package pipeline_test

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
)

// A person's replay of a failing delivery is one more attempt of the same
// delivery (its id, marked X-Kobana-Replay-Of), recorded among its attempts;
// its success ends the delivery, so the retry River had scheduled finds it
// delivered and sends nothing. Before, the replay was a second delivery
// under another id, the original kept its error, and its retry fired too:
// the receiver got the event three times under two ids.
func TestAReplayEndsTheDeliveryAndItsScheduledRetryDoesNotFire(t *testing.T) {
	e := newEnv(t, agentAnswering(`{"result": {}}`), options{cfg: func(c *pipeline.Config) {
		c.WebhookSchedule = []time.Duration{1500 * time.Millisecond}
	}})
	wh, _ := e.repo().Webhooks.Get(e.ctx, testWS, "whk_test")
	wh.Events = []string{inbox.EventEmailProcessed}
	e.put(wh)
	e.recv.fail("/hooks", 1)
	jobs, stop := e.q.Subscribe(river.EventKindJobCompleted)
	defer stop()
	e.start()
	m := e.receive(sampleEmail)
	e.settled(m.ID)
	var d inbox.Delivery
	err := testwait.Until(30*time.Second, func() error {
		ds := all(e, e.repo().Deliveries)
		if len(ds) != 1 || len(ds[0].Attempts) != 1 || ds[0].NextAttemptAt.IsZero() {
			return fmt.Errorf("deliveries %+v", ds)
		}
		d = ds[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	client := (&guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}).Client()
	replayed, err := inbox.Replay(e.ctx, e.st, client, testWS, d.ID, "per_ops", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if replayed.ID != d.ID || replayed.Status != inbox.DeliveryDelivered || replayed.Error != "" || !replayed.NextAttemptAt.IsZero() ||
		len(replayed.Attempts) != 2 || !replayed.Attempts[1].Replay || replayed.Attempts[1].RequestedBy != "per_ops" {
		t.Fatalf("the replayed delivery: %+v", replayed)
	}
	// The scheduled retry runs, finds the delivery delivered, and ends.
	select {
	case ev := <-waitKind(jobs, queue.KindWebhook):
		if ev.Job.Attempt < 2 {
			t.Errorf("the webhook job completed on attempt %d: its retry was not the one that ran", ev.Job.Attempt)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the delivery's scheduled retry never ran")
	}
	hooks := e.recv.requests("/hooks")
	if len(hooks) != 2 {
		t.Fatalf("the webhook got %d requests, want 2 (the failed attempt, the replay)", len(hooks))
	}
	for _, h := range hooks {
		if h.Header.Get(inbox.HeaderDelivery) != d.ID {
			t.Errorf("a request with delivery id %q, want %q", h.Header.Get(inbox.HeaderDelivery), d.ID)
		}
	}
	if got := hooks[1].Header.Get(inbox.HeaderReplayOf); got != d.ID {
		t.Errorf("the replay's %s = %q", inbox.HeaderReplayOf, got)
	}
	if ds := all(e, e.repo().Deliveries); len(ds) != 1 || len(ds[0].Attempts) != 2 || ds[0].Status != inbox.DeliveryDelivered {
		t.Errorf("deliveries after the retry's time: %+v", ds)
	}
}

// waitKind passes on the first event of a job of kind.
func waitKind(events <-chan *river.Event, kind string) <-chan *river.Event {
	out := make(chan *river.Event, 1)
	go func() {
		for ev := range events {
			if ev.Job != nil && ev.Job.Kind == kind {
				out <- ev
				return
			}
		}
	}()
	return out
}
