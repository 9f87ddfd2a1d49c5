package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
)

// DefaultWebhookSchedule is the delay before each retry of a failed
// webhook delivery: ten attempts over about a day (23 h 36 min from the
// first to the last, before jitter), quick at first for a receiver that
// blinked, then hours apart for one that is down. It sits between Svix's
// (eight attempts: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h) and
// Stripe's (exponential backoff for up to three days).
var DefaultWebhookSchedule = []time.Duration{
	5 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}

// DefaultWebhookJitter is how much each retry delay may vary: ±20 %.
const DefaultWebhookJitter = 0.2

// record writes an event to the workspace's log and, in the same
// transaction, its webhook deliveries (Notify).
func (p *Pipeline) record(ctx context.Context, tx store.Tx, ws string, ev inbox.SystemEvent) error {
	if err := p.repo.In(tx).Events.Create(ctx, ws, ev); err != nil {
		return err
	}
	return p.Notify(ctx, tx, ws, ev)
}

// Notify fans an event out to the webhooks of its workspace subscribed to
// it: for each, a pending delivery record and the job that delivers it,
// both in tx, the transaction that records the event — so an event that
// commits is delivered, and one that does not is never sent. The intake
// calls it for email.received; the stages for the events they record.
func (p *Pipeline) Notify(ctx context.Context, tx store.Tx, ws string, ev inbox.SystemEvent) error {
	if !inbox.IsWebhookEvent(ev.Type) {
		return nil
	}
	repo := p.repo.In(tx)
	var hooks []inbox.Webhook
	err := repo.Webhooks.Each(ctx, ws, store.Query{}, func(wh inbox.Webhook) error {
		if wh.Subscribes(ev.Type) {
			hooks = append(hooks, wh)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finding the webhooks of event %s: %w", ev.Type, err)
	}
	for _, wh := range hooks {
		d := inbox.Delivery{ID: stableID("dlv", ws, ev.ID, wh.ID), WebhookID: wh.ID, Event: ev.Type, Payload: ev.Payload,
			Status: inbox.DeliveryPending, CreatedAt: ev.CreatedAt}
		if err := repo.Deliveries.Create(ctx, ws, d); err != nil {
			return err
		}
		if _, err := p.cfg.Queue.InsertTx(ctx, tx, queue.WebhookArgs{Workspace: ws, DeliveryID: d.ID}, nil); err != nil {
			return err
		}
	}
	return nil
}

// webhookWorker makes one attempt of one delivery per job run; River runs
// it again on the schedule (NextRetry) while attempts fail.
type webhookWorker struct {
	river.WorkerDefaults[queue.WebhookArgs]
	p *Pipeline
}

// Timeout bounds an attempt: the delivery's own timeout and the time to
// record it.
func (w *webhookWorker) Timeout(*river.Job[queue.WebhookArgs]) time.Duration {
	return inbox.DeliveryTimeout + 30*time.Second
}

// NextRetry is when a failed attempt is tried again: the schedule's delay
// after the attempt's start, with a jitter fixed by the delivery and the
// attempt, so the time the delivery record announces is the time River
// runs it.
func (w *webhookWorker) NextRetry(job *river.Job[queue.WebhookArgs]) time.Time {
	at := time.Now()
	if job.AttemptedAt != nil {
		at = *job.AttemptedAt
	}
	return at.Add(w.p.retryDelay(job.Args.DeliveryID, job.Attempt))
}

// retryDelay is the delay after attempt n (from 1) of a delivery fails.
func (p *Pipeline) retryDelay(delivery string, n int) time.Duration {
	i := min(max(n, 1), len(p.schedule)) - 1
	if i < 0 {
		return time.Minute
	}
	return p.jittered(p.schedule[i], delivery, n)
}

// jittered is d varied by up to WebhookJitter, by an amount fixed by key
// and n, so that what failed together is not retried together and the
// time announced is the time it runs.
func (p *Pipeline) jittered(d time.Duration, key string, n int) time.Duration {
	if j := p.cfg.WebhookJitter; j > 0 {
		h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", key, n))
		u := float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53) // [0, 1)
		d = time.Duration(float64(d) * (1 + j*(2*u-1)))
	}
	return d
}

// DefaultAgentRetrySchedule is the delay before each new run of an
// e-mail's agent after one that failed for a cause that may pass: eight
// more runs over about 16 hours (15 h 51 min before jitter), minutes apart
// for a blip, hours apart for an outage or a quota that resets.
var DefaultAgentRetrySchedule = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour,
}

// maxAttempts is how many attempts a delivery gets.
func (p *Pipeline) maxAttempts() int { return min(len(p.schedule)+1, queue.WebhookMaxAttempts) }

// errRetry says an attempt failed and another is scheduled.
type errRetry struct {
	delivery string
	attempt  int
	reason   string
	next     time.Time
}

func (e *errRetry) Error() string {
	return fmt.Sprintf("delivery %s, attempt %d: %s; next attempt at %s", e.delivery, e.attempt, e.reason, e.next.UTC().Format(time.RFC3339))
}

// Work makes one attempt: it sends the signed delivery through the
// guarded client and records the attempt, the webhook's health and an
// event in one transaction — with the job's completion when the delivery
// succeeded or has had its attempts. A failure that will be retried
// returns an error after the record commits, and River runs the job again
// at NextAttemptAt. Receivers deduplicate on the delivery id: a crash after
// an attempt was sent and before it was recorded sends it again.
func (w *webhookWorker) Work(ctx context.Context, job *river.Job[queue.WebhookArgs]) error {
	p, a := w.p, job.Args
	d, err := p.repo.Deliveries.Get(ctx, a.Workspace, a.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the delivery was deleted
	}
	if err != nil {
		return err
	}
	if d.Status == inbox.DeliveryDelivered || (d.Status == inbox.DeliveryFailed && d.NextAttemptAt.IsZero()) {
		return nil // done already
	}
	wh, err := p.repo.Webhooks.Get(ctx, a.Workspace, d.WebhookID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return w.giveUp(ctx, job, d, "the webhook "+d.WebhookID+" was deleted; the delivery is not attempted")
	case err != nil:
		return err
	case wh.Status == inbox.WebhookDisabled:
		return w.giveUp(ctx, job, d, "the webhook "+wh.ID+" is disabled; the delivery is not attempted (replay it once the webhook is active)")
	}
	secrets, err := p.cfg.Store.RevealSecrets(ctx, a.Workspace)
	if err != nil {
		return fmt.Errorf("reading the signing secret of webhook %s: %w", wh.ID, err)
	}
	signing, ok := wh.SigningSecrets(secrets, p.now())
	if !ok {
		return w.giveUp(ctx, job, d, "the webhook "+wh.ID+" has no signing secret; rotate it (webhooks_rotate_secret), then replay the delivery")
	}
	// One attempt at a time: a person's replay of this delivery may be
	// under way.
	release, err := inbox.ClaimDelivery(ctx, p.cfg.Store, a.Workspace, d.ID, p.now())
	if errors.Is(err, inbox.ErrDeliveryBusy) {
		return river.JobSnooze(inbox.DeliveryTimeout)
	}
	if err != nil {
		return err
	}
	released := false // with the attempt's record
	defer func() {
		if !released {
			release(ctx)
		}
	}()
	if d, err = p.repo.Deliveries.Get(ctx, a.Workspace, a.DeliveryID); err != nil {
		return err // read again under the claim: a replay may have delivered it
	}
	if d.Status == inbox.DeliveryDelivered {
		return p.cfg.Store.WithTx(ctx, func(tx store.Tx) error { return queue.CompleteTx(ctx, tx, job) })
	}
	attempt := d
	attempt.AttemptedAt = p.now()
	attempt.ReplayOf = ""
	if err := inbox.Send(ctx, p.webhooks, wh.URL, signing, a.Workspace, &attempt); err != nil {
		return w.giveUp(ctx, job, d, err.Error())
	}
	hit("webhook.sent")
	d.Record(attempt, "")
	n := len(d.Attempts)
	d.NextAttemptAt = time.Time{}
	var retry *errRetry
	if d.Status != inbox.DeliveryDelivered && job.Attempt < p.maxAttempts() {
		d.NextAttemptAt = w.NextRetry(job).UTC()
		retry = &errRetry{delivery: d.ID, attempt: n, reason: d.Error, next: d.NextAttemptAt}
	}
	// The attempt was made: record it even if the job is being stopped.
	ctx = context.WithoutCancel(ctx)
	err = p.commit(ctx, func(tx store.Tx) error {
		if err := queue.HeldTx(ctx, tx, job); err != nil {
			return err
		}
		if err := w.observe(ctx, tx, a.Workspace, d, attempt); err != nil {
			return err
		}
		// The claim ends with the attempt's record: one write fewer than
		// dropping it after.
		if err := inbox.ReleaseDelivery(ctx, tx, a.Workspace, d.ID); err != nil {
			return err
		}
		if retry != nil {
			return nil
		}
		return queue.CompleteTx(ctx, tx, job)
	})
	if err != nil {
		return fmt.Errorf("recording attempt %d of delivery %s: %w", n, d.ID, err)
	}
	released = true
	p.observer().DeliveryAttempt(a.Workspace, d, d.Attempts[len(d.Attempts)-1])
	if retry != nil {
		return retry
	}
	return nil
}

// observe writes a delivery after an attempt, the webhook's health and the
// attempt's event, in tx.
func (w *webhookWorker) observe(ctx context.Context, tx store.Tx, ws string, d, attempt inbox.Delivery) error {
	repo := w.p.repo.In(tx)
	if err := repo.Deliveries.Put(ctx, ws, d); err != nil {
		return err
	}
	wh, err := repo.Webhooks.Get(ctx, ws, d.WebhookID)
	if err == nil {
		was := wh
		wh.Observe(attempt)
		if healthChanged(was, wh) {
			if err := repo.Webhooks.Put(ctx, ws, wh); err != nil {
				return err
			}
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	typ := inbox.EventDeliveryDelivered
	if attempt.Status != inbox.DeliveryDelivered {
		typ = inbox.EventDeliveryFailed
	}
	payload := map[string]any{"webhook_id": d.WebhookID, "delivery_id": d.ID, "event": d.Event, "attempt": len(d.Attempts),
		"http_status": attempt.HTTPStatus, "error": attempt.Error}
	if !d.NextAttemptAt.IsZero() {
		payload["next_attempt_at"] = d.NextAttemptAt
	}
	ev, err := inbox.NewEvent(typ, inbox.ActorSystem, d.WebhookID, payload, attempt.AttemptedAt)
	if err != nil {
		return err
	}
	return repo.Events.Create(ctx, ws, ev)
}

// healthChanged says a webhook's health after an attempt is worth writing:
// its status or failing time changed, or its last delivery time moved on
// by a second or more. Every delivery of a webhook writes to the one
// record, so writing it for each of a busy webhook's deliveries would make
// them all wait on each other; last_delivery_at is kept to the second.
func healthChanged(was, now inbox.Webhook) bool {
	return was.Status != now.Status || !was.FailingSince.Equal(now.FailingSince) || now.LastDelivery.Sub(was.LastDelivery) >= time.Second
}

// giveUp records a delivery that will not be attempted (again), with why.
func (w *webhookWorker) giveUp(ctx context.Context, job *river.Job[queue.WebhookArgs], d inbox.Delivery, why string) error {
	p := w.p
	d.Status, d.Error, d.NextAttemptAt = inbox.DeliveryFailed, why, time.Time{}
	return p.commit(ctx, func(tx store.Tx) error {
		if err := p.repo.In(tx).Deliveries.Put(ctx, job.Args.Workspace, d); err != nil {
			return err
		}
		return queue.CompleteTx(ctx, tx, job)
	})
}
