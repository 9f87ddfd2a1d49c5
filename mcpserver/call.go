package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/kobana/workflow/mcpserver/store"
)

// Call runs a tool in-process for a principal, as a tools/call from that
// principal would run it: the principal's role and scopes decide whether
// it may (permission_denied otherwise), the arguments are checked against
// the tool's input schema, and the answer is the tool's structured result.
// A failure is a *ToolError with the code an MCP client would read
// (not_found, invalid_arguments, internal_error, …). A destructive tool is
// refused with confirmation_required (see CallConfirmed). It is how the
// console, one more client of the products, reads and acts through the
// same handlers as MCP.
func (s *Server) Call(ctx context.Context, p store.Principal, tool string, args json.RawMessage) (json.RawMessage, error) {
	return s.call(ctx, p, tool, args, false)
}

// CallConfirmed is Call for a destructive tool the person confirmed in
// the in-process client: the client asked first (what, with which
// arguments, how many), after Check said the call can run, and keeps each
// confirmation single-use. Permissions and arguments are checked as by
// Call.
func (s *Server) CallConfirmed(ctx context.Context, p store.Principal, tool string, args json.RawMessage) (json.RawMessage, error) {
	return s.call(ctx, p, tool, args, true)
}

// Check runs a destructive tool's check (WithCheck) for a principal, as
// before an MCP client is asked to confirm: nil when the call can run;
// the permission and argument checks of Call come first.
func (s *Server) Check(ctx context.Context, p store.Principal, tool string, args json.RawMessage) error {
	e, c, err := s.admit(p, tool, args)
	if err != nil {
		return err
	}
	if e.tool.check == nil {
		return nil
	}
	return s.toolFailure(tool, e.tool.check(WithCaller(ctx, c), c, args))
}

// May reports whether a principal's role and scopes allow a tool.
func (s *Server) May(p store.Principal, tool string) bool {
	return allowedTools(p, s.opts.Roles, s.tools)[tool]
}

// admit finds a tool a principal may run with valid arguments.
func (s *Server) admit(p store.Principal, tool string, args json.RawMessage) (*toolEntry, *Caller, error) {
	e := s.tools[tool]
	if e == nil {
		return nil, nil, Errorf("invalid_arguments", "unknown tool %s", tool)
	}
	c := &Caller{Principal: p, Allowed: allowedTools(p, s.opts.Roles, s.tools), ProtocolVersion: ProtocolModern}
	if !c.May(tool) {
		return nil, nil, Errorf("permission_denied", "your role (%s) and scopes (%s) do not allow %s", c.Role, strings.Join(c.Scopes, ","), tool)
	}
	if err := e.tool.validate(args); err != nil {
		return nil, nil, Errorf("invalid_arguments", "%v", err)
	}
	return e, c, nil
}

// toolFailure is a handler's or check's error as Call returns it.
func (s *Server) toolFailure(tool string, err error) error {
	if err == nil {
		return nil
	}
	var te *ToolError
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, ErrNotFound), errors.Is(err, store.ErrNotFound):
		return Errorf("not_found", "%v", err)
	}
	s.log.Error("tool failed", "tool", tool, "error", err, "client", "in-process")
	return Errorf("internal_error", "%s failed; try again later", tool)
}

func (s *Server) call(ctx context.Context, p store.Principal, tool string, args json.RawMessage, confirmed bool) (json.RawMessage, error) {
	e, c, err := s.admit(p, tool, args)
	if err != nil {
		return nil, err
	}
	if e.tool.Destructive && !confirmed {
		return nil, Errorf(CodeConfirmationRequired, "%s must be confirmed by the person before it runs; nothing was run", tool)
	}
	out, err := e.tool.handler(WithCaller(ctx, c), c, args)
	if err != nil {
		return nil, s.toolFailure(tool, err)
	}
	b, err := e.tool.encode(out)
	if err != nil {
		s.log.Error("tool result outside its output schema", "tool", tool, "error", err)
		return nil, Errorf(CodeOutputMismatch, "%s ran, but its result does not match its output schema", tool)
	}
	return b, nil
}
