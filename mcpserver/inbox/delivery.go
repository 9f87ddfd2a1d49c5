package inbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// Record adds the outcome of an attempt (a Delivery filled by Send) to d:
// the attempt joins Attempts, and d's top-level outcome becomes the
// attempt's — so a later success clears an earlier attempt's error. A
// successful attempt ends d: nothing more is scheduled. replayBy, when not
// empty, is the person who asked for the attempt (a replay).
func (d *Delivery) Record(attempt Delivery, replayBy string) DeliveryAttempt {
	a := DeliveryAttempt{Attempt: len(d.Attempts) + 1, AttemptedAt: attempt.AttemptedAt, Status: attempt.Status,
		HTTPStatus: attempt.HTTPStatus, Error: attempt.Error, ResponseBody: attempt.ResponseBody, DurationMS: attempt.DurationMS,
		Replay: replayBy != "", RequestedBy: replayBy}
	d.Attempts = append(d.Attempts, a)
	d.Status, d.HTTPStatus, d.Error, d.ResponseBody, d.DurationMS, d.AttemptedAt =
		a.Status, a.HTTPStatus, a.Error, a.ResponseBody, a.DurationMS, a.AttemptedAt
	if a.Status == DeliveryDelivered {
		d.NextAttemptAt = time.Time{}
	}
	return a
}

// KindDeliveryClaim is the record that says an attempt of a delivery is
// being made (ClaimDelivery).
const KindDeliveryClaim = "delivery_claim"

// ErrDeliveryBusy reports a delivery another attempt is being made of.
var ErrDeliveryBusy = errors.New("an attempt of this delivery is being made")

// claimLifetime is how long a claim holds when its holder never releases
// it (its process stopped): a little longer than an attempt may take.
const claimLifetime = DeliveryTimeout + 30*time.Second

// ClaimDelivery makes the caller the one making an attempt of delivery id
// now — the pipeline's scheduled retry or a person's replay, never both at
// once, so a receiver never gets the two together — or reports
// ErrDeliveryBusy. The claim is a record created only if absent, which
// holds across replicas; release drops it. A claim older than an attempt
// can take (its holder stopped) is taken over.
func ClaimDelivery(ctx context.Context, records store.Records, ws, id string, now time.Time) (release func(context.Context), err error) {
	claim := store.Record{Workspace: ws, Kind: KindDeliveryClaim, ID: id, Created: now.UTC(), Data: []byte(`{}`)}
	err = records.CreateRecord(ctx, claim)
	if errors.Is(err, store.ErrConflict) {
		held, gerr := records.GetRecord(ctx, ws, KindDeliveryClaim, id)
		switch {
		case gerr == nil && now.Sub(held.Created) < claimLifetime:
			return nil, fmt.Errorf("delivery %s: %w", id, ErrDeliveryBusy)
		case gerr != nil && !errors.Is(gerr, store.ErrNotFound):
			return nil, gerr
		}
		// Stale (or released meanwhile): take it over.
		if derr := records.DeleteRecord(ctx, ws, KindDeliveryClaim, id); derr != nil && !errors.Is(derr, store.ErrNotFound) {
			return nil, derr
		}
		err = records.CreateRecord(ctx, claim)
		if errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("delivery %s: %w", id, ErrDeliveryBusy)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("claiming delivery %s: %w", id, err)
	}
	return func(ctx context.Context) {
		ReleaseDelivery(context.WithoutCancel(ctx), records, ws, id)
	}, nil
}

// ReleaseDelivery drops the claim ClaimDelivery took on delivery id of
// workspace ws, through records: a transaction's, to release it in the one
// that records the attempt (a claim already gone is no error).
func ReleaseDelivery(ctx context.Context, records store.Records, ws, id string) error {
	err := records.DeleteRecord(ctx, ws, KindDeliveryClaim, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// ReplayStore is what Replay reads and writes.
type ReplayStore interface {
	store.Records
	RevealSecrets(ctx context.Context, workspace string) (map[string]string, error)
}

// Replay makes one more attempt of delivery id of workspace ws now, asked
// for by person: the same delivery — its id in the body and HeaderDelivery,
// so a receiver that has it deduplicates it — marked with HeaderReplayOf,
// signed with the webhook's current secrets through client (the
// SSRF-guarded one). The attempt is recorded among the delivery's
// (Record), with the webhook's health and a delivery event. A success ends
// the delivery: its scheduled retry finds it delivered and sends nothing;
// an attempt under way is never doubled (ClaimDelivery): the replay is
// then refused with the *Error delivery_in_progress. A delivery or webhook
// that is gone is an *Error not_found; a webhook without a secret, no_secret.
func Replay(ctx context.Context, st ReplayStore, client *http.Client, ws, id, person string, now func() time.Time) (Delivery, error) {
	repo := NewRepo(st)
	d, err := repo.Deliveries.Get(ctx, ws, id)
	if err != nil {
		return d, err
	}
	wh, err := repo.Webhooks.Get(ctx, ws, d.WebhookID)
	if errors.Is(err, store.ErrNotFound) {
		return d, &Error{Code: "not_found", Message: "the webhook " + d.WebhookID + " of this delivery no longer exists"}
	}
	if err != nil {
		return d, err
	}
	secrets, err := st.RevealSecrets(ctx, ws)
	if err != nil {
		return d, fmt.Errorf("reading the signing secret of webhook %s: %w", wh.ID, err)
	}
	signing, ok := wh.SigningSecrets(secrets, now())
	if !ok {
		return d, &Error{Code: "no_secret", Message: "webhook " + wh.ID + " has no signing secret; rotate it with webhooks_rotate_secret"}
	}
	release, err := ClaimDelivery(ctx, st, ws, d.ID, now())
	if errors.Is(err, ErrDeliveryBusy) {
		return d, &Error{Code: "delivery_in_progress", Message: "an attempt of delivery " + d.ID + " is being made right now; look at it again in a moment (webhooks_deliveries_list)"}
	}
	if err != nil {
		return d, err
	}
	defer release(ctx)
	if d, err = repo.Deliveries.Get(ctx, ws, id); err != nil { // read again under the claim
		return d, err
	}
	attempt := d
	attempt.AttemptedAt, attempt.ReplayOf = now().UTC(), d.ID
	if err := Send(ctx, client, wh.URL, signing, ws, &attempt); err != nil {
		return d, err
	}
	// What was sent is recorded even if the caller has gone away meanwhile.
	ctx = context.WithoutCancel(ctx)
	a := d.Record(attempt, person)
	if err := repo.Deliveries.Put(ctx, ws, d); err != nil {
		return d, err
	}
	wh.Observe(attempt)
	if err := repo.Webhooks.Put(ctx, ws, wh); err != nil {
		return d, err
	}
	typ := EventDeliveryDelivered
	if a.Status != DeliveryDelivered {
		typ = EventDeliveryFailed
	}
	ev, err := NewEvent(typ, PersonActor(person), wh.ID, map[string]any{"webhook_id": wh.ID, "delivery_id": d.ID, "event": d.Event,
		"attempt": a.Attempt, "http_status": a.HTTPStatus, "replay": true}, a.AttemptedAt)
	if err != nil {
		return d, err
	}
	return d, repo.Events.Put(ctx, ws, ev)
}
