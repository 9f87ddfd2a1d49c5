package mcpserver

import (
	"context"
	"slices"

	"github.com/kobana/workflow/mcpserver/store"
)

// Access is what a tool does, from least to most powerful.
type Access int

const (
	// Read tools only read the workspace.
	Read Access = iota
	// Write tools change the workspace's records.
	Write
	// Admin tools change what can act on the workspace: secrets, webhook
	// signing secrets, deletions of whole configurations.
	Admin
)

// String names the access level.
func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case Admin:
		return "admin"
	}
	return "unknown"
}

// DefaultRoles returns (a copy of) the role table used when Options.Roles
// is nil: an owner may run everything, an operator everything but Admin
// tools, a viewer only Read tools. Any other role may run nothing.
func DefaultRoles() map[store.Role]Access {
	return map[store.Role]Access{
		"owner":    Admin,
		"operator": Write,
		"viewer":   Read,
	}
}

// Caller is the authenticated principal of one request, with the set of
// tools it may run and what its client can do.
type Caller struct {
	store.Principal
	// Allowed holds the names of the tools the caller may run.
	Allowed map[string]bool
	// ProtocolVersion is the protocol version of this request.
	ProtocolVersion string
	// FormElicitation reports whether the client declared elicitation-form
	// support for this request.
	FormElicitation bool
}

// May reports whether the caller may run the named tool.
func (c *Caller) May(tool string) bool { return c != nil && c.Allowed[tool] }

// MayAll reports whether the caller may run every named tool.
func (c *Caller) MayAll(tools []string) bool {
	for _, t := range tools {
		if !c.May(t) {
			return false
		}
	}
	return true
}

// Modern reports whether the request speaks 2026-07-28 or later.
func (c *Caller) Modern() bool { return c.ProtocolVersion >= ProtocolModern }

// ProtocolModern is the first stateless protocol version.
const ProtocolModern = "2026-07-28"

type callerKey struct{}

// CallerFrom returns the caller of the request being handled.
func CallerFrom(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// WithCaller returns a context carrying c (for products' own tests).
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// allowedTools computes role ∩ scope over every tool of every product.
func allowedTools(p store.Principal, roles map[store.Role]Access, tools map[string]*toolEntry) map[string]bool {
	max, ok := roles[p.Role]
	if !ok {
		return map[string]bool{}
	}
	canWrite := slices.Contains(p.Scopes, "write")
	canRead := slices.Contains(p.Scopes, "read") || canWrite
	out := make(map[string]bool, len(tools))
	for name, t := range tools {
		a := t.tool.Access
		if a > max {
			continue
		}
		if a == Read && !canRead {
			continue
		}
		if a > Read && !canWrite {
			continue
		}
		out[name] = true
	}
	return out
}
