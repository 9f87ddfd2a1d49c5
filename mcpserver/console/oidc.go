package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/kobana/workflow/mcpserver/store"
)

// OIDC configures signing in to the console through an external OpenID
// Connect provider (the company's identity provider), with the console
// as a confidential client: the authorization code flow with PKCE, state
// and nonce, run on the server. The provider's tokens never reach the
// browser; once its ID token names a person, the console opens its own
// session, as after a one-time code.
type OIDC struct {
	// Issuer is the provider's issuer URL (OpenID discovery).
	Issuer string
	// ClientID and ClientSecret are the console's registration at the
	// provider; its redirect URI is PUBLIC-URL/console/signin/oidc/callback
	// (Console.OIDCRedirectURL).
	ClientID, ClientSecret string
	// Name is the provider's name on the sign-in page (default: the
	// issuer's host).
	Name string
	// PersonClaim names the ID token's claim that identifies the person:
	// "email" (the default: matched against people's addresses, refused
	// when email_verified is false) or a claim whose value is the person's
	// id. WorkspaceClaim, when set, names a claim holding the workspace
	// to open; else the person's first workspace opens (they switch from
	// the header).
	PersonClaim, WorkspaceClaim string
	// HTTPClient reaches the provider; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// OIDCFlowKind is the store.OAuthToken kind that keeps an OIDC sign-in
// between the redirect to the provider and its answer, by the state's
// hash.
const OIDCFlowKind = "console-oidc"

// OIDCFlowTimeout is how long a person has at the provider.
const OIDCFlowTimeout = 10 * time.Minute

// oidcSignin is the console as the provider's client.
type oidcSignin struct {
	cfg OIDC
	// authOrigin is the origin of the provider's authorization endpoint,
	// where the sign-in form's answer sends the browser.
	authOrigin string
	oauth      oauth2.Config
	verifier   *oidc.IDTokenVerifier
}

// oidcFlow is what the server keeps of a sign-in at the provider.
type oidcFlow struct {
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Next     string `json:"next"`
	// Browser is the hash of the flow cookie the browser holds.
	Browser string `json:"browser"`
}

func (c *Console) initOIDC(ctx context.Context, cfg *OIDC) error {
	if cfg == nil {
		return nil
	}
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.ClientSecret == "" {
		return errors.New("console: OIDC sign-in needs the issuer, a client id and its secret")
	}
	if cfg.PersonClaim == "" {
		cfg.PersonClaim = "email"
	}
	if cfg.Name == "" {
		if u, err := url.Parse(cfg.Issuer); err == nil && u.Host != "" {
			cfg.Name = u.Host
		} else {
			cfg.Name = cfg.Issuer
		}
	}
	p, err := oidc.NewProvider(cfg.clientContext(ctx), cfg.Issuer)
	if err != nil {
		return fmt.Errorf("console: OIDC provider %s: discovery: %w", cfg.Issuer, err)
	}
	au, err := url.Parse(p.Endpoint().AuthURL)
	if err != nil || au.Host == "" || (au.Scheme != "https" && au.Scheme != "http") {
		return fmt.Errorf("console: OIDC provider %s: its authorization endpoint %q is not an http(s) URL", cfg.Issuer, p.Endpoint().AuthURL)
	}
	c.oidc = &oidcSignin{cfg: *cfg, authOrigin: au.Scheme + "://" + au.Host,
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: p.Endpoint(),
			RedirectURL: c.OIDCRedirectURL(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}},
		verifier: p.Verifier(&oidc.Config{ClientID: cfg.ClientID, Now: c.now}),
	}
	return nil
}

func (o *OIDC) clientContext(ctx context.Context) context.Context {
	if o.HTTPClient != nil {
		return oidc.ClientContext(ctx, o.HTTPClient)
	}
	return ctx
}

// signinFormAction is what the sign-in pages add to their policy's
// form-action: the provider's origin, since a form's redirect is held to
// the policy of the page that sent it.
func (c *Console) signinFormAction(r *http.Request) string {
	if c.oidc == nil || !strings.HasPrefix(r.URL.Path, Prefix+"signin") {
		return ""
	}
	return " " + c.oidc.authOrigin
}

// OIDCRedirectURL is the redirect URI to register at the OIDC provider.
func (c *Console) OIDCRedirectURL() string { return c.base + Prefix + "signin/oidc/callback" }

// oidcCookie binds a sign-in at the provider to the browser that began
// it. It is SameSite=Lax: the provider's answer is a navigation from
// another site, on which a Strict cookie is not sent.
func (c *Console) oidcCookie() string {
	if c.secure {
		return "__Host-kobana-console-oidc"
	}
	return "kobana-console-oidc"
}

// setOIDCCookie sets (maxAge > 0) or removes (maxAge < 0) the flow
// cookie.
func (c *Console) setOIDCCookie(w http.ResponseWriter, value string, maxAge int) {
	ck := &http.Cookie{Name: c.oidcCookie(), Value: value, Path: Prefix + "signin/oidc/", HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: maxAge}
	if c.secure {
		ck.Path = "/" // the __Host- prefix requires it
	}
	http.SetCookie(w, ck)
}

// oidcStart sends the browser to the provider, with a state, a nonce and
// a PKCE challenge the server keeps.
func (c *Console) oidcStart(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if c.oidc == nil {
		c.signinForm(w, r, http.StatusNotFound, "This console signs in with codes and passkeys only.")
		return
	}
	if !c.signinOK(r) {
		c.signinForm(w, r, http.StatusForbidden, "This form is stale or did not come from this console; try again.")
		return
	}
	state, nonce, browser := store.RandomHex(32), store.RandomHex(32), store.RandomHex(32)
	f := oidcFlow{Nonce: nonce, Verifier: oauth2.GenerateVerifier(), Next: localNext(r.PostFormValue("next")), Browser: store.HashToken(browser)}
	data, _ := json.Marshal(f)
	if err := c.store.PutOAuthToken(r.Context(), store.OAuthToken{Kind: OIDCFlowKind, Hash: store.HashToken(state), Data: data, Expires: c.now().Add(OIDCFlowTimeout)}); err != nil {
		c.log.ErrorContext(r.Context(), "console: OIDC sign-in", "error", err)
		c.signinForm(w, r, http.StatusServiceUnavailable, "You cannot sign in with "+c.oidc.cfg.Name+" right now; try again.")
		return
	}
	c.setOIDCCookie(w, browser, int(OIDCFlowTimeout/time.Second))
	http.Redirect(w, r, c.oidc.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusSeeOther)
}

// oidcRefused is a sign-in at the provider the console refuses, with what
// the person is told.
type oidcRefused struct{ msg string }

func (e *oidcRefused) Error() string { return e.msg }

// oidcCallback takes the provider's answer: the state must be one this
// console made for this browser and not yet used, the code is exchanged
// (with the PKCE verifier and the client's secret) on the server, and
// the ID token must be the provider's, for this client, with the flow's
// nonce, and name a person who is a member of a workspace.
func (c *Console) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if c.oidc == nil {
		c.signinForm(w, r, http.StatusNotFound, "This console signs in with codes and passkeys only.")
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		msg := c.oidc.cfg.Name + " did not sign you in: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		c.signinForm(w, r, http.StatusUnauthorized, msg)
		return
	}
	f, err := c.oidcSpend(r, q.Get("state"))
	var p store.Principal
	var value string
	if err == nil {
		p, value, err = c.oidcSession(ctx, f, q.Get("code"))
	}
	var refused *oidcRefused
	if errors.As(err, &refused) {
		c.log.InfoContext(ctx, "console: OIDC sign-in refused", "issuer", c.oidc.cfg.Issuer, "reason", refused.msg)
		c.signinForm(w, r, http.StatusUnauthorized, refused.msg)
		return
	}
	if err != nil {
		c.log.ErrorContext(ctx, "console: OIDC sign-in", "issuer", c.oidc.cfg.Issuer, "error", err)
		c.signinForm(w, r, http.StatusServiceUnavailable, "You cannot sign in with "+c.oidc.cfg.Name+" right now; try again.")
		return
	}
	c.log.InfoContext(ctx, "console: sign-in with OIDC", "issuer", c.oidc.cfg.Issuer, "person", p.Person, "workspace", p.Workspace, "grant", p.TokenID)
	c.setOIDCCookie(w, "", -1)
	c.setCookie(w, c.preName(), "", -1)
	c.setCookie(w, c.cookieName(), value, c.lifetime)
	// This answer is to a navigation from the provider's site, so the
	// browser would not send the new SameSite=Strict cookie on a redirect
	// from it: a page of this site moves on instead.
	c.render(w, r, nil, http.StatusOK, "continue", f.Next)
}

// oidcSpend finds the flow of a state for the browser's flow cookie and
// uses it up.
func (c *Console) oidcSpend(r *http.Request, state string) (oidcFlow, error) {
	again := &oidcRefused{"This sign-in is unknown, expired or already used. Sign in again."}
	if state == "" {
		return oidcFlow{}, again
	}
	hash := store.HashToken(state)
	t, err := c.store.GetOAuthToken(r.Context(), OIDCFlowKind, hash)
	if errors.Is(err, store.ErrNotFound) {
		return oidcFlow{}, again
	}
	if err != nil {
		return oidcFlow{}, err
	}
	var f oidcFlow
	if err := json.Unmarshal(t.Data, &f); err != nil || !t.Used.IsZero() || !c.now().Before(t.Expires) {
		return oidcFlow{}, again
	}
	ck, err := r.Cookie(c.oidcCookie())
	if err != nil || store.HashToken(ck.Value) != f.Browser {
		return oidcFlow{}, &oidcRefused{"This sign-in began in another browser. Sign in again here."}
	}
	if err := c.store.UseOAuthToken(r.Context(), OIDCFlowKind, hash); errors.Is(err, store.ErrNotFound) {
		return oidcFlow{}, again
	} else if err != nil {
		return oidcFlow{}, err
	}
	return f, nil
}

// oidcClaims are the ID token's claims the console reads.
type oidcClaims struct {
	EmailVerified *bool `json:"email_verified"`
}

// oidcSession exchanges the code and opens a session for the person the
// ID token names.
func (c *Console) oidcSession(ctx context.Context, f oidcFlow, code string) (store.Principal, string, error) {
	o := c.oidc
	if code == "" {
		return store.Principal{}, "", &oidcRefused{o.cfg.Name + " sent no code. Sign in again."}
	}
	tok, err := o.oauth.Exchange(o.cfg.clientContext(ctx), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return store.Principal{}, "", &oidcRefused{o.cfg.Name + " did not accept the sign-in (" + re.ErrorCode + "). Sign in again."}
		}
		return store.Principal{}, "", fmt.Errorf("exchanging the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return store.Principal{}, "", &oidcRefused{o.cfg.Name + " sent no ID token."}
	}
	id, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return store.Principal{}, "", &oidcRefused{o.cfg.Name + "'s ID token is not valid for this console: " + err.Error()}
	}
	if id.Nonce != f.Nonce {
		return store.Principal{}, "", &oidcRefused{o.cfg.Name + "'s ID token is for another sign-in (its nonce differs). Sign in again."}
	}
	if id.AccessTokenHash != "" {
		if err := id.VerifyAccessToken(tok.AccessToken); err != nil {
			return store.Principal{}, "", &oidcRefused{o.cfg.Name + "'s ID token does not match its access token."}
		}
	}
	var all map[string]any
	var cl oidcClaims
	if err := id.Claims(&all); err != nil {
		return store.Principal{}, "", &oidcRefused{o.cfg.Name + "'s ID token has unreadable claims."}
	}
	id.Claims(&cl)
	value, _ := all[o.cfg.PersonClaim].(string)
	if value == "" {
		return store.Principal{}, "", &oidcRefused{o.cfg.Name + " did not say who you are (no " + o.cfg.PersonClaim + " claim)."}
	}
	var person store.Person
	if o.cfg.PersonClaim == "email" {
		if cl.EmailVerified != nil && !*cl.EmailVerified {
			return store.Principal{}, "", &oidcRefused{"Your e-mail address at " + o.cfg.Name + " is not verified."}
		}
		person, err = c.store.PersonByEmail(ctx, value)
	} else {
		person, err = c.store.GetPerson(ctx, value)
	}
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return store.Principal{}, "", &oidcRefused{"No one here is " + value + " (" + o.cfg.PersonClaim + " at " + o.cfg.Name + ")."}
	}
	if err != nil {
		return store.Principal{}, "", err
	}
	ms, err := c.store.Memberships(ctx, person.ID)
	if err != nil {
		return store.Principal{}, "", err
	}
	ws := ""
	want, _ := all[o.cfg.WorkspaceClaim].(string)
	for _, m := range ms {
		if (o.cfg.WorkspaceClaim == "" && ws == "") || m.Workspace == want {
			ws = m.Workspace
		}
	}
	if ws == "" && o.cfg.WorkspaceClaim != "" {
		return store.Principal{}, "", &oidcRefused{"You are not a member of the workspace " + o.cfg.Name + " names (" + want + ")."}
	}
	if ws == "" {
		return store.Principal{}, "", &oidcRefused{"You are not a member of any workspace here."}
	}
	value, p, err := c.openSession(ctx, person.ID, ws)
	if err != nil {
		return store.Principal{}, "", err
	}
	return p, value, nil
}
