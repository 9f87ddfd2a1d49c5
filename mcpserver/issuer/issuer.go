package issuer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/kobana/workflow/mcpserver/store"
)

// Options configures New.
type Options struct {
	// Issuer is the identity provider's issuer URL; discovery reads
	// Issuer + "/.well-known/openid-configuration", whose issuer must be
	// this exactly.
	Issuer string
	// Audience is what a token's aud must contain: this MCP resource's URL
	// unless the provider uses another identifier for it.
	Audience string
	// PersonClaim names the claim that identifies the person: "email"
	// (the default: matched against people's addresses, refused when the
	// token says email_verified false) or a claim whose value is the
	// person's Kobana id (e.g. "sub", or a custom "kobana_person").
	PersonClaim string
	// WorkspaceClaim names a claim holding the workspace id; empty: the
	// person must be a member of exactly one workspace.
	WorkspaceClaim string
	// ScopePrefix is stripped from the token's scopes before they are
	// matched to read and write (e.g. "kobana:" for "kobana:read").
	ScopePrefix string
	// Store resolves people and memberships.
	Store store.Store
	// HTTPClient fetches discovery and keys; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Verifier checks the provider's access tokens.
type Verifier struct {
	opts     Options
	verifier *oidc.IDTokenVerifier
}

// New discovers the provider's metadata; it fails when the provider
// cannot be reached or names another issuer.
func New(ctx context.Context, opts Options) (*Verifier, error) {
	if opts.Issuer == "" || opts.Audience == "" || opts.Store == nil {
		return nil, errors.New("issuer: Issuer, Audience and Store are required")
	}
	if opts.PersonClaim == "" {
		opts.PersonClaim = "email"
	}
	if opts.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, opts.HTTPClient)
	}
	p, err := oidc.NewProvider(ctx, opts.Issuer)
	if err != nil {
		return nil, fmt.Errorf("issuer %s: discovery: %w", opts.Issuer, err)
	}
	// The audience is checked below (a list may hold it among others);
	// go-oidc checks signature (asymmetric algorithms only), issuer and
	// expiry.
	v := p.Verifier(&oidc.Config{SkipClientIDCheck: true})
	return &Verifier{opts: opts, verifier: v}, nil
}

// Issuer returns the provider's issuer URL.
func (v *Verifier) Issuer() string { return v.opts.Issuer }

// claims are the claims read from an access token.
type claims struct {
	Scope         string `json:"scope"`
	Scp           any    `json:"scp"`
	EmailVerified *bool  `json:"email_verified"`
}

func refused(format string, a ...any) error {
	return fmt.Errorf("external token refused: "+format+": %w", append(a, store.ErrNotFound)...)
}

// Verify resolves an access token of the provider to its principal. A
// refusal (bad signature, another issuer or audience, expired, no such
// person or membership, no usable scope) wraps store.ErrNotFound.
func (v *Verifier) Verify(ctx context.Context, token string) (store.Principal, error) {
	if v.opts.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, v.opts.HTTPClient)
	}
	tok, err := v.verifier.Verify(ctx, token)
	if err != nil {
		return store.Principal{}, refused("%v", err)
	}
	if !slices.Contains(tok.Audience, v.opts.Audience) {
		return store.Principal{}, refused("audience %v does not include %s", tok.Audience, v.opts.Audience)
	}
	var all map[string]any
	var c claims
	if err := tok.Claims(&all); err != nil {
		return store.Principal{}, refused("claims: %v", err)
	}
	tok.Claims(&c)
	scopes := v.scopes(c)
	if len(scopes) == 0 {
		return store.Principal{}, refused("no read or write scope")
	}
	value, _ := all[v.opts.PersonClaim].(string)
	if value == "" {
		return store.Principal{}, refused("no %s claim", v.opts.PersonClaim)
	}
	var person store.Person
	if v.opts.PersonClaim == "email" {
		if c.EmailVerified != nil && !*c.EmailVerified {
			return store.Principal{}, refused("the e-mail address %s is not verified", value)
		}
		person, err = v.opts.Store.PersonByEmail(ctx, value)
	} else {
		person, err = v.opts.Store.GetPerson(ctx, value)
	}
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return store.Principal{}, refused("no single person with %s %q", v.opts.PersonClaim, value)
	}
	if err != nil {
		return store.Principal{}, fmt.Errorf("external token: %w", err)
	}
	ms, err := v.opts.Store.Memberships(ctx, person.ID)
	if err != nil {
		return store.Principal{}, fmt.Errorf("external token: %w", err)
	}
	want, _ := all[v.opts.WorkspaceClaim].(string)
	var m *store.Membership
	for i := range ms {
		if (want != "" && ms[i].Workspace == want) || (want == "" && len(ms) == 1) {
			m = &ms[i]
		}
	}
	if m == nil {
		if v.opts.WorkspaceClaim != "" {
			return store.Principal{}, refused("person %s is not a member of workspace %q (claim %s)", person.ID, want, v.opts.WorkspaceClaim)
		}
		return store.Principal{}, refused("person %s is a member of %d workspaces: configure a workspace claim", person.ID, len(ms))
	}
	norm, _ := store.NormalizeScopes(scopes)
	return store.Principal{
		TokenID:      "ext_" + store.HashToken(v.opts.Issuer + "\x00" + tok.Subject)[:16],
		Person:       person.ID,
		PersonName:   person.Name,
		Organization: m.Organization,
		Workspace:    m.Workspace,
		Role:         m.Role,
		Scopes:       store.ParseScopes(norm),
		Expires:      tok.Expiry,
	}, nil
}

// scopes are the token's read and write scopes (prefix stripped).
func (v *Verifier) scopes(c claims) []string {
	var raw []string
	raw = append(raw, strings.Fields(c.Scope)...)
	switch s := c.Scp.(type) {
	case string:
		raw = append(raw, strings.Fields(s)...)
	case []any:
		for _, x := range s {
			if str, ok := x.(string); ok {
				raw = append(raw, str)
			}
		}
	}
	var out []string
	for _, s := range raw {
		s = strings.TrimPrefix(s, v.opts.ScopePrefix)
		if (s == "read" || s == "write") && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
