package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/kobana/workflow/store"
)

// Call runs a tool in-process for a principal, as a tools/call from that
// principal would run it: the principal's role and scopes decide whether
// it may (permission_denied otherwise), the arguments are checked against
// the tool's input schema, and the answer is the tool's structured result.
// A failure is a *ToolError with the code an MCP client would read
// (not_found, invalid_arguments, internal_error, …). A destructive tool is
// refused with confirmation_required: an in-process client has no way yet
// to carry the person's confirmation. It is how the console, one more
// client of the products, reads through the same handlers as MCP.
func (s *Server) Call(ctx context.Context, p store.Principal, tool string, args json.RawMessage) (json.RawMessage, error) {
	e := s.tools[tool]
	if e == nil {
		return nil, Errorf("invalid_arguments", "unknown tool %s", tool)
	}
	c := &Caller{Principal: p, Allowed: allowedTools(p, s.opts.Roles, s.tools), ProtocolVersion: ProtocolModern}
	if !c.May(tool) {
		return nil, Errorf("permission_denied", "your role (%s) and scopes (%s) do not allow %s", c.Role, strings.Join(c.Scopes, ","), tool)
	}
	if e.tool.Destructive {
		return nil, Errorf(CodeConfirmationRequired, "%s must be confirmed by the person before it runs; nothing was run", tool)
	}
	if err := e.tool.validate(args); err != nil {
		return nil, Errorf("invalid_arguments", "%v", err)
	}
	out, err := e.tool.handler(WithCaller(ctx, c), c, args)
	if err != nil {
		var te *ToolError
		switch {
		case errors.As(err, &te):
			return nil, te
		case errors.Is(err, ErrNotFound), errors.Is(err, store.ErrNotFound):
			return nil, Errorf("not_found", "%v", err)
		}
		s.log.Error("tool failed", "tool", tool, "error", err, "client", "in-process")
		return nil, Errorf("internal_error", "%s failed; try again later", tool)
	}
	b, err := e.tool.encode(out)
	if err != nil {
		s.log.Error("tool result outside its output schema", "tool", tool, "error", err)
		return nil, Errorf(CodeOutputMismatch, "%s ran, but its result does not match its output schema", tool)
	}
	return b, nil
}
