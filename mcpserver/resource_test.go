package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// oauthEnv serves the toy product as a protected resource whose Verify
// knows the tokens "oa-<role>-<scopes>" (e.g. oa-owner-read) and refuses
// every other.
func oauthEnv(t *testing.T) (e *env, base string) {
	t.Helper()
	e = newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	people := map[string]string{"owner": "ana", "viewer": "vic", "operator": "opr"}
	var hs *httptest.Server
	verify := func(ctx context.Context, tok string) (store.Principal, error) {
		parts := strings.Split(tok, "-")
		if len(parts) != 3 || parts[0] != "oa" || people[parts[1]] == "" {
			return store.Principal{}, fmt.Errorf("unknown token: %w", mcpserver.ErrInvalidToken)
		}
		return store.Principal{TokenID: "grt_" + parts[1], Person: people[parts[1]], Organization: "org1", Workspace: "ws1",
			Role: store.Role(parts[1]), Scopes: strings.Split(parts[2], "+")}, nil
	}
	mux := http.NewServeMux()
	hs = httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	mux.Handle("/", e.srv.HTTPHandler(mcpserver.HTTPOptions{Auth: &mcpserver.ResourceAuth{
		Resource: hs.URL + "/mcp", AuthorizationServers: []string{hs.URL}, Verify: verify, ResourceName: "Toy"}}))
	e.url = hs.URL + "/mcp"
	return e, hs.URL
}

// TestProtectedResourceMetadata: RFC 9728's document at the path-suffixed
// and the root well-known URL, any origin may read it, and every 401
// names it (with error="invalid_token" when a token was refused).
func TestProtectedResourceMetadata(t *testing.T) {
	e, base := oauthEnv(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Origin", "https://inspector.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || m["resource"] != base+"/mcp" || fmt.Sprint(m["authorization_servers"]) != "["+base+"]" ||
			fmt.Sprint(m["scopes_supported"]) != "[read write]" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: HTTP %d %v", path, resp.StatusCode, m)
		}
	}
	meta := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	resp, _ := post(t, e.url, body, h)
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(got, meta) || strings.Contains(got, "error=") || !strings.Contains(got, `scope="read write"`) {
		t.Errorf("no token: HTTP %d %q", resp.StatusCode, got)
	}
	for _, tok := range []string{"oa-nobody-read", "kbn_not_a_token", "garbage"} {
		h["Authorization"] = "Bearer " + tok
		resp, _ = post(t, e.url, body, h)
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(got, meta) || !strings.Contains(got, `error="invalid_token"`) {
			t.Errorf("%s: HTTP %d %q", tok, resp.StatusCode, got)
		}
	}
	// Static tokens and OAuth tokens both get in.
	for _, tok := range []string{e.tokens["owner"], "oa-owner-read+write"} {
		h["Authorization"] = "Bearer " + tok
		if resp, got := post(t, e.url, body, h); resp.StatusCode != 200 || !strings.Contains(got, "notes_delete") {
			t.Errorf("%s: HTTP %d %s", tok, resp.StatusCode, got)
		}
	}
}

// TestInsufficientScope: an OAuth caller calling a tool its role allows
// and its scopes do not gets 403 insufficient_scope naming the scopes to
// ask for, on both eras; a tool its role forbids, and any static token,
// get the MCP answer they got before.
func TestInsufficientScope(t *testing.T) {
	e, base := oauthEnv(t)
	modern := func(tool, tok string) (*http.Response, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"id":"n1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		return post(t, e.url, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool, "Authorization": "Bearer " + tok})
	}
	resp, _ := modern("notes_delete", "oa-owner-read")
	want := `Bearer error="insufficient_scope", scope="read write", resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.HasPrefix(got, want) {
		t.Errorf("owner, read scope, write tool: HTTP %d %q, want 403 %s", resp.StatusCode, got, want)
	}
	if resp, _ := modern("notes_get", "oa-owner-read"); resp.StatusCode != 200 {
		t.Errorf("owner, read scope, read tool: HTTP %d", resp.StatusCode)
	}
	// The role forbids it: no scope would help, so no challenge.
	if resp, got := modern("notes_delete", "oa-viewer-read"); resp.StatusCode != 200 || !strings.Contains(got, "permission_denied") {
		t.Errorf("viewer, write tool: HTTP %d %s", resp.StatusCode, got)
	}
	// A static read-only token is answered as before.
	if resp, _ := modern("notes_delete", e.tokens["owner-ro"]); resp.StatusCode != 200 {
		t.Errorf("static read token, write tool: HTTP %d, want the MCP answer", resp.StatusCode)
	}
	// Era 2025: the tool is read from the JSON-RPC body (batches too).
	sess := legacySession(t, e.url, "oa-owner-read")
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes_delete","arguments":{"id":"n1"}}}`,
		`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes_get","arguments":{"id":"n1"}}},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"notes_purge","arguments":{}}}]`,
	} {
		resp, _ := post(t, e.url, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": sess, "Authorization": "Bearer oa-owner-read"})
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(got, `error="insufficient_scope"`) {
			t.Errorf("2025 %s: HTTP %d %q", body[:40], resp.StatusCode, got)
		}
	}
	if e.toy.runs.Load() != 0 {
		t.Errorf("a destructive tool ran %d times", e.toy.runs.Load())
	}
}

// legacySession initializes a 2025-11-25 session and returns its id.
func legacySession(t *testing.T, url, tok string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize: HTTP %d, no session", resp.StatusCode)
	}
	return id
}
