package inboxmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// WebhookListArg filters webhooks_list.
type WebhookListArg struct {
	Page
	Status string `json:"status,omitempty" jsonschema:"active, failing or disabled" enum:"active,failing,disabled"`
}

// WebhookList is a page of webhooks.
type WebhookList struct {
	Webhooks   []inbox.Webhook `json:"webhooks"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// WebhookCreateArg creates a webhook.
type WebhookCreateArg struct {
	URL         string   `json:"url" jsonschema:"the https URL that receives POSTed JSON events" format:"uri" pattern:"^https?://[^\\s]+$" maxLength:"2048"`
	Events      []string `json:"events" jsonschema:"events to send: email.received, email.rejected, email.processed, email.failed, agent_run.failed, workflow_run.failed" minItems:"1" enum:"email.received,email.rejected,email.processed,email.failed,agent_run.failed,workflow_run.failed"`
	Description string   `json:"description,omitempty" maxLength:"500"`
}

// WebhookUpdateArg changes a webhook; absent fields stay as they are.
type WebhookUpdateArg struct {
	ID          string    `json:"id" jsonschema:"the webhook id" pattern:"^whk_[A-Za-z0-9_-]{1,64}$"`
	URL         *string   `json:"url,omitempty" format:"uri" pattern:"^https?://[^\\s]+$" maxLength:"2048"`
	Events      *[]string `json:"events,omitempty" minItems:"1" enum:"email.received,email.rejected,email.processed,email.failed,agent_run.failed,workflow_run.failed"`
	Description *string   `json:"description,omitempty" maxLength:"500"`
	Status      *string   `json:"status,omitempty" jsonschema:"active or disabled" enum:"active,disabled"`
}

// RotateArg names the webhook whose signing secret is replaced, and how
// long the previous one keeps signing beside it.
type RotateArg struct {
	ID           string `json:"id" jsonschema:"the webhook id" pattern:"^whk_[A-Za-z0-9_-]{1,64}$"`
	OverlapHours *int   `json:"overlap_hours,omitempty" jsonschema:"hours the previous secret keeps signing deliveries beside the new one (a second v1 in x-kobana-signature), so the receiver can switch without refusing any; default 24, 0 stops it at once" minimum:"0" maximum:"168"`
}

// DefaultSecretOverlap is how long a rotated-out signing secret keeps
// signing when RotateArg gives no overlap.
const DefaultSecretOverlap = 24 * time.Hour

// WebhookSecret is a webhook with its signing secret, shown only when the
// secret is created or rotated.
type WebhookSecret struct {
	Webhook inbox.Webhook `json:"webhook"`
	// Secret signs deliveries: x-kobana-signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
	// (during a rotation's overlap, a second v1 from the previous secret).
	Secret string `json:"secret"`
}

// DeliveryListArg filters webhooks_deliveries_list.
type DeliveryListArg struct {
	Page
	WebhookID string `json:"webhook_id,omitempty" jsonschema:"only deliveries of this webhook" pattern:"^whk_[A-Za-z0-9_-]{1,64}$"`
	Status    string `json:"status,omitempty" jsonschema:"pending (not attempted yet), delivered or failed (the latest attempt; next_attempt_at says when the next is due)" enum:"pending,delivered,failed"`
	EmailID   string `json:"email_id,omitempty" jsonschema:"only deliveries of events about this e-mail" pattern:"^eml_[A-Za-z0-9_-]{1,64}$"`
	Since     string `json:"since,omitempty" jsonschema:"only deliveries of events recorded at or after this time: an RFC 3339 date-time or a day YYYY-MM-DD (UTC)" maxLength:"40"`
}

// DeliveryList is a page of deliveries.
type DeliveryList struct {
	Deliveries []inbox.Delivery `json:"deliveries"`
	NextCursor string           `json:"next_cursor,omitempty"`
}

// ReplayArg names a delivery to send again.
type ReplayArg struct {
	DeliveryID string `json:"delivery_id" jsonschema:"the delivery to send again (see webhooks_deliveries_list)" pattern:"^dlv_[A-Za-z0-9_-]{1,64}$"`
}

func checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return mcpserver.Errorf("invalid_arguments", "url must be an absolute http(s) URL without credentials, got %q", raw)
	}
	return nil
}

func checkEvents(ev []string) error {
	if len(ev) == 0 {
		return mcpserver.Errorf("invalid_arguments", "events must name at least one of %s", strings.Join(inbox.WebhookEvents(), ", "))
	}
	for _, e := range ev {
		if !inbox.IsWebhookEvent(e) {
			return mcpserver.Errorf("invalid_arguments", "unknown event %q; use %s", e, strings.Join(inbox.WebhookEvents(), ", "))
		}
	}
	return nil
}

func (p *Product) webhooksList(ctx context.Context, c *mcpserver.Caller, in WebhookListArg) (WebhookList, error) {
	q, err := in.Query()
	if err != nil {
		return WebhookList{}, err
	}
	if err := checkEnum("status", in.Status, inbox.WebhookActive, inbox.WebhookFailing, inbox.WebhookDisabled); err != nil {
		return WebhookList{}, err
	}
	q.Status = in.Status
	items, next, err := listPage(ctx, p.repo.Webhooks, c.Workspace, q)
	return WebhookList{Webhooks: items, NextCursor: next}, err
}

func (p *Product) webhooksGet(ctx context.Context, c *mcpserver.Caller, in WebhookIDArg) (inbox.Webhook, error) {
	return p.getWebhook(ctx, c.Workspace, in.ID)
}

func (p *Product) webhooksCreate(ctx context.Context, c *mcpserver.Caller, in WebhookCreateArg) (WebhookSecret, error) {
	if err := checkWebhookURL(in.URL); err != nil {
		return WebhookSecret{}, err
	}
	if err := checkEvents(in.Events); err != nil {
		return WebhookSecret{}, err
	}
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return WebhookSecret{}, err
	}
	if w.Limits.Webhooks > 0 {
		n, err := count(ctx, p.repo.Webhooks, c.Workspace)
		if err != nil {
			return WebhookSecret{}, err
		}
		if n >= w.Limits.Webhooks {
			return WebhookSecret{}, mcpserver.Errorf("limit_reached", "the plan allows %d webhooks and the workspace has %d", w.Limits.Webhooks, n)
		}
	}
	now := p.now().UTC()
	secret := inbox.NewSigningSecret()
	wh := inbox.Webhook{ID: inbox.NewID("whk"), URL: in.URL, Description: in.Description, Events: in.Events, Status: inbox.WebhookActive, SecretHint: inbox.SecretHint(secret), CreatedAt: now, UpdatedAt: now}
	if err := p.opts.Store.SetSecret(ctx, c.Workspace, inbox.WebhookSecretName(wh.ID), secret); err != nil {
		return WebhookSecret{}, err
	}
	if err := p.repo.Webhooks.Put(ctx, c.Workspace, wh); err != nil {
		return WebhookSecret{}, err
	}
	return WebhookSecret{Webhook: wh, Secret: secret}, p.event(ctx, c, inbox.EventWebhookCreated, wh.ID, map[string]any{"webhook_id": wh.ID, "url": wh.URL, "events": wh.Events})
}

func (p *Product) webhooksUpdate(ctx context.Context, c *mcpserver.Caller, in WebhookUpdateArg) (inbox.Webhook, error) {
	wh, err := p.getWebhook(ctx, c.Workspace, in.ID)
	if err != nil {
		return wh, err
	}
	var changed []string
	if in.URL != nil {
		if err := checkWebhookURL(*in.URL); err != nil {
			return wh, err
		}
		wh.URL, changed = *in.URL, append(changed, "url")
	}
	if in.Events != nil {
		if err := checkEvents(*in.Events); err != nil {
			return wh, err
		}
		wh.Events, changed = *in.Events, append(changed, "events")
	}
	if in.Description != nil {
		wh.Description, changed = *in.Description, append(changed, "description")
	}
	if in.Status != nil {
		if *in.Status != inbox.WebhookActive && *in.Status != inbox.WebhookDisabled {
			return wh, mcpserver.Errorf("invalid_arguments", "status must be active or disabled, got %q", *in.Status)
		}
		wh.Status, changed = *in.Status, append(changed, "status")
		wh.FailingSince = time.Time{}
	}
	if len(changed) == 0 {
		return wh, mcpserver.Errorf("invalid_arguments", "nothing to change: pass at least one of url, events, description, status")
	}
	wh.UpdatedAt = p.now().UTC()
	if err := p.repo.Webhooks.Put(ctx, c.Workspace, wh); err != nil {
		return wh, err
	}
	return wh, p.event(ctx, c, inbox.EventWebhookUpdated, wh.ID, map[string]any{"webhook_id": wh.ID, "changed": changed})
}

// checkWebhook is the check of webhooks_delete.
func (p *Product) checkWebhook(ctx context.Context, c *mcpserver.Caller, in WebhookIDArg) error {
	_, err := p.getWebhook(ctx, c.Workspace, in.ID)
	return err
}

// checkRotate is the check of webhooks_rotate_secret.
func (p *Product) checkRotate(ctx context.Context, c *mcpserver.Caller, in RotateArg) error {
	_, err := p.getWebhook(ctx, c.Workspace, in.ID)
	return err
}

func (p *Product) webhooksDelete(ctx context.Context, c *mcpserver.Caller, in WebhookIDArg) (Deleted, error) {
	if err := p.checkWebhook(ctx, c, in); err != nil {
		return Deleted{}, err
	}
	if err := p.repo.Webhooks.Delete(ctx, c.Workspace, in.ID); err != nil {
		return Deleted{}, err
	}
	if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, inbox.WebhookSecretName(in.ID)); err != nil && !errors.Is(err, store.ErrNotFound) {
		return Deleted{}, err
	}
	return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, inbox.EventWebhookDeleted, in.ID, map[string]string{"webhook_id": in.ID})
}

// checkWebhookTest is webhooks_test's check: the webhook exists and this
// server can send to it.
func (p *Product) checkWebhookTest(ctx context.Context, c *mcpserver.Caller, in WebhookIDArg) error {
	wh, err := p.getWebhook(ctx, c.Workspace, in.ID)
	if err != nil {
		return err
	}
	_, err = p.signingSecrets(ctx, c, wh)
	return err
}

func (p *Product) webhooksTest(ctx context.Context, c *mcpserver.Caller, in WebhookIDArg) (inbox.Delivery, error) {
	wh, err := p.getWebhook(ctx, c.Workspace, in.ID)
	if err != nil {
		return inbox.Delivery{}, err
	}
	data, _ := json.Marshal(map[string]string{"message": "This is a test delivery from Kobana.", "webhook_id": wh.ID, "requested_by": c.Person})
	return p.deliver(ctx, c, wh, inbox.EventWebhookTest, data)
}

func (p *Product) webhooksDeliveriesList(ctx context.Context, c *mcpserver.Caller, in DeliveryListArg) (DeliveryList, error) {
	q, err := in.Query()
	if err != nil {
		return DeliveryList{}, err
	}
	if err := checkEnum("status", in.Status, inbox.DeliveryPending, inbox.DeliveryDelivered, inbox.DeliveryFailed); err != nil {
		return DeliveryList{}, err
	}
	q.Parent, q.Status = in.WebhookID, in.Status
	if in.Since != "" {
		if q.Since, err = parseSince("since", in.Since); err != nil {
			return DeliveryList{}, err
		}
	}
	if in.EmailID != "" {
		q.Where = append(q.Where, store.Eq(store.TextField("payload.email_id"), in.EmailID))
	}
	items, next, err := listPage(ctx, p.repo.Deliveries, c.Workspace, q)
	return DeliveryList{Deliveries: items, NextCursor: next}, err
}

// replayTarget is the delivery a replay sends again and its webhook.
func (p *Product) replayTarget(ctx context.Context, c *mcpserver.Caller, in ReplayArg) (inbox.Delivery, inbox.Webhook, error) {
	if err := required("delivery_id", in.DeliveryID); err != nil {
		return inbox.Delivery{}, inbox.Webhook{}, err
	}
	d, err := p.repo.Deliveries.Get(ctx, c.Workspace, in.DeliveryID)
	if err != nil {
		return d, inbox.Webhook{}, err
	}
	wh, err := p.getWebhook(ctx, c.Workspace, d.WebhookID)
	if err != nil {
		return d, wh, mcpserver.Errorf("not_found", "the webhook %s of this delivery no longer exists", d.WebhookID)
	}
	return d, wh, nil
}

// checkReplay is webhooks_deliveries_replay's check.
func (p *Product) checkReplay(ctx context.Context, c *mcpserver.Caller, in ReplayArg) error {
	_, wh, err := p.replayTarget(ctx, c, in)
	if err != nil {
		return err
	}
	_, err = p.signingSecrets(ctx, c, wh)
	return err
}

// webhooksDeliveriesReplay makes one more attempt of a delivery now
// (inbox.Replay).
func (p *Product) webhooksDeliveriesReplay(ctx context.Context, c *mcpserver.Caller, in ReplayArg) (inbox.Delivery, error) {
	if _, _, err := p.replayTarget(ctx, c, in); err != nil {
		return inbox.Delivery{}, err
	}
	if p.opts.HTTPClient == nil {
		return inbox.Delivery{}, mcpserver.Errorf("outbound_unavailable", "this server is not configured to send outbound requests")
	}
	d, err := inbox.Replay(ctx, p.opts.Store, p.opts.HTTPClient, c.Workspace, in.DeliveryID, c.Person, p.now)
	return d, toolError(err)
}

// webhooksRotateSecret gives a webhook a new signing secret; the previous
// one keeps signing beside it for the overlap, as Stripe's rolling does.
func (p *Product) webhooksRotateSecret(ctx context.Context, c *mcpserver.Caller, in RotateArg) (WebhookSecret, error) {
	wh, err := p.getWebhook(ctx, c.Workspace, in.ID)
	if err != nil {
		return WebhookSecret{}, err
	}
	overlap := DefaultSecretOverlap
	if in.OverlapHours != nil {
		overlap = time.Duration(*in.OverlapHours) * time.Hour
	}
	now := p.now().UTC()
	secrets, err := p.opts.Store.RevealSecrets(ctx, c.Workspace)
	if err != nil {
		return WebhookSecret{}, fmt.Errorf("reading webhook secret: %w", err)
	}
	wh.PreviousSecretUntil = time.Time{}
	if old, ok := secrets[inbox.WebhookSecretName(wh.ID)]; ok && overlap > 0 {
		if err := p.opts.Store.SetSecret(ctx, c.Workspace, inbox.WebhookPreviousSecretName(wh.ID), old); err != nil {
			return WebhookSecret{}, err
		}
		wh.PreviousSecretUntil = now.Add(overlap)
	} else if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, inbox.WebhookPreviousSecretName(wh.ID)); err != nil && !errors.Is(err, store.ErrNotFound) {
		return WebhookSecret{}, err
	}
	secret := inbox.NewSigningSecret()
	if err := p.opts.Store.SetSecret(ctx, c.Workspace, inbox.WebhookSecretName(wh.ID), secret); err != nil {
		return WebhookSecret{}, err
	}
	wh.SecretHint, wh.UpdatedAt = inbox.SecretHint(secret), now
	if err := p.repo.Webhooks.Put(ctx, c.Workspace, wh); err != nil {
		return WebhookSecret{}, err
	}
	payload := map[string]any{"webhook_id": wh.ID}
	if !wh.PreviousSecretUntil.IsZero() {
		payload["previous_secret_until"] = wh.PreviousSecretUntil
	}
	return WebhookSecret{Webhook: wh, Secret: secret}, p.event(ctx, c, inbox.EventWebhookSecretRotated, wh.ID, payload)
}

func (p *Product) getWebhook(ctx context.Context, ws, id string) (inbox.Webhook, error) {
	if err := required("id", id); err != nil {
		return inbox.Webhook{}, err
	}
	return p.repo.Webhooks.Get(ctx, ws, id)
}

// signingSecrets are the secrets a webhook's deliveries are signed with
// now, when this server can send.
func (p *Product) signingSecrets(ctx context.Context, c *mcpserver.Caller, wh inbox.Webhook) ([]string, error) {
	if p.opts.HTTPClient == nil {
		return nil, mcpserver.Errorf("outbound_unavailable", "this server is not configured to send outbound requests")
	}
	secrets, err := p.opts.Store.RevealSecrets(ctx, c.Workspace)
	if err != nil {
		return nil, fmt.Errorf("reading webhook secret: %w", err)
	}
	all, ok := wh.SigningSecrets(secrets, p.now())
	if !ok {
		return nil, mcpserver.Errorf("no_secret", "webhook %s has no signing secret; rotate it with webhooks_rotate_secret", wh.ID)
	}
	return all, nil
}

// deliver sends one signed event to a webhook now and records the attempt,
// the webhook's health and an event.
func (p *Product) deliver(ctx context.Context, c *mcpserver.Caller, wh inbox.Webhook, event string, data json.RawMessage) (inbox.Delivery, error) {
	secrets, err := p.signingSecrets(ctx, c, wh)
	if err != nil {
		return inbox.Delivery{}, err
	}
	d := inbox.Delivery{ID: inbox.NewID("dlv"), WebhookID: wh.ID, Event: event, Payload: data, AttemptedAt: p.now().UTC()}
	if err := inbox.Send(ctx, p.opts.HTTPClient, wh.URL, secrets, c.Workspace, &d); err != nil {
		return inbox.Delivery{}, err
	}
	// What was sent is recorded even if the caller has gone away meanwhile.
	ctx = context.WithoutCancel(ctx)
	if err := p.repo.Deliveries.Put(ctx, c.Workspace, d); err != nil {
		return inbox.Delivery{}, err
	}
	wh.Observe(d)
	if err := p.repo.Webhooks.Put(ctx, c.Workspace, wh); err != nil {
		return inbox.Delivery{}, err
	}
	typ := inbox.EventDeliveryDelivered
	if d.Status != inbox.DeliveryDelivered {
		typ = inbox.EventDeliveryFailed
	}
	return d, p.event(ctx, c, typ, wh.ID, map[string]any{"webhook_id": wh.ID, "delivery_id": d.ID, "event": event, "http_status": d.HTTPStatus})
}
