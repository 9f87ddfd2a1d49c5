package intake_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// tokens is a fixed table of bearer tokens.
type tokens map[string]intake.Principal

func (t tokens) Authenticate(_ context.Context, tok string) (intake.Principal, error) {
	if p, ok := t[tok]; ok {
		return p, nil
	}
	return intake.Principal{}, intake.ErrUnknownToken
}

var testTokens = tokens{
	"tok-writer":   {TokenID: "t1", Workspace: "ws_a", Role: "operator", Scopes: []string{"read", "write"}},
	"tok-reader":   {TokenID: "t2", Workspace: "ws_a", Role: "operator", Scopes: []string{"read"}},
	"tok-viewer":   {TokenID: "t3", Workspace: "ws_a", Role: "viewer", Scopes: []string{"read", "write"}},
	"tok-other-ws": {TokenID: "t4", Workspace: "ws_b", Role: "owner", Scopes: []string{"read", "write"}},
}

type httpEnv struct {
	*env
	url string
}

func startHTTP(t *testing.T, cfg intake.HTTPConfig) *httpEnv {
	t.Helper()
	root := t.TempDir()
	dir, err := mailstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{dir: dir}
	h := intake.NewHandler(cfg, testTokens, testInboxes, rec, dir, &senderauth.Checker{Resolver: noDNS{}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &httpEnv{env: &env{t: t, root: root, dir: dir, rec: rec}, url: srv.URL}
}

// post sends a message and returns the status and the decoded JSON answer.
func (e *httpEnv) post(path, token, contentType, body string) (int, map[string]any, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("answer %d is not JSON: %q", resp.StatusCode, b)
	}
	return resp.StatusCode, out, resp.Header
}

func errorCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestHTTPPostsAMessage(t *testing.T) {
	e := startHTTP(t, intake.HTTPConfig{})
	msg := message("http-1", 5000)
	status, out, _ := e.post("/inboxes/ibx_invoices/messages", "tok-writer", "message/rfc822", msg)
	if status != http.StatusAccepted {
		t.Fatalf("status %d %v, want 202", status, out)
	}
	emails, _ := out["emails"].([]any)
	if len(emails) != 1 {
		t.Fatalf("answer %v, want one e-mail", out)
	}
	em := emails[0].(map[string]any)
	if em["id"] != "eml_0001" || em["inbox_id"] != "ibx_invoices" || em["status"] != "received" {
		t.Fatalf("e-mail %v", em)
	}
	d := e.rec.deliveries()
	if len(d) != 1 || d[0].SHA256 != digest(msg) || d[0].Envelope.Via != "http" || d[0].Envelope.Principal != "token:t1" {
		t.Fatalf("deliveries %+v", d)
	}
	if d[0].Auth.SPF.Result != senderauth.None {
		t.Errorf("SPF over HTTP = %+v, want none (no SMTP client to check)", d[0].Auth.SPF)
	}
}

func TestHTTPAuthorisation(t *testing.T) {
	e := startHTTP(t, intake.HTTPConfig{})
	msg := message("auth", 100)
	for _, c := range []struct {
		name, token, inbox string
		status             int
		code               string
	}{
		{"no token", "", "ibx_invoices", 401, "unauthorized"},
		{"unknown token", "tok-nope", "ibx_invoices", 401, "unauthorized"},
		{"read-only token", "tok-reader", "ibx_invoices", 403, "forbidden"},
		{"viewer role", "tok-viewer", "ibx_invoices", 403, "forbidden"},
		{"token of another workspace", "tok-other-ws", "ibx_invoices", 404, "inbox_not_found"},
		{"no such inbox", "tok-writer", "ibx_nope", 404, "inbox_not_found"},
	} {
		status, out, hdr := e.post("/inboxes/"+c.inbox+"/messages", c.token, "message/rfc822", msg)
		if status != c.status || errorCode(out) != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, out, c.status, c.code)
		}
		if status == 401 && !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without a Bearer challenge", c.name)
		}
	}
	if len(e.rec.deliveries()) != 0 || e.storedMessages() != 0 {
		t.Fatal("a refused post was recorded")
	}
	// The other workspace's token reaches its own inbox.
	if status, out, _ := e.post("/inboxes/ibx_other/messages", "tok-other-ws", "message/rfc822", msg); status != 202 {
		t.Fatalf("own inbox: %d %v", status, out)
	}
}

func TestHTTPBadRequests(t *testing.T) {
	e := startHTTP(t, intake.HTTPConfig{MaxMessageBytes: 10 << 10})
	for _, c := range []struct {
		name, ctype, body string
		status            int
		code              string
	}{
		{"no content type", "", message("x", 100), 415, "unsupported_media_type"},
		{"JSON", "application/json", `{"raw":"..."}`, 415, "unsupported_media_type"},
		{"text", "text/plain", message("x", 100), 415, "unsupported_media_type"},
		{"empty", "message/rfc822", "", 400, "empty_message"},
		{"oversized", "message/rfc822", message("big", 20<<10), 413, "message_too_large"},
		{"with parameters is fine", "message/rfc822; charset=utf-8", message("x", 100), 202, ""},
	} {
		status, out, _ := e.post("/inboxes/ibx_invoices/messages", "tok-writer", c.ctype, c.body)
		if status != c.status || errorCode(out) != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, out, c.status, c.code)
		}
	}
	// Oversized without a Content-Length (chunked): refused while streaming.
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(message("chunked", 30<<10)))
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", e.url+"/inboxes/ibx_invoices/messages", pr)
	req.Header.Set("Authorization", "Bearer tok-writer")
	req.Header.Set("Content-Type", "message/rfc822")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked oversized: %d, want 413", resp.StatusCode)
	}
	// Wrong method and path.
	resp, _ = http.Get(e.url + "/inboxes/ibx_invoices/messages")
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow=%q, want 405 POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if status, _, _ := e.post("/messages", "tok-writer", "message/rfc822", "x"); status != 404 {
		t.Errorf("unknown path: %d, want 404", status)
	}
	if n := len(e.rec.deliveries()); n != 1 || e.storedMessages() != 1 || len(e.spoolFiles()) != 0 {
		t.Fatalf("recorded %d, stored %d, spool %v: want only the good one", n, e.storedMessages(), e.spoolFiles())
	}
}

func TestHTTPRecorderFailures(t *testing.T) {
	e := startHTTP(t, intake.HTTPConfig{})
	e.rec.fail = errors.New("database is down")
	status, out, hdr := e.post("/inboxes/ibx_invoices/messages", "tok-writer", "message/rfc822", message("x", 100))
	if status != 503 || errorCode(out) != "unavailable" || hdr.Get("Retry-After") == "" {
		t.Fatalf("failing recorder: %d %v Retry-After=%q, want 503 unavailable with Retry-After", status, out, hdr.Get("Retry-After"))
	}
	if strings.Contains(out["error"].(map[string]any)["message"].(string), "database is down") {
		t.Error("the internal error reached the client")
	}
	e.rec.fail = intake.ErrTryLater
	if status, out, _ := e.post("/inboxes/ibx_invoices/messages", "tok-writer", "message/rfc822", message("x", 100)); status != 503 || errorCode(out) != "try_later" {
		t.Fatalf("DNS failure: %d %v, want 503 try_later", status, out)
	}
	e.rec.fail, e.rec.refuse = nil, "not an allowed sender"
	status, out, _ = e.post("/inboxes/ibx_invoices/messages", "tok-writer", "message/rfc822", message("x", 100))
	em := out["emails"].([]any)[0].(map[string]any)
	if status != 202 || em["status"] != "rejected" || em["reason"] != "not an allowed sender" {
		t.Fatalf("refused sender: %d %v, want 202 with the rejection recorded", status, out)
	}
	if e.storedMessages() != 1 || len(e.spoolFiles()) != 0 {
		t.Fatalf("stored %d, spool %v", e.storedMessages(), e.spoolFiles())
	}
}
