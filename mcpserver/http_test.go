package mcpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// post sends one JSON-RPC body to the endpoint with the given headers.
func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// A bad token is answered 401 with the RFC 6750 error code; a missing one
// with the bare challenge (the RFC wants no error code then).
func TestUnauthorizedChallenge(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		resp, _ := post(t, e.url, body, map[string]string{"Mcp-Protocol-Version": era, "Mcp-Method": "tools/list", "Authorization": "Bearer kbn_not_a_token"})
		got := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(got, "Bearer ") || !strings.Contains(got, `error="invalid_token"`) {
			t.Errorf("%s bad token: HTTP %d, WWW-Authenticate %q; want 401 with error=\"invalid_token\"", era, resp.StatusCode, got)
		}
		resp, _ = post(t, e.url, body, map[string]string{"Mcp-Protocol-Version": era, "Mcp-Method": "tools/list"})
		got = resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(got, "Bearer ") || strings.Contains(got, "error=") {
			t.Errorf("%s no token: HTTP %d, WWW-Authenticate %q; want 401 with a bare challenge", era, resp.StatusCode, got)
		}
	}
	// A valid token still gets through.
	resp, _ := post(t, e.url, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Authorization": "Bearer " + e.tokens["owner"]})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("valid token: HTTP %d", resp.StatusCode)
	}
}

// A handshake-era request that belongs to no session is HTTP 400 with a
// JSON-RPC Invalid Request error that the official schema accepts, not
// HTTP 200 with error code 0.
func TestLegacyRequestWithoutSession(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	auth := "Bearer " + e.tokens["owner"]
	for _, tc := range []struct{ name, version, body, wantID string }{
		{"no version header", "", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, `"id":7`},
		{"2025-11-25", "2025-11-25", `{"jsonrpc":"2.0","id":"x","method":"resources/read","params":{"uri":"kobana://toy/notes/n1"}}`, `"id":"x"`},
		{"a notification", "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `"id":null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": auth}
			if tc.version != "" {
				h["Mcp-Protocol-Version"] = tc.version
			}
			resp, got := post(t, e.url, tc.body, h)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, "Mcp-Session-Id") {
				t.Fatalf("HTTP %d %s; want 400 with a -32600 error naming Mcp-Session-Id", resp.StatusCode, got)
			}
			if tc.wantID != "" && !strings.Contains(got, tc.wantID) {
				t.Errorf("%s: the error does not answer the request's id (%s)", got, tc.wantID)
			}
			if tc.wantID == `"id":null` {
				// JSON-RPC 2.0 §5 wants id null when there is none; the MCP
				// schema knows no such answer, so it is not checked.
				return
			}
			check := mcptest.NewChecker(mcptest.Legacy)
			check.Sent([]byte(tc.body))
			if err := check.Received([]byte(got)); err != nil {
				t.Error(err)
			}
		})
	}
	// initialize needs no session, and what follows it uses the one it opened.
	resp, got := post(t, e.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		map[string]string{"Authorization": auth})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" || !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: HTTP %d %s", resp.StatusCode, got)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	resp, got = post(t, e.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: HTTP %d %s", resp.StatusCode, got)
	}
	resp, got = post(t, e.url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(got, "notes_get") {
		t.Fatalf("tools/list in the session: HTTP %d %s", resp.StatusCode, got)
	}
}

// The protocol errors of 2026-07-28 (answered by the SDK below the
// framework) are valid messages of the official schema too, with HTTP
// statuses a client can act on.
func TestModernProtocolErrorsMatchTheOfficialSchema(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	auth := "Bearer " + e.tokens["owner"]
	for _, tc := range []struct {
		name, version, method, mcpName, body, wantCode string
	}{
		{"no _meta", "2026-07-28", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, "-32602"},
		{"unsupported version", "2099-01-01", "tools/list", "",
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta("2099-01-01") + `}}`, "-32022"},
		{"header mismatch", "2026-07-28", "tools/call", "notes_purge",
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes_get","arguments":{"id":"n1"},` + meta("2026-07-28") + `}}`, "-32020"},
		{"unknown method", "2026-07-28", "tasks/list", "", `{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{` + meta("2026-07-28") + `}}`, "-32601"},
		{"unknown tool", "2026-07-28", "tools/call", "notes_nope",
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"notes_nope","arguments":{},` + meta("2026-07-28") + `}}`, "-32602"},
		{"unknown prompt", "2026-07-28", "prompts/get", "nope",
			`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"nope",` + meta("2026-07-28") + `}}`, "-32602"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": auth, "Mcp-Protocol-Version": tc.version, "Mcp-Method": tc.method}
			if tc.mcpName != "" {
				h["Mcp-Name"] = tc.mcpName
			}
			resp, got := post(t, e.url, tc.body, h)
			check := mcptest.NewChecker(mcptest.Modern)
			check.Sent([]byte(tc.body))
			if err := check.Received([]byte(got)); err != nil {
				t.Errorf("HTTP %d: %v", resp.StatusCode, err)
			}
			if !strings.Contains(got, `"code":`+tc.wantCode) || resp.StatusCode < 400 {
				t.Errorf("HTTP %d %s; want an HTTP error status with JSON-RPC error %s", resp.StatusCode, got, tc.wantCode)
			}
		})
	}
}
