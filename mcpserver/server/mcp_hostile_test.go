package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
)

// hostile is a running server.Run (demo data, HTTP on loopback) and what a
// client needs to speak to /mcp on both eras.
type hostile struct {
	url     string
	token   string
	client  *http.Client
	session string // a 2025-11-25 session
	tools   []hostileTool
	prompts []string
	uris    []string
}

// hostileTool is a tool the server lists, with its arguments' names.
type hostileTool struct {
	name string
	args []string
}

// startHostile starts the server as kobana serve -demo -http does and reads
// its tools, prompts and resources.
func startHostile(t testing.TB) *hostile {
	t.Helper()
	st, path := openStore(t)
	var out syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Output: &out, Notices: io.Discard})
	t.Cleanup(func() { stop() })
	h := &hostile{url: "http://" + addrs["http"].String() + "/mcp", token: demoToken(t, out.String()),
		client: &http.Client{Timeout: 30 * time.Second}}
	h.openSession(t)
	var tools struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	h.list(t, "tools/list", &tools)
	for _, tl := range tools.Tools {
		ht := hostileTool{name: tl.Name}
		for a := range tl.InputSchema.Properties {
			ht.args = append(ht.args, a)
		}
		h.tools = append(h.tools, ht)
	}
	var prompts struct {
		Prompts []struct {
			Name string `json:"name"`
		} `json:"prompts"`
	}
	h.list(t, "prompts/list", &prompts)
	for _, p := range prompts.Prompts {
		h.prompts = append(h.prompts, p.Name)
	}
	var templates struct {
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
		} `json:"resourceTemplates"`
	}
	h.list(t, "resources/templates/list", &templates)
	for _, r := range templates.ResourceTemplates {
		h.uris = append(h.uris, r.URITemplate)
	}
	if len(h.tools) == 0 || len(h.prompts) == 0 || len(h.uris) == 0 {
		t.Fatalf("the server lists %d tools, %d prompts, %d resource templates", len(h.tools), len(h.prompts), len(h.uris))
	}
	return h
}

// modernMeta is the _meta a 2026-07-28 request carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// post sends body to /mcp on an era ("2026-07-28", "2025-11-25" in the
// session, or "" for no version and no session) with extra headers.
func (h *hostile) post(t testing.TB, era string, body []byte, extra map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+h.token)
	switch era {
	case "2026-07-28":
		req.Header.Set("Mcp-Protocol-Version", era)
	case "2025-11-25":
		req.Header.Set("Mcp-Protocol-Version", era)
		req.Header.Set("Mcp-Session-Id", h.session)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("POST /mcp: %v (is the server down?)", err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp, got
}

// openSession opens a 2025-11-25 session.
func (h *hostile) openSession(t testing.TB) {
	t.Helper()
	resp, body := h.post(t, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`), nil)
	h.session = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || h.session == "" {
		t.Fatalf("initialize: HTTP %d %s", resp.StatusCode, body)
	}
	if resp, body = h.post(t, "2025-11-25", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d %s", resp.StatusCode, body)
	}
}

// list calls a list method on 2026-07-28 and decodes its result into v.
func (h *hostile) list(t testing.TB, method string, v any) {
	t.Helper()
	resp, body := h.post(t, "2026-07-28", []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+modernMeta+`}}`), map[string]string{"Mcp-Method": method})
	answers, err := rpcAnswers(resp, body)
	if err != nil || len(answers) != 1 || answers[0].Result == nil {
		t.Fatalf("%s: HTTP %d %s (%v)", method, resp.StatusCode, body, err)
	}
	if err := json.Unmarshal(answers[0].Result, v); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// hostileAnswer is one JSON-RPC answer, members matched exactly.
type hostileAnswer struct {
	ID     json.RawMessage
	HasID  bool
	Result json.RawMessage
	Error  *struct {
		Code    *int64 `json:"code"`
		Message string `json:"message"`
	}
}

// rpcAnswers reads the JSON-RPC answers of an HTTP answer from /mcp: a
// JSON body of one answer or an array, or an event stream of them. An
// answer that is no JSON-RPC 2.0 response (no "jsonrpc": "2.0", neither or
// both of result and error, an error without an integer code or with code
// 0) is an error.
func rpcAnswers(resp *http.Response, body []byte) ([]hostileAnswer, error) {
	var raws []json.RawMessage
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		t := bytes.TrimSpace(body)
		if len(t) > 0 && t[0] == '[' {
			if err := json.Unmarshal(t, &raws); err != nil {
				return nil, fmt.Errorf("a JSON array that does not parse: %v", err)
			}
		} else {
			raws = []json.RawMessage{t}
		}
	case strings.HasPrefix(ct, "text/event-stream"):
		for _, line := range strings.Split(string(body), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(data) != "" {
				raws = append(raws, json.RawMessage(data))
			}
		}
	default:
		return nil, fmt.Errorf("Content-Type %q is no JSON-RPC answer", ct)
	}
	var out []hostileAnswer
	for _, raw := range raws {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return nil, fmt.Errorf("an answer that is no JSON object: %.200s", raw)
		}
		if _, ok := members["method"]; ok {
			continue // a request or notification of the server's own
		}
		var a hostileAnswer
		a.ID, a.HasID = members["id"]
		a.Result = members["result"]
		if string(members["jsonrpc"]) != `"2.0"` {
			return nil, fmt.Errorf(`an answer without "jsonrpc": "2.0": %.200s`, raw)
		}
		if e, ok := members["error"]; ok {
			if err := json.Unmarshal(e, &a.Error); err != nil || a.Error == nil || a.Error.Code == nil || *a.Error.Code == 0 {
				return nil, fmt.Errorf("an error without a JSON-RPC code: %.300s", raw)
			}
		}
		if (a.Result == nil) == (a.Error == nil) {
			return nil, fmt.Errorf("an answer with neither or both of result and error: %.200s", raw)
		}
		if !a.HasID {
			return nil, fmt.Errorf("an answer without an id member (null when unknown): %.200s", raw)
		}
		out = append(out, a)
	}
	return out, nil
}

// Errors /mcp answers are JSON-RPC error objects a client can parse — a
// standard code, a short message without Go's type names or the input, an
// id (null when unknown) — with the HTTP status the transport asks for.
// Before: plain text ("malformed payload: …", "invalid request: missing
// id", "session not found", "Forbidden: host …", "404 page not found"),
// code 0 with a 10 KB message for bad initialize params and for a second
// initialize, no id member in the 400 for a missing session, {"id":795,
// "ID":1} answered as id 1, an id beyond int64 answered with another, and a
// body with trailing bytes or invalid UTF-8 taken on 2026-07-28.
func TestMCPHTTPErrorsAreJSONRPC(t *testing.T) {
	h := startHostile(t)
	long := strings.Repeat("A", 10<<10)
	for _, tc := range []struct {
		name   string
		era    string
		body   string
		extra  map[string]string
		status int
		code   int64
		id     string // the id the error must carry
	}{
		{"not JSON", "2026-07-28", `{"jsonrpc":`, nil, 400, -32700, "null"},
		{"trailing bytes", "2026-07-28", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + modernMeta + `}}garbage`, nil, 400, -32700, "null"},
		{"invalid UTF-8", "2026-07-28", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{" + modernMeta + ",\"x\":\"\xff\xfe\"}}", nil, 400, -32700, "null"},
		{"a call without an id", "2026-07-28", `{"jsonrpc":"2.0","method":"tools/list","params":{` + modernMeta + `}}`, nil, 400, -32600, "null"},
		{"an id and no method", "2026-07-28", `{"jsonrpc":"2.0","id":3}`, nil, 400, -32600, "3"},
		{"an id beyond int64", "2026-07-28", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list","params":{` + modernMeta + `}}`, nil, 400, -32600, "9223372036854775808"},
		{"a fractional id", "2025-11-25", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, nil, 400, -32600, "1.5"},
		{"an unknown session", "", `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "no-such-session", "Mcp-Protocol-Version": "2025-11-25"}, 404, -32600, "6"},
		{"a host not served", "2026-07-28", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + modernMeta + `}}`, map[string]string{"Host": "evil.example"}, 403, -32600, "null"},
		{"no session, a notification", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, 400, -32600, "null"},
		{"member names match exactly", "", `{"jsonrpc":"2.0","id":795,"method":"tools/list","ID":1}`, nil, 400, -32600, "795"},
		{"initialize with 10 KB of bad params", "", `{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":"` + long + `","clientInfo":{"name":"x","version":"1"}}}`, nil, 200, -32602, "8"},
		{"a second initialize", "2025-11-25", `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil, 200, -32600, "9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := []byte(tc.body)
			var resp *http.Response
			var body []byte
			if host, ok := tc.extra["Host"]; ok {
				r, err := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(req))
				if err != nil {
					t.Fatal(err)
				}
				r.Host = host
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("Authorization", "Bearer "+h.token)
				if resp, err = h.client.Do(r); err != nil {
					t.Fatal(err)
				}
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			} else {
				resp, body = h.post(t, tc.era, req, tc.extra)
			}
			if resp.StatusCode != tc.status {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tc.status)
			}
			answers, err := rpcAnswers(resp, body)
			if err != nil {
				t.Fatalf("%v; body: %.300s", err, body)
			}
			if len(answers) != 1 || answers[0].Error == nil {
				t.Fatalf("want one error answer, got %.300s", body)
			}
			a := answers[0]
			if *a.Error.Code != tc.code || string(a.ID) != tc.id {
				t.Errorf("error %d with id %s, want %d with id %s: %.300s", *a.Error.Code, a.ID, tc.code, tc.id, body)
			}
			if m := a.Error.Message; len(m) > 300 || strings.Contains(m, "AAAAAAAA") || strings.Contains(m, "Go struct") || strings.Contains(m, "mcp.") {
				t.Errorf("the message is long, echoes the input or names Go types: %.400s", m)
			}
		})
	}
	if resp, body := h.post(t, "2026-07-28", []byte(`{"jsonrpc":"2.0","id":"alive","method":"tools/list","params":{`+modernMeta+`}}`), map[string]string{"Mcp-Method": "tools/list"}); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping after the errors: HTTP %d %s", resp.StatusCode, body)
	}
}

// hostileGen makes JSON-RPC messages from a fuzzer's bytes.
type hostileGen struct {
	h    *hostile
	data []byte
}

// next is a number in [0, n) taken from the input (0 once it is spent).
func (g *hostileGen) next(n int) int {
	if len(g.data) == 0 || n <= 1 {
		return 0
	}
	v := int(g.data[0])
	g.data = g.data[1:]
	return v % n
}

// value is a JSON value of any kind, hostile ones included.
func (g *hostileGen) value(depth int) string {
	switch g.next(14) {
	case 0:
		return "null"
	case 1:
		return strconv.Itoa(g.next(256) - 128)
	case 2:
		return "1.5e308"
	case 3:
		return "true"
	case 4:
		return `"` + strings.Repeat(`\u0000`, g.next(64)) + `"`
	case 5:
		return `"` + strings.Repeat("x", g.next(4)*(16<<10)) + `"`
	case 6:
		n := g.next(4) * 400
		return strings.Repeat("[", n) + strings.Repeat("]", n)
	case 7:
		return `"\ud800 \" ' < > & %s %n ../../etc/passwd"`
	case 8:
		if depth < 3 {
			return "[" + g.value(depth+1) + "," + g.value(depth+1) + "]"
		}
		return "[]"
	case 9:
		if depth < 3 {
			return `{"a":` + g.value(depth+1) + `,"":` + g.value(depth+1) + "}"
		}
		return "{}"
	case 10:
		return `"msg_` + strconv.Itoa(g.next(1000)) + `"`
	case 11:
		return `"2026-13-45"`
	case 12:
		return "-9223372036854775809"
	}
	return `"` + string(rune('a'+g.next(26))) + `"`
}

// name is one of names, or a name the server does not have.
func (g *hostileGen) name(names []string) string {
	if i := g.next(len(names) + 2); i < len(names) {
		return strconv.Quote(names[i])
	} else if i == len(names) {
		return `"no_such_thing"`
	}
	return g.value(0)
}

// params is the params of a call of method.
func (g *hostileGen) params(method string, modern bool) string {
	var members []string
	switch method {
	case "tools/call":
		var args []string
		var names []string
		for _, t := range g.h.tools {
			names = append(names, t.name)
		}
		i := g.next(len(g.h.tools))
		for _, a := range g.h.tools[i].args {
			if g.next(3) > 0 {
				args = append(args, strconv.Quote(a)+":"+g.value(0))
			}
		}
		if g.next(4) == 0 {
			args = append(args, `"unexpected":`+g.value(0))
		}
		name := strconv.Quote(g.h.tools[i].name)
		if g.next(4) == 0 {
			name = g.name(names)
		}
		members = append(members, `"name":`+name, `"arguments":{`+strings.Join(args, ",")+"}")
		if g.next(6) == 0 {
			members[1] = `"arguments":` + g.value(0)
		}
	case "prompts/get":
		members = append(members, `"name":`+g.name(g.h.prompts), `"arguments":{"month":`+g.value(0)+`,"id":`+g.value(0)+"}")
	case "resources/read", "resources/subscribe":
		uri := g.h.uris[g.next(len(g.h.uris))]
		if open := strings.IndexByte(uri, '{'); open >= 0 {
			uri = uri[:open] + []string{"x", "msg_1", "..%2f..", "", "%00"}[g.next(5)]
		}
		members = append(members, `"uri":`+[]string{strconv.Quote(uri), g.value(0)}[g.next(2)])
	case "completion/complete":
		members = append(members, `"ref":{"type":"ref/prompt","name":`+g.name(g.h.prompts)+`}`, `"argument":{"name":"id","value":`+g.value(0)+"}")
	case "initialize":
		members = append(members, `"protocolVersion":`+[]string{`"2025-03-26"`, `"2024-11-05"`, `"1999-01-01"`, g.value(0)}[g.next(4)], `"capabilities":`+g.value(0), `"clientInfo":{"name":"f","version":"1"}`)
	case "logging/setLevel":
		members = append(members, `"level":`+g.value(0))
	default:
		if g.next(2) == 0 {
			members = append(members, `"cursor":`+g.value(0))
		}
	}
	if modern && g.next(8) > 0 {
		members = append(members, modernMeta)
	}
	return "{" + strings.Join(members, ",") + "}"
}

var hostileMethods = []string{"tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read",
	"resources/subscribe", "prompts/list", "prompts/get", "completion/complete", "ping", "initialize", "logging/setLevel",
	"notifications/initialized", "notifications/cancelled", "server/discover", "no/such/method", "", "rpc.discover"}

// message is one JSON-RPC message, with what it is framed as varied.
func (g *hostileGen) message(modern bool) string {
	method := hostileMethods[g.next(len(hostileMethods))]
	var members []string
	switch g.next(6) {
	case 0:
		members = append(members, `"jsonrpc":"1.0"`)
	case 1:
	default:
		members = append(members, `"jsonrpc":"2.0"`)
	}
	switch g.next(10) {
	case 0: // a notification, or a call without its id
	case 1:
		members = append(members, `"id":`+g.value(0))
	case 2:
		members = append(members, `"id":null`)
	default:
		members = append(members, `"id":`+strconv.Itoa(g.next(1000)))
	}
	switch g.next(12) {
	case 0:
	case 1:
		members = append(members, `"method":`+g.value(0))
	default:
		members = append(members, `"method":`+strconv.Quote(method))
	}
	switch g.next(8) {
	case 0:
	case 1:
		members = append(members, `"params":`+g.value(0))
	default:
		members = append(members, `"params":`+g.params(method, modern))
	}
	if g.next(10) == 0 {
		members = append(members, `"result":{}`)
	}
	return "{" + strings.Join(members, ",") + "}"
}

// standardHeaders are the Mcp-Method and Mcp-Name headers a 2026-07-28
// client sends with the message body, when its method and name are
// strings a header can carry.
func standardHeaders(body string) map[string]string {
	var m struct {
		Method json.RawMessage `json:"method"`
		Params struct {
			Name json.RawMessage `json:"name"`
			URI  json.RawMessage `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(body), &m) != nil {
		return nil
	}
	out := map[string]string{}
	for k, raw := range map[string]json.RawMessage{"Mcp-Method": m.Method, "Mcp-Name": m.Params.Name} {
		if k == "Mcp-Name" && m.Params.URI != nil {
			raw = m.Params.URI
		}
		var v string
		if json.Unmarshal(raw, &v) != nil || v == "" || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
			continue
		}
		out[k] = v
	}
	return out
}

// FuzzMCPHostileClient sends /mcp of a running server.Run what a hostile
// or broken client would, built from the server's own tools, prompts and
// resources: unknown methods and names, arguments of every type, nulls,
// huge and deeply nested values, batches, missing ids, notifications
// carrying ids, on both eras, and the fuzzer's own bytes. Every POST must
// be answered with JSON-RPC results or errors (202 and no body for
// notifications), and the server must answer a ping after it.
func FuzzMCPHostileClient(f *testing.F) {
	h := startHostile(f)
	for _, seed := range []string{"", "\x00\x01\x02", "\x05\x05\x05\x05\x05\x05\x05\x05", "\xff\x10\x03\x07\x01\x09\x02\x0b",
		"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", "\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0", "\x09\x09\x02\x02\x01\x06\x03"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { hostileRound(t, h, data) })
}

// hostileRound sends one hostile POST built from data, checks its answer
// and that the server still answers.
func hostileRound(t *testing.T, h *hostile, data []byte) {
	{
		g := &hostileGen{h: h, data: data}
		era := []string{"2026-07-28", "2025-11-25"}[g.next(2)]
		modern := era == "2026-07-28"
		var body string
		switch g.next(8) {
		case 0: // a batch
			body = "[" + g.message(modern) + "," + g.message(modern) + "]"
		case 1: // the fuzzer's own bytes
			body = string(g.data)
			g.data = nil
		case 2:
			body = g.message(modern) + []string{"garbage", "\xff", " ", "{}"}[g.next(4)]
		default:
			body = g.message(modern)
		}
		var extra map[string]string
		if modern && g.next(8) > 0 {
			extra = standardHeaders(body)
		}
		resp, got := h.post(t, era, []byte(body), extra)
		if resp.StatusCode == http.StatusNotFound && !modern && !json.Valid(got) {
			t.Fatalf("the session is gone, answered in plain text: %.300s", got)
		}
		switch {
		case resp.StatusCode == http.StatusAccepted:
			if len(bytes.TrimSpace(got)) > 0 {
				t.Errorf("202 with a body: %.300s", got)
			}
		default:
			answers, err := rpcAnswers(resp, got)
			if err != nil {
				t.Fatalf("HTTP %d: %v\nsent: %.500s\ngot: %.500s", resp.StatusCode, err, body, got)
			}
			if len(answers) == 0 {
				t.Fatalf("HTTP %d with no answer\nsent: %.500s\ngot: %.500s", resp.StatusCode, body, got)
			}
			for _, a := range answers {
				if a.Error != nil && (len(a.Error.Message) > 2000) {
					t.Errorf("an error message of %d bytes\nsent: %.300s", len(a.Error.Message), body)
				}
			}
		}
		if !modern && resp.StatusCode == http.StatusNotFound {
			h.openSession(t) // the session ended (a DELETE-like message); open another
		}
		if resp.StatusCode < 500 && len(data)%4 != 0 {
			return // a server that went down fails the next POST; a ping every few rounds says so sooner
		}
		ping, pong := h.post(t, "2026-07-28", []byte(`{"jsonrpc":"2.0","id":"alive","method":"tools/list","params":{`+modernMeta+`}}`), map[string]string{"Mcp-Method": "tools/list"})
		if ping.StatusCode != http.StatusOK {
			t.Fatalf("ping after\n%.500s\nHTTP %d %.300s", body, ping.StatusCode, pong)
		}
	}
}
