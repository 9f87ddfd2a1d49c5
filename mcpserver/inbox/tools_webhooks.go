package inbox

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// WebhookEvents are the events a webhook can subscribe to.
var WebhookEvents = []string{"email.received", "email.processed", "email.failed", "agent_run.failed", "workflow_run.failed"}

// WebhookListArg filters webhooks_list.
type WebhookListArg struct {
	Page
	Status string `json:"status,omitempty" jsonschema:"active, failing or disabled"`
}

// WebhookList is a page of webhooks.
type WebhookList struct {
	Webhooks   []Webhook `json:"webhooks"`
	NextBefore string    `json:"next_before,omitempty"`
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
	Webhook Webhook `json:"webhook"`
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
	Deliveries []Delivery `json:"deliveries"`
	NextBefore string     `json:"next_before,omitempty"`
}

// ReplayArg names a delivery to send again.
type ReplayArg struct {
	DeliveryID string `json:"delivery_id" jsonschema:"the delivery to send again (see webhooks_deliveries_list)"`
}

func webhookSecretName(id string) string { return "kobana:webhook:" + id }

// userSecretName reports whether a secret name belongs to the user (and is
// reachable as ${{secrets.NAME}}) rather than to the platform.
func userSecretName(name string) bool { return !strings.Contains(name, ":") }

func checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return mcpserver.Errorf("invalid_arguments", "url must be an absolute http(s) URL without credentials, got %q", raw)
	}
	return nil
}

func checkEvents(ev []string) error {
	if len(ev) == 0 {
		return mcpserver.Errorf("invalid_arguments", "events must name at least one of %s", strings.Join(WebhookEvents, ", "))
	}
	for _, e := range ev {
		if !slices.Contains(WebhookEvents, e) {
			return mcpserver.Errorf("invalid_arguments", "unknown event %q; use %s", e, strings.Join(WebhookEvents, ", "))
		}
	}
	return nil
}

func newSigningSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
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
				items, next, err := list[Webhook](ctx, p.repo, c.Workspace, KindWebhook, q)
				out := WebhookList{Webhooks: items}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_get", Title: "Get webhook",
			Description: "Returns one webhook: URL, events, status and the last characters of its signing secret (never the secret).",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Webhook, error) {
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
					existing, _, err := list[Webhook](ctx, p.repo, c.Workspace, KindWebhook, store.Query{Limit: 1000})
					if err != nil {
						return WebhookSecret{}, err
					}
					if len(existing) >= w.Limits.Webhooks {
						return WebhookSecret{}, mcpserver.Errorf("limit_reached", "the plan allows %d webhooks and the workspace has %d", w.Limits.Webhooks, len(existing))
					}
				}
				now := p.now().UTC()
				secret := newSigningSecret()
				wh := Webhook{ID: newID("whk"), URL: in.URL, Description: in.Description, Events: in.Events, Status: "active", SecretHint: "…" + secret[len(secret)-4:], CreatedAt: now, UpdatedAt: now}
				if err := p.opts.Store.SetSecret(ctx, c.Workspace, webhookSecretName(wh.ID), secret); err != nil {
					return WebhookSecret{}, err
				}
				if err := p.putWebhook(ctx, c.Workspace, wh); err != nil {
					return WebhookSecret{}, err
				}
				return WebhookSecret{Webhook: wh, Secret: secret}, p.event(ctx, c, "webhook.created", wh.ID, map[string]any{"webhook_id": wh.ID, "url": wh.URL, "events": wh.Events})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_update", Title: "Update webhook",
			Description: "Changes a webhook's URL, events, description or status (active/disabled); fields left out stay as they are.",
			Access:      mcpserver.Write, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in WebhookUpdateArg) (Webhook, error) {
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
				if err := p.putWebhook(ctx, c.Workspace, wh); err != nil {
					return wh, err
				}
				return wh, p.event(ctx, c, "webhook.updated", wh.ID, map[string]any{"webhook_id": wh.ID, "changed": changed})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_delete", Title: "Delete webhook",
			Description: "Deletes a webhook and its signing secret; its delivery history is kept. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Deleted, error) {
				if _, err := p.getWebhook(ctx, c.Workspace, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.repo.delete(ctx, c.Workspace, KindWebhook, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, webhookSecretName(in.ID)); err != nil && !isStoreNotFound(err) {
					return Deleted{}, err
				}
				return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, "webhook.deleted", in.ID, map[string]string{"webhook_id": in.ID})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_test", Title: "Test webhook",
			Description: "Sends a signed webhook.test event to the webhook's URL now and returns the delivery: HTTP status, response and duration. This calls a system outside Kobana; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Delivery, error) {
				wh, err := p.getWebhook(ctx, c.Workspace, in.ID)
				if err != nil {
					return Delivery{}, err
				}
				data, _ := json.Marshal(map[string]string{"message": "This is a test delivery from Kobana.", "webhook_id": wh.ID, "requested_by": c.Person})
				return p.deliver(ctx, c, wh, "webhook.test", data, "")
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
				items, next, err := list[Delivery](ctx, p.repo, c.Workspace, KindDelivery, q)
				out := DeliveryList{Deliveries: items}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "webhooks_deliveries_replay", Title: "Replay delivery",
			Description: "Sends a past delivery's event again to its webhook, signed with the current secret, and returns the new delivery. This calls a system outside Kobana; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			func(ctx context.Context, c *mcpserver.Caller, in ReplayArg) (Delivery, error) {
				var d Delivery
				if err := required("delivery_id", in.DeliveryID); err != nil {
					return d, err
				}
				if err := p.repo.get(ctx, c.Workspace, KindDelivery, in.DeliveryID, &d); err != nil {
					return d, err
				}
				wh, err := p.getWebhook(ctx, c.Workspace, d.WebhookID)
				if err != nil {
					return Delivery{}, mcpserver.Errorf("not_found", "the webhook %s of this delivery no longer exists", d.WebhookID)
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
				secret := newSigningSecret()
				if err := p.opts.Store.SetSecret(ctx, c.Workspace, webhookSecretName(wh.ID), secret); err != nil {
					return WebhookSecret{}, err
				}
				wh.SecretHint, wh.UpdatedAt = "…"+secret[len(secret)-4:], p.now().UTC()
				if err := p.putWebhook(ctx, c.Workspace, wh); err != nil {
					return WebhookSecret{}, err
				}
				return WebhookSecret{Webhook: wh, Secret: secret}, p.event(ctx, c, "webhook.secret_rotated", wh.ID, map[string]string{"webhook_id": wh.ID})
			}),
	}
}

func (p *Product) getWebhook(ctx context.Context, ws, id string) (Webhook, error) {
	var wh Webhook
	if err := required("id", id); err != nil {
		return wh, err
	}
	return wh, p.repo.get(ctx, ws, KindWebhook, id, &wh)
}

func (p *Product) putWebhook(ctx context.Context, ws string, wh Webhook) error {
	return p.repo.put(ctx, ws, KindWebhook, wh.ID, "", wh.Status, wh.CreatedAt, wh)
}

// Sign returns the x-kobana-signature value for a delivery body.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// maxResponseExcerpt caps the response body kept in a delivery.
const maxResponseExcerpt = 2048

// deliver sends one signed event to a webhook and records the attempt.
func (p *Product) deliver(ctx context.Context, c *mcpserver.Caller, wh Webhook, event string, data json.RawMessage, replayOf string) (Delivery, error) {
	if p.opts.HTTPClient == nil {
		return Delivery{}, mcpserver.Errorf("outbound_unavailable", "this server is not configured to send outbound requests")
	}
	secrets, err := p.opts.Store.RevealSecrets(ctx, c.Workspace)
	if err != nil {
		return Delivery{}, fmt.Errorf("reading webhook secret: %w", err)
	}
	secret, ok := secrets[webhookSecretName(wh.ID)]
	if !ok {
		return Delivery{}, mcpserver.Errorf("no_secret", "webhook %s has no signing secret; rotate it with webhooks_rotate_secret", wh.ID)
	}
	now := p.now().UTC()
	d := Delivery{ID: newID("dlv"), WebhookID: wh.ID, Event: event, Payload: data, ReplayOf: replayOf, AttemptedAt: now}
	body, err := json.Marshal(map[string]any{"id": d.ID, "event": event, "created_at": now, "workspace_id": c.Workspace, "data": data})
	if err != nil {
		return Delivery{}, fmt.Errorf("encoding delivery: %w", err)
	}
	sendCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(sendCtx, http.MethodPost, wh.URL, bytes.NewReader(body))
	if err != nil {
		d.Status, d.Error = "failed", "invalid webhook URL: "+err.Error()
	} else {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "Kobana-Webhooks/1.0")
		req.Header.Set("X-Kobana-Event", event)
		req.Header.Set("X-Kobana-Delivery", d.ID)
		req.Header.Set("X-Kobana-Signature", Sign(secret, now, body))
		if replayOf != "" {
			req.Header.Set("X-Kobana-Replay-Of", replayOf)
		}
		start := time.Now()
		resp, err := p.opts.HTTPClient.Do(req)
		d.DurationMS = time.Since(start).Milliseconds()
		if err != nil {
			d.Status, d.Error = "failed", redactURLError(err)
		} else {
			excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseExcerpt))
			resp.Body.Close()
			d.HTTPStatus, d.ResponseBody = resp.StatusCode, string(excerpt)
			if resp.StatusCode >= 200 && resp.StatusCode < 300 {
				d.Status = "delivered"
			} else {
				d.Status, d.Error = "failed", fmt.Sprintf("the receiver answered HTTP %d", resp.StatusCode)
			}
		}
	}
	// What was sent is recorded even if the caller has gone away meanwhile.
	ctx = context.WithoutCancel(ctx)
	if err := p.repo.put(ctx, c.Workspace, KindDelivery, d.ID, wh.ID, d.Status, d.AttemptedAt, d); err != nil {
		return Delivery{}, err
	}
	wh.LastDelivery = now
	if d.Status == "delivered" {
		if wh.Status == "failing" {
			wh.Status = "active"
		}
		wh.FailingSince = time.Time{}
	} else if wh.Status != "disabled" {
		wh.Status = "failing"
		if wh.FailingSince.IsZero() {
			wh.FailingSince = now
		}
	}
	if err := p.putWebhook(ctx, c.Workspace, wh); err != nil {
		return Delivery{}, err
	}
	return d, p.event(ctx, c, "webhook.delivery_"+d.Status, wh.ID, map[string]any{"webhook_id": wh.ID, "delivery_id": d.ID, "event": event, "http_status": d.HTTPStatus, "replay_of": replayOf})
}

// redactURLError keeps the reason of a transport error without the URL,
// which may carry a token in its query.
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

func isStoreNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
