package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// errInternal answers a request whose handling panicked: the client learns
// that it failed, and nothing of why (no stack, no value, no type).
var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}

// contain is the outermost middleware. The SDK runs each request in a
// goroutine of its own with no recover, so a panic anywhere below — a
// tool, a resource reader, a prompt, a completion, the permission checks,
// the observer — would end the process: contain stops it, reports it on
// panics.MCP (the assembled server logs its stack and counts it) and
// answers -32603.
func (s *Server) contain(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		var p error
		defer func() {
			if p != nil {
				res, err = nil, errInternal
			}
		}()
		defer panics.Recover(panics.MCP, s.where(method, req), &p)
		return next(ctx, method, req)
	}
}

// where names a request in a panic's report: its method (the SDK hands
// middleware only the methods it serves) and, for a
// tools/call, the tool ("unknown" for a name the server has no tool of,
// so that a client cannot write what it likes into the logs).
func (s *Server) where(method string, req mcp.Request) string {
	if ct, ok := req.(*mcp.CallToolRequest); ok && ct.Params != nil {
		if s.tools[ct.Params.Name] != nil {
			return method + " " + ct.Params.Name
		}
		return method + " unknown"
	}
	return method
}
