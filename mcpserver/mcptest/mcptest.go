package mcptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Modern is the stateless protocol version the calls speak.
const Modern = "2026-07-28"

// FormCaps declares elicitation-form support.
var FormCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}

// YesAnswer is the inputResponses of a user who confirmed the action.
var YesAnswer = map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}

// ToolCall is one 2026-07-28 tools/call.
type ToolCall struct {
	URL   string
	Token string
	Tool  string
	Args  map[string]any
	// Caps are the client capabilities sent in _meta.
	Caps map[string]any
	// State and Responses retry an input_required answer.
	State     string
	Responses map[string]any
}

// Reply is the server's answer to a ToolCall.
type Reply struct {
	Status int
	Result map[string]any
	Error  map[string]any
	// Body is the raw answer when it was not JSON-RPC.
	Body string
}

// Send posts the call with client (http.DefaultClient when nil). The answer
// is checked against the official 2026-07-28 schema, and a tool result
// against the tool's outputSchema (from tools/list with the same token): a
// violation is returned as an error, with the Reply.
func (c ToolCall) Send(client *http.Client) (Reply, error) {
	if client == nil {
		client = http.DefaultClient
	}
	params := map[string]any{
		"name":      c.Tool,
		"arguments": c.Args,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    Modern,
			"io.modelcontextprotocol/clientCapabilities": c.Caps,
		},
	}
	if c.State != "" {
		params["requestState"] = c.State
	}
	if c.Responses != nil {
		params["inputResponses"] = c.Responses
	}
	check := toolChecker(client, c.URL, c.Token)
	status, raw, err := post(client, c.URL, c.Token, "tools/call", c.Tool, params, check)
	if err != nil {
		return Reply{}, fmt.Errorf("%s: %w", c.Tool, err)
	}
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if json.Unmarshal(raw, &out) != nil {
		return Reply{Status: status, Body: string(raw)}, nil
	}
	reply := Reply{Status: status, Result: out.Result, Error: out.Error}
	if err := check.Received(raw); err != nil {
		return reply, fmt.Errorf("%s: %w", c.Tool, err)
	}
	return reply, nil
}

// requestIDs numbers the requests post sends, so that one Checker can
// follow concurrent calls.
var requestIDs atomic.Int64

// post sends one 2026-07-28 request and returns the HTTP status and body.
// check (when not nil) learns the request.
func post(client *http.Client, url, token, method, name string, params map[string]any, check *Checker) (int, []byte, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": requestIDs.Add(1), "method": method, "params": params})
	if err != nil {
		return 0, nil, err
	}
	if check != nil {
		check.Sent(body)
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", Modern)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, raw, nil
}

// checkers holds one Checker per endpoint and token, primed with the
// tools that token may list.
var checkers sync.Map // url + "\x00" + token → *primedChecker

type primedChecker struct {
	once  sync.Once
	check *Checker
}

// toolChecker returns the Checker of an endpoint and token, listing the
// tools once, on first use (concurrent first calls wait for that one
// listing); a token that cannot list gets a Checker that knows no tool.
func toolChecker(client *http.Client, url, token string) *Checker {
	v, _ := checkers.LoadOrStore(url+"\x00"+token, &primedChecker{})
	p := v.(*primedChecker)
	p.once.Do(func() {
		p.check = NewChecker(Modern)
		_, raw, err := post(client, url, token, "tools/list", "", map[string]any{
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    Modern,
				"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			},
		}, p.check)
		if err == nil {
			p.check.Received(raw) // a broken list fails the tests that list tools
		}
	})
	return p.check
}

// InputRequired reports whether a result asks the user a question.
func InputRequired(r map[string]any) bool {
	return r["resultType"] == "input_required" && r["requestState"] != nil && r["inputRequests"] != nil
}

// ResultCode returns the error code of a raw tool result that failed (the
// text before the first ": " of its first content), "" for a success.
func ResultCode(r map[string]any) string {
	if r["isError"] != true {
		return ""
	}
	content, _ := r["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	first, _ := content[0].(map[string]any)
	text, _ := first["text"].(string)
	code, _, _ := strings.Cut(text, ": ")
	return code
}

// ResultText returns a result's content as JSON text, for assertions.
func ResultText(r map[string]any) string {
	b, _ := json.Marshal(r["content"])
	return string(b)
}
