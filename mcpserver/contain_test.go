package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// panicSecret is in every injected panic's value: no answer may carry it.
const panicSecret = "secret-panic-detail"

// boom is a product whose tool and resource panic.
func boom() *mcpserver.Product {
	return &mcpserver.Product{
		Name:   "boom",
		Policy: mcpserver.Policy{DeclineCode: "user_declined"},
		Tools: []mcpserver.Tool{
			mcpserver.NewTool(mcpserver.ToolSpec{Name: "boom_explode", Description: "Panics.", Access: mcpserver.Read},
				func(context.Context, *mcpserver.Caller, struct{}) (noteOut, error) {
					panic(panicSecret)
				}),
			mcpserver.NewTool(mcpserver.ToolSpec{Name: "boom_nil_map", Description: "Panics with a runtime error.", Access: mcpserver.Read},
				func(context.Context, *mcpserver.Caller, struct{}) (noteOut, error) {
					var m map[string]int
					//lint:ignore SA5000 the panic is the point of this test
					m[panicSecret]++
					return noteOut{}, nil
				}),
		},
		Resources: []mcpserver.Resource{
			{Template: "kobana://boom/things/{id}", Name: "thing", Tool: "boom_explode",
				Read: func(context.Context, *mcpserver.Caller, string, map[string]string) (any, error) {
					panic(panicSecret)
				}},
		},
	}
}

// panicsHeard collects the panics reported while a test runs.
type panicsHeard struct {
	mu    sync.Mutex
	where []string
}

func listenPanics(t *testing.T) *panicsHeard {
	h := &panicsHeard{}
	stop := panics.Listen(func(p *panics.Panic) {
		if p.Surface != panics.MCP || len(p.Stack) == 0 {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.where = append(h.where, p.Where)
	})
	t.Cleanup(stop)
	return h
}

func (h *panicsHeard) has(where string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.where {
		if w == where {
			return true
		}
	}
	return false
}

// A panic in a tool, a resource reader or a middleware (here the request
// observer, which the assembled server uses for metrics) is answered
// -32603 with nothing of the panic, reported on panics.MCP with where it
// happened, and the session answers the next request: on both eras over
// HTTP and on a stdio connection. Before, the SDK's request goroutine had
// no recover and the test binary died.
func TestPanicIsAnsweredInternalError(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	srv, err := mcpserver.New(mcpserver.Options{Store: e.st, Products: []*mcpserver.Product{e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"}), boom()},
		Observe: func(o mcpserver.RequestObserved) {
			if o.Method == "prompts/list" {
				panic(panicSecret)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{}))
	t.Cleanup(hs.Close) // after the sessions, which close in their own cleanups
	heard := listenPanics(t)

	type transport struct {
		name string
		open func() mcp.Transport
	}
	for _, tr := range []transport{
		{"http", func() mcp.Transport { return mcptest.HTTP(hs.URL+"/mcp", e.tokens["owner"]) }},
		{"stdio", func() mcp.Transport { return mcptest.Stdio(t, srv, e.tokens["owner"]) }},
	} {
		for _, era := range eras {
			cs := mcptest.Connect(t, tr.open(), era, nil)
			ctx := t.Context()
			for _, c := range []struct {
				name  string
				call  func() error
				where string
			}{
				{"tool", func() error {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "boom_explode", Arguments: map[string]any{}})
					return err
				}, "tools/call boom_explode"},
				{"runtime error in a tool", func() error {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "boom_nil_map", Arguments: map[string]any{}})
					return err
				}, "tools/call boom_nil_map"},
				{"resource", func() error {
					_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "kobana://boom/things/t1"})
					return err
				}, "resources/read"},
				{"middleware", func() error {
					_, err := cs.ListPrompts(ctx, nil)
					return err
				}, "prompts/list"},
			} {
				before := panics.Count(panics.MCP)
				err := c.call()
				if code := rpcCode(err); code != -32603 {
					t.Errorf("%s %s, panic in a %s: %v (code %d), want -32603", tr.name, era, c.name, err, code)
				}
				if err != nil && (strings.Contains(err.Error(), panicSecret) || strings.Contains(err.Error(), "goroutine") || strings.Contains(err.Error(), "runtime")) {
					t.Errorf("%s %s, panic in a %s: the answer tells of the panic: %v", tr.name, era, c.name, err)
				}
				if panics.Count(panics.MCP) <= before {
					t.Errorf("%s %s, panic in a %s: panics.Count(MCP) did not grow", tr.name, era, c.name)
				}
				if !heard.has(c.where) {
					t.Errorf("%s %s, panic in a %s: no report where %q (heard %v)", tr.name, era, c.name, c.where, heard.where)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_get", Arguments: map[string]any{"id": "n1"}})
				if err != nil || res.IsError {
					t.Fatalf("%s %s: after a panic in a %s, notes_get: %v %s", tr.name, era, c.name, err, textOf(res))
				}
			}
		}
	}
}
