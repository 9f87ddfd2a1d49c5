package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

const (
	// ClientID is the OAuth client a console session's grant belongs to
	// (store.Access.Client in the access list).
	ClientID = "kobana-console"
	// TokenKind is the store.OAuthToken kind of a console session.
	TokenKind = "console"
	// DefaultIdleTimeout ends a session nobody used for this long.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultLifetime ends a session this long after sign-in, used or not.
	DefaultLifetime = 12 * time.Hour
)

// session is a signed-in browser: the grant's principal and the CSRF
// token its forms carry.
type session struct {
	principal store.Principal
	grant     string
	csrf      string
}

// scopesFor are a console grant's scopes: a viewer's read only, as on the
// authorization server's consent page; the role still decides the tools.
func scopesFor(role store.Role) []string {
	if role == "viewer" {
		return []string{"read"}
	}
	return []string{"read", "write"}
}

// startSession spends a one-time sign-in code and opens a session for its
// person and workspace; it returns the cookie value. A code that is
// unknown, used or expired wraps store.ErrNotFound.
func (c *Console) startSession(ctx context.Context, code string) (string, store.Principal, error) {
	sc, err := c.store.UseSignInCode(ctx, store.HashToken(code))
	if err != nil {
		return "", store.Principal{}, err
	}
	return c.openSession(ctx, sc.Person, sc.Workspace)
}

// openSession opens a session for a person in a workspace they are a
// member of: a grant of the console client and a token keyed by the hash
// of the cookie value it returns.
func (c *Console) openSession(ctx context.Context, person, workspace string) (string, store.Principal, error) {
	role, err := c.role(ctx, person, workspace)
	if err != nil {
		return "", store.Principal{}, err
	}
	now := c.now()
	g := store.Grant{ID: store.NewGrantID(), Client: ClientID, Person: person, Workspace: workspace,
		Scopes: scopesFor(role), Resource: c.base + Prefix, Created: now, Expires: now.Add(c.idle)}
	if err := c.store.CreateGrant(ctx, g); err != nil {
		return "", store.Principal{}, fmt.Errorf("console session: %w", err)
	}
	value := store.RandomHex(32)
	data, _ := json.Marshal(map[string]string{"signed_in": now.UTC().Format(time.RFC3339)})
	if err := c.store.PutOAuthToken(ctx, store.OAuthToken{Kind: TokenKind, Hash: store.HashToken(value), Grant: g.ID, Data: data, Expires: now.Add(c.lifetime)}); err != nil {
		return "", store.Principal{}, fmt.Errorf("console session: %w", err)
	}
	p, err := c.store.AuthenticateGrant(ctx, g.ID)
	if err != nil {
		return "", store.Principal{}, fmt.Errorf("console session: %w", err)
	}
	return value, p, nil
}

// role is a person's role in a workspace; ErrNotFound when not a member.
func (c *Console) role(ctx context.Context, person, workspace string) (store.Role, error) {
	ms, err := c.store.Memberships(ctx, person)
	if err != nil {
		return "", fmt.Errorf("console: memberships of %s: %w", person, err)
	}
	for _, m := range ms {
		if m.Workspace == workspace {
			return m.Role, nil
		}
	}
	return "", fmt.Errorf("console: %s is not a member of %s: %w", person, workspace, store.ErrNotFound)
}

// readSession is the session of the request's cookie: ok false when there
// is none, or it was signed out, revoked, idle too long or past its
// lifetime, or the person is no longer a member. A live session's idle
// expiry moves on (at most once a minute, never past its lifetime).
func (c *Console) readSession(r *http.Request) (*session, bool, error) {
	ck, err := r.Cookie(c.cookieName())
	if err != nil || ck.Value == "" {
		return nil, false, nil
	}
	ctx := r.Context()
	t, err := c.store.GetOAuthToken(ctx, TokenKind, store.HashToken(ck.Value))
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("console session: %w", err)
	}
	now := c.now()
	if !t.Used.IsZero() || !now.Before(t.Expires) {
		return nil, false, nil
	}
	p, err := c.store.AuthenticateGrant(ctx, t.Grant)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("console session: %w", err)
	}
	next := now.Add(c.idle)
	if t.Expires.Before(next) {
		next = t.Expires
	}
	if next.Sub(p.Expires) >= time.Minute && r.Context().Value(notUseKey{}) == nil {
		if err := c.store.ExtendGrant(ctx, t.Grant, next); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, false, fmt.Errorf("console session: %w", err)
		}
	}
	return &session{principal: p, grant: t.Grant, csrf: c.mac("csrf", ck.Value)}, true, nil
}

// notUseKey marks a request that is not the person's use of the session
// (a live page's check for changes): it does not move the idle expiry.
type notUseKey struct{}

// mac is a keyed digest of parts, for CSRF tokens.
func (c *Console) mac(parts ...string) string {
	h := hmac.New(sha256.New, c.key)
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// cookieName is the session cookie's name: __Host- prefixed when the
// cookie is Secure (the browser then refuses it from a sub-domain or over
// plain http).
func (c *Console) cookieName() string {
	if c.secure {
		return "__Host-kobana-console"
	}
	return "kobana-console"
}

// preName is the cookie that binds the sign-in form's CSRF token to the
// browser before a session exists.
func (c *Console) preName() string {
	if c.secure {
		return "__Host-kobana-console-signin"
	}
	return "kobana-console-signin"
}

// setCookie sets (or, with maxAge < 0, removes) one of the console's
// cookies.
func (c *Console) setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	ck := &http.Cookie{Name: name, Value: value, Path: Prefix, HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteStrictMode}
	if c.secure {
		ck.Path = "/" // the __Host- prefix requires it
	}
	if maxAge < 0 {
		ck.MaxAge = -1
	} else {
		ck.MaxAge = int(maxAge / time.Second)
	}
	http.SetCookie(w, ck)
}
