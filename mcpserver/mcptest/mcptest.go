// Package mcptest helps tests drive the MCP server with plain JSON-RPC over
// HTTP, for the protocol-2026-07-28 cases a go-sdk client cannot express: the
// per-request _meta (protocol version, client capabilities), requestState
// and inputResponses of a confirmed tools/call.
//
// ToolCall.Send is the entry point; FormCaps and YesAnswer are the usual
// capabilities and answer of a client that confirms with a form.
package mcptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// Send posts the call with client (http.DefaultClient when nil).
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
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	if err != nil {
		return Reply{}, err
	}
	req, err := http.NewRequest("POST", c.URL, bytes.NewReader(body))
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", Modern)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", c.Tool)
	resp, err := client.Do(req)
	if err != nil {
		return Reply{}, fmt.Errorf("%s: %w", c.Tool, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, fmt.Errorf("%s: reading the answer: %w", c.Tool, err)
	}
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if json.Unmarshal(raw, &out) != nil {
		return Reply{Status: resp.StatusCode, Body: string(raw)}, nil
	}
	return Reply{Status: resp.StatusCode, Result: out.Result, Error: out.Error}, nil
}

// InputRequired reports whether a result asks the user a question.
func InputRequired(r map[string]any) bool {
	return r["resultType"] == "input_required" && r["requestState"] != nil && r["inputRequests"] != nil
}

// ResultText returns a result's content as JSON text, for assertions.
func ResultText(r map[string]any) string {
	b, _ := json.Marshal(r["content"])
	return string(b)
}
