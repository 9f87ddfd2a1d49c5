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
	"strconv"
	"strings"
	"time"
)

// Headers of a webhook delivery.
const (
	// HeaderSignature carries Sign's value: t=<unix seconds>,v1=<hex HMAC>;
	// during a signing secret's rotation overlap, one v1 per secret.
	HeaderSignature = "X-Kobana-Signature"
	// HeaderEvent names the event (e.g. email.processed).
	HeaderEvent = "X-Kobana-Event"
	// HeaderDelivery is the delivery id, the same on every retry of one
	// delivery: receivers deduplicate on it.
	HeaderDelivery = "X-Kobana-Delivery"
	// HeaderReplayOf marks an attempt a person asked for
	// (webhooks_deliveries_replay): it names the delivery, whose id the
	// body and HeaderDelivery keep, so a receiver that already has it
	// deduplicates it like any retry.
	HeaderReplayOf = "X-Kobana-Replay-Of"
)

// DeliveryTimeout bounds one delivery attempt, response included.
const DeliveryTimeout = 15 * time.Second

// maxResponseExcerpt caps the response body kept in a delivery.
const maxResponseExcerpt = 2048

// DeliveryBody is the JSON a webhook receives.
type DeliveryBody struct {
	// ID is the delivery id (also in HeaderDelivery).
	ID    string `json:"id"`
	Event string `json:"event"`
	// CreatedAt is when this attempt was made.
	CreatedAt   time.Time       `json:"created_at"`
	WorkspaceID string          `json:"workspace_id"`
	Data        json.RawMessage `json:"data"`
}

// Sign returns the HeaderSignature value for a delivery body sent at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>", with one
// v1 per secret (the current one first, then the previous one during a
// rotation's overlap).
func Sign(secret string, t time.Time, body []byte, more ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	v := "t=" + ts
	for _, s := range append([]string{secret}, more...) {
		v += ",v1=" + hex.EncodeToString(mac(s, ts, body))
	}
	return v
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// ErrBadSignature reports a delivery whose signature does not verify.
var ErrBadSignature = errors.New("webhook signature does not verify")

// VerifySignature checks a HeaderSignature value against the body as a
// receiver should: the HMAC must match (in constant time) and the timestamp
// must be within tolerance of now, so a captured delivery cannot be
// replayed later. Errors match ErrBadSignature.
//
// The header may carry several v1 values (while a signing secret is
// rotated, one per secret): one matching is enough.
func VerifySignature(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, f := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: want t=<unix seconds>,v1=<hex>, got %q", ErrBadSignature, header)
	}
	want := mac(secret, ts, body)
	matched := false
	for _, sig := range sigs {
		got, err := hex.DecodeString(sig)
		matched = matched || err == nil && hmac.Equal(got, want)
	}
	if !matched {
		return fmt.Errorf("%w: the HMAC does not match the body", ErrBadSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, more than %s from now", ErrBadSignature, time.Unix(sec, 0).UTC().Format(time.RFC3339), tolerance)
	}
	return nil
}

// WebhookSecretName is the name under which a webhook's signing secret is
// kept among the workspace's secrets. It holds a ':', which user secret
// names never do (IsUserSecret), so workflows cannot reach it.
func WebhookSecretName(webhookID string) string { return "kobana:webhook:" + webhookID }

// WebhookPreviousSecretName is where a webhook's previous signing secret
// is kept during a rotation's overlap (Webhook.PreviousSecretUntil).
func WebhookPreviousSecretName(webhookID string) string {
	return "kobana:webhook-previous:" + webhookID
}

// SigningSecrets are the secrets a webhook's deliveries are signed with at
// now, from the workspace's secrets: its own, and its previous one while
// the rotation's overlap lasts. ok is false when it has none.
func (w Webhook) SigningSecrets(secrets map[string]string, now time.Time) (all []string, ok bool) {
	current, ok := secrets[WebhookSecretName(w.ID)]
	if !ok {
		return nil, false
	}
	all = []string{current}
	if prev, has := secrets[WebhookPreviousSecretName(w.ID)]; has && now.Before(w.PreviousSecretUntil) {
		all = append(all, prev)
	}
	return all, true
}

// IsUserSecret reports whether a secret name belongs to the user (and is
// reachable as ${{secrets.NAME}}) rather than to the platform.
func IsUserSecret(name string) bool { return !strings.Contains(name, ":") }

// NewSigningSecret returns a fresh webhook signing secret.
func NewSigningSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}

// SecretHint is the part of a signing secret a webhook record shows.
func SecretHint(secret string) string {
	if len(secret) < 8 {
		return "…"
	}
	return "…" + secret[len(secret)-4:]
}

// Send makes one delivery attempt: it POSTs d's event and payload to url,
// signed with secrets (Webhook.SigningSecrets), through client (which must be the SSRF-guarded one),
// and fills d's outcome: Status, HTTPStatus, Error, ResponseBody (an
// excerpt) and DurationMS. d.ID, WebhookID, Event, Payload, ReplayOf and
// AttemptedAt must be set; nothing is stored. A non-2xx answer or a
// transport error is a failed delivery, not an error; the error result is
// for a delivery that could not be built.
func Send(ctx context.Context, client *http.Client, url string, secrets []string, workspace string, d *Delivery) error {
	if len(secrets) == 0 {
		return fmt.Errorf("delivery %s: no signing secret", d.ID)
	}
	// The outcome is this attempt's alone: an earlier one's error does not
	// stay on a success.
	d.Status, d.HTTPStatus, d.Error, d.ResponseBody, d.DurationMS = "", 0, "", "", 0
	body, err := json.Marshal(DeliveryBody{ID: d.ID, Event: d.Event, CreatedAt: d.AttemptedAt.UTC(), WorkspaceID: workspace, Data: d.Payload})
	if err != nil {
		return fmt.Errorf("encoding delivery %s: %w", d.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		d.Status, d.Error = DeliveryFailed, "invalid webhook URL: "+redactURLError(err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Kobana-Webhooks/1.0")
	req.Header.Set(HeaderEvent, d.Event)
	req.Header.Set(HeaderDelivery, d.ID)
	req.Header.Set(HeaderSignature, Sign(secrets[0], d.AttemptedAt, body, secrets[1:]...))
	if d.ReplayOf != "" {
		req.Header.Set(HeaderReplayOf, d.ReplayOf)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		d.DurationMS = time.Since(start).Milliseconds()
		d.Status, d.Error = DeliveryFailed, redactURLError(err)
		return nil
	}
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseExcerpt))
	resp.Body.Close()
	d.DurationMS = time.Since(start).Milliseconds()
	d.HTTPStatus, d.ResponseBody = resp.StatusCode, string(excerpt)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		d.Status = DeliveryDelivered
	} else {
		d.Status, d.Error = DeliveryFailed, fmt.Sprintf("the receiver answered HTTP %d", resp.StatusCode)
	}
	return nil
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

// Observe updates a webhook's health with a delivery attempt's outcome: a
// success makes a failing webhook active again; a failure makes an active
// one failing, since its first failure. A disabled webhook stays disabled.
func (w *Webhook) Observe(d Delivery) {
	w.LastDelivery = d.AttemptedAt
	if d.Status == DeliveryDelivered {
		if w.Status == WebhookFailing {
			w.Status = WebhookActive
		}
		w.FailingSince = time.Time{}
		return
	}
	if w.Status != WebhookDisabled {
		w.Status = WebhookFailing
		if w.FailingSince.IsZero() {
			w.FailingSince = d.AttemptedAt
		}
	}
}

// Subscribes reports whether the webhook wants deliveries of an event now:
// it is not disabled and lists the event.
func (w Webhook) Subscribes(event string) bool {
	if w.Status == WebhookDisabled {
		return false
	}
	for _, e := range w.Events {
		if e == event {
			return true
		}
	}
	return false
}
