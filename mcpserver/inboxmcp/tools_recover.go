package inboxmcp

import (
	"context"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// MaxRecover is how many failed deliveries one webhooks_deliveries_recover
// call replays, oldest first; Recovered.More says when more are left.
const MaxRecover = 100

// RecoverArg names the webhook whose failed deliveries are sent again, and
// since when.
type RecoverArg struct {
	WebhookID string `json:"webhook_id" jsonschema:"the webhook whose failed deliveries are sent again" pattern:"^whk_[A-Za-z0-9_-]{1,64}$"`
	Since     string `json:"since" jsonschema:"the failed deliveries of events recorded at or after this time: an RFC 3339 date-time (2026-11-18T09:00:00Z) or a day YYYY-MM-DD (from its start, UTC)" maxLength:"40"`
}

// RecoveredDelivery is the outcome of one delivery's replay.
type RecoveredDelivery struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	HTTPStatus int    `json:"http_status,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Recovered is what webhooks_deliveries_recover sent again.
type Recovered struct {
	WebhookID  string              `json:"webhook_id"`
	Since      time.Time           `json:"since"`
	Delivered  int                 `json:"delivered"`
	Failed     int                 `json:"failed"`
	Deliveries []RecoveredDelivery `json:"deliveries"`
	// More says failed deliveries since then are left beyond the MaxRecover
	// this call replayed: call it again.
	More bool `json:"more"`
}

// parseSince reads a time written as RFC 3339 or as a day YYYY-MM-DD.
func parseSince(field, s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	t, err := checkDate(s)
	if err != nil {
		return time.Time{}, mcpserver.Errorf("invalid_arguments", "%s must be an RFC 3339 date-time (2026-11-18T09:00:00Z) or a day YYYY-MM-DD; got %q", field, s)
	}
	return t, nil
}

// recoverTargets are the failed deliveries a recovery replays, oldest
// first (at most MaxRecover), the webhook, the time they start at, and
// whether more are left.
func (p *Product) recoverTargets(ctx context.Context, c *mcpserver.Caller, in RecoverArg) ([]inbox.Delivery, inbox.Webhook, time.Time, bool, error) {
	if err := required("webhook_id", in.WebhookID); err != nil {
		return nil, inbox.Webhook{}, time.Time{}, false, err
	}
	if err := required("since", in.Since); err != nil {
		return nil, inbox.Webhook{}, time.Time{}, false, err
	}
	since, err := parseSince("since", in.Since)
	if err != nil {
		return nil, inbox.Webhook{}, time.Time{}, false, err
	}
	wh, err := p.getWebhook(ctx, c.Workspace, in.WebhookID)
	if err != nil {
		return nil, wh, since, false, err
	}
	q := store.Query{Parent: wh.ID, Status: inbox.DeliveryFailed, Since: since, Order: store.Order{Asc: true}, Limit: MaxRecover + 1}
	page, err := p.repo.Deliveries.List(ctx, c.Workspace, q)
	if err != nil {
		return nil, wh, since, false, err
	}
	ds, more := page.Items, false
	if len(ds) > MaxRecover {
		ds, more = ds[:MaxRecover], true
	}
	return ds, wh, since, more, nil
}

// checkRecover is webhooks_deliveries_recover's check: the webhook exists,
// this server can send to it, and it has failed deliveries since then.
func (p *Product) checkRecover(ctx context.Context, c *mcpserver.Caller, in RecoverArg) error {
	ds, wh, since, _, err := p.recoverTargets(ctx, c, in)
	if err != nil {
		return err
	}
	if _, err := p.signingSecrets(ctx, c, wh); err != nil {
		return err
	}
	if len(ds) == 0 {
		return mcpserver.Errorf("nothing_to_recover", "webhook %s has no failed delivery since %s", wh.ID, since.Format(time.RFC3339))
	}
	return nil
}

// webhooksDeliveriesRecover replays each failed delivery of a webhook
// since a time, oldest first, as webhooks_deliveries_replay does one.
func (p *Product) webhooksDeliveriesRecover(ctx context.Context, c *mcpserver.Caller, in RecoverArg) (Recovered, error) {
	if err := p.checkRecover(ctx, c, in); err != nil {
		return Recovered{}, err
	}
	ds, wh, since, more, err := p.recoverTargets(ctx, c, in)
	if err != nil {
		return Recovered{}, err
	}
	out := Recovered{WebhookID: wh.ID, Since: since, More: more, Deliveries: make([]RecoveredDelivery, 0, len(ds))}
	for _, d := range ds {
		got, err := inbox.Replay(ctx, p.opts.Store, p.opts.HTTPClient, c.Workspace, d.ID, c.Person, p.now)
		r := RecoveredDelivery{ID: d.ID, Status: got.Status, HTTPStatus: got.HTTPStatus, Error: got.Error}
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			// One delivery that cannot be replayed now (another attempt is
			// being made) does not stop the others.
			r.Status, r.Error = inbox.DeliveryFailed, toolError(err).Error()
		}
		if r.Status == inbox.DeliveryDelivered {
			out.Delivered++
		} else {
			out.Failed++
		}
		out.Deliveries = append(out.Deliveries, r)
	}
	return out, nil
}
