package inboxmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// WebhookListArg filters webhooks_list.
type WebhookListArg struct {
	Page
	Status string `json:"status,omitempty" jsonschema:"active, failing or disabled"`
}

// WebhookList is a page of webhooks.
type WebhookList struct {
	Webhooks   []inbox.Webhook `json:"webhooks"`
	NextBefore string          `json:"next_before,omitempty"`
}

// WebhookCreateArg creates a webhook.
type WebhookCreateArg struct {
	URL         string   `json:"url" jsonschema:"the https URL that receives POSTed JSON events"`
	Events      []string `json:"events" jsonschema:"events to send: email.received, email.processed, email.failed, agent_run.failed, workflow_run.failed"`
	Description string   `json:"description,omitempty"`
}

// WebhookUpdateArg changes a webhook; absent fields stay as they are.
type WebhookUpdateArg struct {
	ID          string    `json:"id" jsonschema:"the webhook id"`
	URL         *string   `json:"url,omitempty"`
	Events      *[]string `json:"events,omitempty"`
	Description *string   `json:"description,omitempty"`
	Status      *string   `json:"status,omitempty" jsonschema:"active or disabled"`
}

// WebhookSecret is a webhook with its signing secret, shown only when the
// secret is created or rotated.
type WebhookSecret struct {
	Webhook inbox.Webhook `json:"webhook"`
	// Secret signs deliveries: x-kobana-signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>.
	Secret string `json:"secret"`
}

// DeliveryListArg filters webhooks_deliveries_list.
type DeliveryListArg struct {
	Page
	WebhookID string `json:"webhook_id,omitempty" jsonschema:"only deliveries of this webhook"`
	Status    string `json:"status,omitempty" jsonschema:"delivered or failed"`
}

// DeliveryList is a page of deliveries.
type DeliveryList struct {
	Deliveries []inbox.Delivery `json:"deliveries"`
	NextBefore string           `json:"next_before,omitempty"`
}

// ReplayArg names a delivery to send again.
type ReplayArg struct {
	DeliveryID string `json:"delivery_id" jsonschema:"the delivery to send again (see webhooks_deliveries_list)"`
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

func (p *Product) webhookTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_list", Title: "List webhooks",
			Description: "Lists outbound webhooks, most recent first: URL, events, status (active, failing, disabled) and since when a failing one fails.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in WebhookListArg) (WebhookList, error) {
				q, err := in.query()
				if err != nil {
					return WebhookList{}, err
				}
				q.Status = in.Status
				items, next, err := inbox.List[inbox.Webhook](ctx, p.repo, c.Workspace, q)
				out := WebhookList{Webhooks: items}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_get", Title: "Get webhook",
			Description: "Returns one webhook: URL, events, status and the last characters of its signing secret (never the secret).",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (inbox.Webhook, error) {
				return p.getWebhook(ctx, c.Workspace, in.ID)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_create", Title: "Create webhook",
			Description: "Creates an outbound webhook that receives the chosen events as signed JSON POSTs. Returns the signing secret once: tell the user to store it, it cannot be read again (rotate it with webhooks_rotate_secret).",
			Access:      mcpserver.Write},
			func(ctx context.Context, c *mcpserver.Caller, in WebhookCreateArg) (WebhookSecret, error) {
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
					existing, _, err := inbox.List[inbox.Webhook](ctx, p.repo, c.Workspace, store.Query{Limit: 1000})
					if err != nil {
						return WebhookSecret{}, err
					}
					if len(existing) >= w.Limits.Webhooks {
						return WebhookSecret{}, mcpserver.Errorf("limit_reached", "the plan allows %d webhooks and the workspace has %d", w.Limits.Webhooks, len(existing))
					}
				}
				now := p.now().UTC()
				secret := inbox.NewSigningSecret()
				wh := inbox.Webhook{ID: inbox.NewID("whk"), URL: in.URL, Description: in.Description, Events: in.Events, Status: "active", SecretHint: inbox.SecretHint(secret), CreatedAt: now, UpdatedAt: now}
				if err := p.opts.Store.SetSecret(ctx, c.Workspace, inbox.WebhookSecretName(wh.ID), secret); err != nil {
					return WebhookSecret{}, err
				}
				if err := p.repo.Put(ctx, c.Workspace, wh); err != nil {
					return WebhookSecret{}, err
				}
				return WebhookSecret{Webhook: wh, Secret: secret}, p.event(ctx, c, inbox.EventWebhookCreated, wh.ID, map[string]any{"webhook_id": wh.ID, "url": wh.URL, "events": wh.Events})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_update", Title: "Update webhook",
			Description: "Changes a webhook's URL, events, description or status (active/disabled); fields left out stay as they are.",
			Access:      mcpserver.Write, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in WebhookUpdateArg) (inbox.Webhook, error) {
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
					if *in.Status != "active" && *in.Status != "disabled" {
						return wh, mcpserver.Errorf("invalid_arguments", "status must be active or disabled")
					}
					wh.Status, changed = *in.Status, append(changed, "status")
					wh.FailingSince = time.Time{}
				}
				if len(changed) == 0 {
					return wh, mcpserver.Errorf("invalid_arguments", "nothing to change: pass at least one of url, events, description, status")
				}
				wh.UpdatedAt = p.now().UTC()
				if err := p.repo.Put(ctx, c.Workspace, wh); err != nil {
					return wh, err
				}
				return wh, p.event(ctx, c, inbox.EventWebhookUpdated, wh.ID, map[string]any{"webhook_id": wh.ID, "changed": changed})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_delete", Title: "Delete webhook",
			Description: "Deletes a webhook and its signing secret; its delivery history is kept. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Deleted, error) {
				if _, err := p.getWebhook(ctx, c.Workspace, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := inbox.Delete[inbox.Webhook](ctx, p.repo, c.Workspace, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, inbox.WebhookSecretName(in.ID)); err != nil && !errors.Is(err, store.ErrNotFound) {
					return Deleted{}, err
				}
				return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, inbox.EventWebhookDeleted, in.ID, map[string]string{"webhook_id": in.ID})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_test", Title: "Test webhook",
			Description: "Sends a signed webhook.test event to the webhook's URL now and returns the delivery: HTTP status, response and duration. This calls a system outside Kobana; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (inbox.Delivery, error) {
				wh, err := p.getWebhook(ctx, c.Workspace, in.ID)
				if err != nil {
					return inbox.Delivery{}, err
				}
				data, _ := json.Marshal(map[string]string{"message": "This is a test delivery from Kobana.", "webhook_id": wh.ID, "requested_by": c.Person})
				return p.deliver(ctx, c, wh, inbox.EventWebhookTest, data, "")
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_deliveries_list", Title: "List webhook deliveries",
			Description: "Lists delivery attempts, most recent first, optionally of one webhook or in one status (delivered, failed), with HTTP status, error and response excerpt.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in DeliveryListArg) (DeliveryList, error) {
				q, err := in.query()
				if err != nil {
					return DeliveryList{}, err
				}
				q.Parent, q.Status = in.WebhookID, in.Status
				items, next, err := inbox.List[inbox.Delivery](ctx, p.repo, c.Workspace, q)
				out := DeliveryList{Deliveries: items}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_deliveries_replay", Title: "Replay delivery",
			Description: "Sends a past delivery's event again to its webhook, signed with the current secret, and returns the new delivery. This calls a system outside Kobana; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			func(ctx context.Context, c *mcpserver.Caller, in ReplayArg) (inbox.Delivery, error) {
				var d inbox.Delivery
				if err := required("delivery_id", in.DeliveryID); err != nil {
					return d, err
				}
				if err := load(ctx, p.repo, c.Workspace, in.DeliveryID, &d); err != nil {
					return d, err
				}
				wh, err := p.getWebhook(ctx, c.Workspace, d.WebhookID)
				if err != nil {
					return inbox.Delivery{}, mcpserver.Errorf("not_found", "the webhook %s of this delivery no longer exists", d.WebhookID)
				}
				return p.deliver(ctx, c, wh, d.Event, d.Payload, d.ID)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_rotate_secret", Title: "Rotate webhook secret",
			Description: "Replaces a webhook's signing secret and returns the new one once; deliveries are signed with it from now on, so the receiver must be updated. The user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (WebhookSecret, error) {
				wh, err := p.getWebhook(ctx, c.Workspace, in.ID)
				if err != nil {
					return WebhookSecret{}, err
				}
				secret := inbox.NewSigningSecret()
				if err := p.opts.Store.SetSecret(ctx, c.Workspace, inbox.WebhookSecretName(wh.ID), secret); err != nil {
					return WebhookSecret{}, err
				}
				wh.SecretHint, wh.UpdatedAt = inbox.SecretHint(secret), p.now().UTC()
				if err := p.repo.Put(ctx, c.Workspace, wh); err != nil {
					return WebhookSecret{}, err
				}
				return WebhookSecret{Webhook: wh, Secret: secret}, p.event(ctx, c, inbox.EventWebhookSecretRotated, wh.ID, map[string]string{"webhook_id": wh.ID})
			}),
	}
}

func (p *Product) getWebhook(ctx context.Context, ws, id string) (inbox.Webhook, error) {
	var wh inbox.Webhook
	if err := required("id", id); err != nil {
		return wh, err
	}
	return wh, load(ctx, p.repo, ws, id, &wh)
}

// deliver sends one signed event to a webhook now and records the attempt,
// the webhook's health and an event.
func (p *Product) deliver(ctx context.Context, c *mcpserver.Caller, wh inbox.Webhook, event string, data json.RawMessage, replayOf string) (inbox.Delivery, error) {
	if p.opts.HTTPClient == nil {
		return inbox.Delivery{}, mcpserver.Errorf("outbound_unavailable", "this server is not configured to send outbound requests")
	}
	secrets, err := p.opts.Store.RevealSecrets(ctx, c.Workspace)
	if err != nil {
		return inbox.Delivery{}, fmt.Errorf("reading webhook secret: %w", err)
	}
	secret, ok := secrets[inbox.WebhookSecretName(wh.ID)]
	if !ok {
		return inbox.Delivery{}, mcpserver.Errorf("no_secret", "webhook %s has no signing secret; rotate it with webhooks_rotate_secret", wh.ID)
	}
	d := inbox.Delivery{ID: inbox.NewID("dlv"), WebhookID: wh.ID, Event: event, Payload: data, ReplayOf: replayOf, AttemptedAt: p.now().UTC()}
	if err := inbox.Send(ctx, p.opts.HTTPClient, wh.URL, secret, c.Workspace, &d); err != nil {
		return inbox.Delivery{}, err
	}
	// What was sent is recorded even if the caller has gone away meanwhile.
	ctx = context.WithoutCancel(ctx)
	if err := p.repo.Put(ctx, c.Workspace, d); err != nil {
		return inbox.Delivery{}, err
	}
	wh.Observe(d)
	if err := p.repo.Put(ctx, c.Workspace, wh); err != nil {
		return inbox.Delivery{}, err
	}
	typ := inbox.EventDeliveryDelivered
	if d.Status != inbox.DeliveryDelivered {
		typ = inbox.EventDeliveryFailed
	}
	return d, p.event(ctx, c, typ, wh.ID, map[string]any{"webhook_id": wh.ID, "delivery_id": d.ID, "event": event, "http_status": d.HTTPStatus, "replay_of": replayOf})
}
