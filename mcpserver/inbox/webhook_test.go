package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/demo"
)

func TestSendSignsAndRecords(t *testing.T) {
	var got struct {
		header http.Header
		body   []byte
	}
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.header = r.Header.Clone()
		got.body, _ = io.ReadAll(r.Body)
		w.WriteHeader(status)
		w.Write([]byte(strings.Repeat("x", 5000)))
	}))
	defer srv.Close()
	d := inbox.Delivery{ID: "dlv_1", WebhookID: "whk_1", Event: inbox.EventEmailProcessed, Payload: json.RawMessage(`{"email_id":"eml_1"}`), AttemptedAt: demoNow}
	if err := inbox.Send(context.Background(), srv.Client(), srv.URL+"/hook", []string{"whsec_abc"}, "ws1", &d); err != nil {
		t.Fatal(err)
	}
	if d.Status != inbox.DeliveryDelivered || d.HTTPStatus != 200 || len(d.ResponseBody) != 2048 {
		t.Fatalf("delivery %+v", d)
	}
	var body inbox.DeliveryBody
	if err := json.Unmarshal(got.body, &body); err != nil || body.ID != "dlv_1" || body.WorkspaceID != "ws1" || string(body.Data) != `{"email_id":"eml_1"}` || !body.CreatedAt.Equal(demoNow) {
		t.Fatalf("body %s: %v", got.body, err)
	}
	if got.header.Get(inbox.HeaderEvent) != "email.processed" || got.header.Get(inbox.HeaderDelivery) != "dlv_1" || got.header.Get(inbox.HeaderReplayOf) != "" {
		t.Errorf("headers %v", got.header)
	}
	sig := got.header.Get(inbox.HeaderSignature)
	if sig != inbox.Sign("whsec_abc", demoNow, got.body) {
		t.Errorf("signature %q", sig)
	}
	if err := inbox.VerifySignature("whsec_abc", sig, got.body, demoNow.Add(time.Minute), 5*time.Minute); err != nil {
		t.Errorf("a receiver cannot verify the delivery: %v", err)
	}
	for name, check := range map[string]error{
		"tampered body": inbox.VerifySignature("whsec_abc", sig, append(got.body, ' '), demoNow, 5*time.Minute),
		"other secret":  inbox.VerifySignature("whsec_abd", sig, got.body, demoNow, 5*time.Minute),
		"too old":       inbox.VerifySignature("whsec_abc", sig, got.body, demoNow.Add(6*time.Minute), 5*time.Minute),
		"malformed":     inbox.VerifySignature("whsec_abc", "v1=00", got.body, demoNow, 5*time.Minute),
	} {
		if !errors.Is(check, inbox.ErrBadSignature) {
			t.Errorf("%s: %v", name, check)
		}
	}
	// A non-2xx answer and an unreachable receiver are failed deliveries,
	// whose error never shows the URL (it may carry a token).
	status = http.StatusServiceUnavailable
	d.ReplayOf = "dlv_0"
	inbox.Send(context.Background(), srv.Client(), srv.URL, []string{"whsec_abc"}, "ws1", &d)
	if d.Status != inbox.DeliveryFailed || d.HTTPStatus != 503 || !strings.Contains(d.Error, "503") || got.header.Get(inbox.HeaderReplayOf) != "dlv_0" {
		t.Fatalf("503 delivery %+v", d)
	}
	d = inbox.Delivery{ID: "dlv_2", AttemptedAt: demoNow}
	srv.Close()
	inbox.Send(context.Background(), http.DefaultClient, srv.URL+"/h?token=s3cr3t", []string{"k"}, "ws1", &d)
	if d.Status != inbox.DeliveryFailed || d.Error == "" || strings.Contains(d.Error, "s3cr3t") {
		t.Fatalf("unreachable delivery %+v", d)
	}
}

func TestWebhookHealth(t *testing.T) {
	wh := inbox.Webhook{Status: inbox.WebhookActive, Events: []string{inbox.EventEmailFailed}}
	t1, t2 := demoNow, demoNow.Add(time.Hour)
	wh.Observe(inbox.Delivery{Status: inbox.DeliveryFailed, AttemptedAt: t1})
	wh.Observe(inbox.Delivery{Status: inbox.DeliveryFailed, AttemptedAt: t2})
	if wh.Status != inbox.WebhookFailing || !wh.FailingSince.Equal(t1) || !wh.LastDelivery.Equal(t2) {
		t.Fatalf("after two failures %+v", wh)
	}
	wh.Observe(inbox.Delivery{Status: inbox.DeliveryDelivered, AttemptedAt: t2})
	if wh.Status != inbox.WebhookActive || !wh.FailingSince.IsZero() {
		t.Fatalf("after a success %+v", wh)
	}
	if !wh.Subscribes(inbox.EventEmailFailed) || wh.Subscribes(inbox.EventEmailProcessed) {
		t.Error("Subscribes")
	}
	wh.Status = inbox.WebhookDisabled
	wh.Observe(inbox.Delivery{Status: inbox.DeliveryFailed, AttemptedAt: t2})
	if wh.Status != inbox.WebhookDisabled || wh.Subscribes(inbox.EventEmailFailed) {
		t.Fatalf("disabled %+v", wh)
	}
	if inbox.IsUserSecret(inbox.WebhookSecretName("whk_1")) || !inbox.IsUserSecret("ERP_TOKEN") {
		t.Error("webhook secrets must not be user secrets")
	}
	ev := inbox.WebhookEvents()
	ev[0] = "changed"
	if inbox.WebhookEvents()[0] == "changed" || !inbox.IsWebhookEvent(inbox.EventEmailReceived) || inbox.IsWebhookEvent(inbox.EventWebhookTest) {
		t.Error("WebhookEvents")
	}
}

// ReadEmail over a stored message gives the record ParseEmail gives.
func TestReadEmailFromMessage(t *testing.T) {
	ctx := context.Background()
	st, _ := seeded(t)
	raw, err := st.GetBlob(ctx, demo.Workspace, "eml_inv_01")
	if err != nil {
		t.Fatal(err)
	}
	m, err := inbox.BlobMessages{Blobs: st}.OpenMessage(ctx, demo.Workspace, "eml_inv_01")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a, err := inbox.ParseEmail(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := inbox.ReadEmail(m, m.Size())
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) || len(b.Attachments) != 2 || b.Attachments[1].ContentType != "application/xml" || b.From != "faturamento@acme.example.com.br" {
		t.Fatalf("ReadEmail %s\nParseEmail %s", jb, ja)
	}
}

func TestBlobMessagesDelete(t *testing.T) {
	ctx := context.Background()
	st, _ := seeded(t)
	m := inbox.BlobMessages{Blobs: st}
	open, err := m.OpenMessage(ctx, demo.Workspace, "eml_inv_02")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	for range 2 {
		if err := m.DeleteMessage(ctx, demo.Workspace, "eml_inv_02"); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if _, err := m.OpenMessage(ctx, demo.Workspace, "eml_inv_02"); !errors.Is(err, inbox.ErrPurged) {
		t.Fatalf("open after delete: %v", err)
	}
	// A snapshot opened before keeps reading.
	if b, err := io.ReadAll(inbox.MessageReader(open)); err != nil || int64(len(b)) != open.Size() || len(b) == 0 {
		t.Fatalf("snapshot after delete: %d bytes, %v", len(b), err)
	}
}

// A damaged attachment is read, and the repair is on the e-mail record:
// its defects are visible in the attachment's metadata.
func TestReadEmailRecordsAttachmentDefects(t *testing.T) {
	raw := "From: a@example.com\r\nTo: ap@inbox.example\r\nSubject: nota\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nsegue\r\n" +
		"--b\r\nContent-Type: application/pdf; name=a.pdf\r\nContent-Disposition: attachment; filename=a.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n" +
		"--b\r\nContent-Type: application/octet-stream; name=b.bin\r\nContent-Disposition: attachment; filename=b.bin\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0\r\n" +
		"--b--\r\n"
	e, err := inbox.ParseEmail([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Attachments) != 2 {
		t.Fatalf("attachments: %+v", e.Attachments)
	}
	if len(e.Attachments[0].Defects) != 0 {
		t.Errorf("a well-formed part has defects: %+v", e.Attachments[0].Defects)
	}
	d := e.Attachments[1].Defects
	if len(d) != 1 || d[0].Code != "base64-missing-padding" || d[0].Message == "" {
		t.Errorf("defects of the unpadded part: %+v", d)
	}
	if e.Attachments[1].Size != 5 {
		t.Errorf("size %d, want the 5 bytes decoded", e.Attachments[1].Size)
	}
	j, _ := json.Marshal(e.Attachments)
	if !strings.Contains(string(j), `"defects":[{"code":"base64-missing-padding"`) || strings.Count(string(j), "defects") != 1 {
		t.Errorf("record JSON: %s", j)
	}
}
