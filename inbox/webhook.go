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
	// HeaderSignature carries Sign's value: t=<unix seconds>,v1=<hex HMAC>.
	HeaderSignature = "X-Kobana-Signature"
	// HeaderEvent names the event (e.g. email.processed).
	HeaderEvent = "X-Kobana-Event"
	// HeaderDelivery is the delivery id, the same on every retry of one
	// delivery: receivers deduplicate on it.
	HeaderDelivery = "X-Kobana-Delivery"
	// HeaderReplayOf names the delivery a replay sends again.
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
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
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
func VerifySignature(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for _, f := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return fmt.Errorf("%w: want t=<unix seconds>,v1=<hex>, got %q", ErrBadSignature, header)
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, ts, body)) {
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
// signed with secret, through client (which must be the SSRF-guarded one),
// and fills d's outcome: Status, HTTPStatus, Error, ResponseBody (an
// excerpt) and DurationMS. d.ID, WebhookID, Event, Payload, ReplayOf and
// AttemptedAt must be set; nothing is stored. A non-2xx answer or a
// transport error is a failed delivery, not an error; the error result is
// for a delivery that could not be built.
func Send(ctx context.Context, client *http.Client, url, secret, workspace string, d *Delivery) error {
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
	req.Header.Set(HeaderSignature, Sign(secret, d.AttemptedAt, body))
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
