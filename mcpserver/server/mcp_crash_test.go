package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
)

// rpcAnswer is one JSON-RPC answer as a client reads it.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// failed reports whether the answer is a JSON-RPC error or a tool's error
// result: what a client must get for a call that cannot be served.
func (a rpcAnswer) failed() bool {
	return a.Error != nil || a.Result["isError"] == true
}

// mcpClient speaks raw JSON-RPC to /mcp on one era: the 2025 era in a
// session (initialize first), 2026-07-28 stateless with the version in
// each request's _meta.
type mcpClient struct {
	t       *testing.T
	url     string
	token   string
	modern  bool
	session string
	id      int
}

const (
	legacyEra = "2025-11-25"
	modernEra = "2026-07-28"
)

func newMCPClient(t *testing.T, url, token string, modern bool) *mcpClient {
	c := &mcpClient{t: t, url: url, token: token, modern: modern}
	if !modern {
		a, hdr := c.post("initialize", map[string]any{"protocolVersion": legacyEra, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "crash-test", "version": "1"}}, true)
		if a.Error != nil || a.Result == nil {
			t.Fatalf("initialize: %+v", a)
		}
		c.session = hdr.Get("Mcp-Session-Id")
		if c.session == "" {
			t.Fatal("initialize: no Mcp-Session-Id")
		}
		c.post("notifications/initialized", nil, false)
	}
	return c
}

// post sends one request (call) or notification and returns its answer.
func (c *mcpClient) post(method string, params map[string]any, call bool) (rpcAnswer, http.Header) {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if c.modern {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    modernEra,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "crash-test", "version": "1"},
		}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if call {
		c.id++
		msg["id"] = c.id
	}
	body, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequest("POST", c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch {
	case c.modern:
		req.Header.Set("Mcp-Protocol-Version", modernEra)
		req.Header.Set("Mcp-Method", method)
		if name, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", name)
		} else if uri, ok := params["uri"].(string); ok {
			req.Header.Set("Mcp-Name", uri)
		}
	case c.session != "":
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", legacyEra)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v (is the server still up?)", method, body, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s: reading the answer: %v", method, err)
	}
	if !call {
		return rpcAnswer{}, resp.Header
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var data []byte
		for _, l := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				data = []byte(d)
			}
		}
		raw = data
	}
	var a rpcAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		c.t.Fatalf("%s %s: answer is no JSON-RPC (%s): %q", method, body, resp.Status, raw)
	}
	return a, resp.Header
}

// crashCases are calls that cannot be served, as a new or hostile
// client sends them: each must be refused with an error, never end the
// process.
func crashCases(viewer bool) []struct {
	name   string
	method string
	params map[string]any
} {
	nuls := strings.Repeat("\x00", 20)
	cases := []struct {
		name   string
		method string
		params map[string]any
	}{
		{"unknown tool", "tools/call", map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}},
		{"wrong-typed arguments", "tools/call", map[string]any{"name": "emails_list", "arguments": map[string]any{"limit": "many", "status": 7}}},
		{"arguments not an object", "tools/call", map[string]any{"name": "emails_get", "arguments": []any{1, 2}}},
		{"id of escapes", "tools/call", map[string]any{"name": "emails_get", "arguments": map[string]any{"id": nuls}}},
		{"id of quotes and control characters", "tools/call", map[string]any{"name": "emails_get", "arguments": map[string]any{"id": strings.Repeat("\"\x01", 13)}}},
		{"resource that does not exist", "resources/read", map[string]any{"uri": "kobana://inbox/emails/em_doesnotexist"}},
		{"resource of no product", "resources/read", map[string]any{"uri": "kobana://nowhere/x"}},
		{"unknown prompt", "prompts/get", map[string]any{"name": "no_such_prompt"}},
	}
	if viewer {
		cases = append(cases, struct {
			name   string
			method string
			params map[string]any
		}{"a tool the token may not run", "tools/call", map[string]any{"name": "inboxes_delete", "arguments": map[string]any{"id": "ib_doesnotexist"}}})
	}
	return cases
}

// demoTokens are the owner's and the viewer's demo tokens the server
// printed.
func demoTokens(t *testing.T, out string) (owner, viewer string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		i := strings.LastIndex(l, ": kbn_")
		if i < 0 || !strings.HasPrefix(l, "token for ") {
			continue
		}
		switch {
		case strings.Contains(l, ", owner of "):
			owner = l[i+2:]
		case strings.Contains(l, ", viewer of "):
			viewer = l[i+2:]
		}
	}
	if owner == "" || viewer == "" {
		t.Fatalf("no owner and viewer demo tokens in %q", out)
	}
	return owner, viewer
}

// The assembled server as an operator starts it (MCP over HTTP, SMTP,
// the monitor, logs on) answers each call it cannot serve with an error,
// on both eras, for an owner's and a viewer's token, and goes on serving:
// the next request is answered and SMTP still greets. Before, the first
// of these ended the process (the metrics observer read a nil result).
func TestMCPErrorPathsDoNotEndTheServer(t *testing.T) {
	st, path := openStore(t)
	var out, logs syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, Process: true, Output: &out,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		HTTP:   &server.HTTP{Addr: "127.0.0.1:0"}, Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(t)},
		Monitor: &server.Monitor{Addr: "127.0.0.1:0"}})
	defer stop()
	url := "http://" + addrs["http"].String() + "/mcp"
	owner, viewer := demoTokens(t, out.String())

	for _, era := range []struct {
		name   string
		modern bool
	}{{legacyEra, false}, {modernEra, true}} {
		for _, who := range []struct {
			name, token string
			viewer      bool
		}{{"owner", owner, false}, {"viewer", viewer, true}} {
			c := newMCPClient(t, url, who.token, era.modern)
			for _, tc := range crashCases(who.viewer) {
				a, _ := c.post(tc.method, tc.params, true)
				if !a.failed() {
					t.Errorf("%s, %s, %s: answered %+v, want an error", era.name, who.name, tc.name, a)
				}
				if a.Error != nil && a.Error.Code == -32603 {
					t.Errorf("%s, %s, %s: internal error (a panic contained): %q", era.name, who.name, tc.name, a.Error.Message)
				}
				if l, _ := c.post("tools/list", nil, true); l.Error != nil || l.Result["tools"] == nil {
					t.Fatalf("%s, %s: after %s, tools/list answered %+v", era.name, who.name, tc.name, l)
				}
			}
		}
	}

	// SMTP still greets, the monitor still answers.
	conn, err := net.DialTimeout("tcp", addrs["smtp"].String(), 10*time.Second)
	if err != nil {
		t.Fatalf("SMTP after the calls: %v", err)
	}
	defer conn.Close()
	greeting, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(greeting, "220 ") {
		t.Errorf("SMTP greeting after the calls: %q, %v", greeting, err)
	}
	resp, err := http.Get("http://" + addrs["monitor"].String() + "/metrics")
	if err != nil {
		t.Fatalf("/metrics after the calls: %v", err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `kobana_mcp_requests_total{method="tools/call",result="error",tool="unknown"}`
	if !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, metricLines(string(metrics), "kobana_mcp_requests_total"))
	}
}

// metricLines is the lines of s that contain sub.
func metricLines(s, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			fmt.Fprintln(&b, l)
		}
	}
	return b.String()
}
