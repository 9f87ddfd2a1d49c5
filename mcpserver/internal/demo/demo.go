// Package demo is the demo organization every product seeds its records
// into: its ids, people, workspaces, memberships and tokens. Products and
// commands name the demo's records through these constants, so that
// documentation, tests and `kobana serve -demo` agree.
//
// Entry points: Identity creates the organization once; Tokens mints the
// demo people's tokens. Each product seeds its own records on top (package
// inboxdemo's Seed, package billing's SeedDemo).
package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kobana/workflow/mcpserver/store"
)

// The demo's identifiers.
const (
	// Organization is the demo customer account.
	Organization = "org_demo"
	// Workspace is the Finance workspace, where the demo's records are.
	Workspace = "ws_finance"
	// Sandbox is a second workspace of the organization, nearly empty.
	Sandbox = "ws_sandbox"
	// Owner is Ana, owner of both workspaces.
	Owner = "per_ana"
	// Viewer is Bruno, viewer of Finance.
	Viewer = "per_bruno"
)

// Token is a demo token, with whose it is.
type Token struct {
	Person    string
	Name      string
	Email     string
	Role      string
	Workspace string
	Scopes    []string
	Token     string
}

// Line is the one-line description `kobana serve -demo` prints.
func (t Token) Line() string {
	return fmt.Sprintf("token for %s <%s>, %s of workspace %s, scopes %s: %s",
		t.Name, t.Email, t.Role, t.Workspace, strings.Join(t.Scopes, ","), t.Token)
}

// Identity creates the demo organization, its two workspaces, its people
// and their memberships, unless the Finance workspace exists already. It
// reports whether it created them (the products then seed their records).
func Identity(ctx context.Context, st store.Identity) (created bool, err error) {
	if _, err := st.GetWorkspace(ctx, Workspace); err == nil {
		return false, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("looking for the demo workspace: %w", err)
	}
	for _, step := range []func() error{
		func() error {
			return st.PutOrganization(ctx, store.Organization{ID: Organization, Name: "Demo Comércio Ltda"})
		},
		func() error {
			return st.PutWorkspace(ctx, store.Workspace{ID: Workspace, Organization: Organization, Name: "Finance", Slug: "finance"})
		},
		func() error {
			return st.PutWorkspace(ctx, store.Workspace{ID: Sandbox, Organization: Organization, Name: "Sandbox", Slug: "sandbox"})
		},
		func() error {
			return st.PutPerson(ctx, store.Person{ID: Owner, Organization: Organization, Name: "Ana Souza", Email: "ana@demo.kobana.dev"})
		},
		func() error {
			return st.PutPerson(ctx, store.Person{ID: Viewer, Organization: Organization, Name: "Bruno Lima", Email: "bruno@demo.kobana.dev"})
		},
		func() error { return st.SetMembership(ctx, Workspace, Owner, "owner") },
		func() error { return st.SetMembership(ctx, Workspace, Viewer, "viewer") },
		func() error { return st.SetMembership(ctx, Sandbox, Owner, "owner") },
	} {
		if err := step(); err != nil {
			return false, fmt.Errorf("creating the demo organization: %w", err)
		}
	}
	return true, nil
}

// Tokens mints fresh tokens for the demo: read-write for the owner,
// read-only for the viewer, both on the Finance workspace.
func Tokens(ctx context.Context, st store.Identity) ([]Token, error) {
	var out []Token
	for _, t := range []Token{
		{Person: Owner, Name: "Ana Souza", Email: "ana@demo.kobana.dev", Role: "owner", Workspace: Workspace, Scopes: []string{"read", "write"}},
		{Person: Viewer, Name: "Bruno Lima", Email: "bruno@demo.kobana.dev", Role: "viewer", Workspace: Workspace, Scopes: []string{"read"}},
	} {
		tok, err := st.CreateToken(ctx, store.NewToken{Person: t.Person, Workspace: t.Workspace, Scopes: t.Scopes, Label: "demo"})
		if err != nil {
			return nil, fmt.Errorf("minting the demo token of %s: %w", t.Person, err)
		}
		t.Token = tok
		out = append(out, t)
	}
	return out, nil
}
