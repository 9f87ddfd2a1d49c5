package authserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"

	"github.com/kobana/workflow/mcpserver/store"
)

// scopes are the scopes this server grants (the MCP server's: read, and
// write which implies read).
var scopes = []string{"read", "write"}

// Paths of the server's endpoints, below its issuer URL.
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
	RegisterPath  = "/oauth/register"
	RevokePath    = "/oauth/revoke"
)

// Options configures New.
type Options struct {
	// Store keeps clients, grants, codes, tokens and sign-in codes, and the
	// people and memberships sign-in resolves.
	Store store.Store
	// Issuer is the server's issuer identifier: the public base URL of the
	// process (https://host, no path, no trailing slash). Every endpoint
	// URL in the metadata is below it.
	Issuer string
	// Resource is the protected resource the tokens are for (the MCP
	// endpoint's URL, Issuer + "/mcp"): tokens carry it as their audience
	// and a request naming another resource (RFC 8707) is refused.
	Resource string
	// ResourceName is what the consent page calls the resource.
	ResourceName string
	// HTTPClient reads Client ID Metadata Documents; it must refuse the
	// addresses an outbound guard refuses. Nil: such client ids are
	// refused and the metadata does not offer them.
	HTTPClient *http.Client
	// Lifetimes; zero picks the default (access tokens 15 minutes, refresh
	// tokens 30 days, renewed at each refresh, codes 2 minutes, a
	// signed-in browser 15 minutes).
	AccessTokenLifespan  time.Duration
	RefreshTokenLifespan time.Duration
	CodeLifespan         time.Duration
	SessionLifespan      time.Duration
	// Registration limits Dynamic Client Registration, which anyone may
	// call; zero fields pick the defaults.
	Registration RegistrationLimits
	// Now is the clock of sign-in sessions and registrations (tests); nil
	// means time.Now. Tokens expire by the wall clock.
	Now func() time.Time
	// Logger receives registrations, grants, revocations and refusals
	// (never a token or code); nil discards.
	Logger *slog.Logger
}

// RegistrationLimits bound Dynamic Client Registration.
type RegistrationLimits struct {
	// PerAddressPerHour is how many clients one address may register in
	// an hour, counted by each process (default 10).
	PerAddressPerHour int
	// PerHour is how many clients the whole server registers in an hour,
	// counted in the store across replicas (default 100).
	PerHour int
	// Max is how many registered clients the server keeps in all (default
	// 10000).
	Max int
}

// Server is the embedded OAuth 2.1 authorization server: authorization
// code with PKCE (S256 only), refresh tokens rotated at each use (a reused
// one revokes its grant), revocation (RFC 7009), metadata (RFC 8414),
// Dynamic Client Registration (RFC 7591) and Client ID Metadata Documents,
// and a sign-in and consent page.
type Server struct {
	opts     Options
	store    store.Store
	log      *slog.Logger
	provider fosite.OAuth2Provider
	strategy *strategy
	cookies  *cookies
	reg      registrar
	secure   bool
}

// New returns the authorization server over opts.Store. Its HMAC keys
// are the store's signing keys of purposes "oauth" (tokens) and
// "oauth-session" (the page's cookies and CSRF tokens), shared by every
// replica.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("authserver: no store")
	}
	iss, err := url.Parse(opts.Issuer)
	if err != nil || (iss.Scheme != "https" && iss.Scheme != "http") || iss.Host == "" || iss.Path != "" || iss.RawQuery != "" || iss.Fragment != "" {
		return nil, fmt.Errorf("authserver: issuer %q must be an http(s) URL with no path, query or fragment", opts.Issuer)
	}
	if iss.Scheme == "http" && !isLoopback(iss.Hostname()) {
		return nil, fmt.Errorf("authserver: issuer %q must be https (OAuth 2.1 §1.5); plain http is only for loopback", opts.Issuer)
	}
	if opts.Resource == "" {
		return nil, errors.New("authserver: no resource")
	}
	if opts.AccessTokenLifespan <= 0 {
		opts.AccessTokenLifespan = 15 * time.Minute
	}
	if opts.RefreshTokenLifespan <= 0 {
		opts.RefreshTokenLifespan = 30 * 24 * time.Hour
	}
	if opts.CodeLifespan <= 0 {
		opts.CodeLifespan = 2 * time.Minute
	}
	if opts.SessionLifespan <= 0 {
		opts.SessionLifespan = 15 * time.Minute
	}
	if opts.Registration.PerAddressPerHour <= 0 {
		opts.Registration.PerAddressPerHour = 10
	}
	if opts.Registration.PerHour <= 0 {
		opts.Registration.PerHour = 100
	}
	if opts.Registration.Max <= 0 {
		opts.Registration.Max = 10000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ResourceName == "" {
		opts.ResourceName = opts.Resource
	}
	s := &Server{opts: opts, store: opts.Store, log: opts.Logger, secure: iss.Scheme == "https"}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	tokenKey, err := opts.Store.SigningKey(ctx, "oauth")
	if err != nil {
		return nil, fmt.Errorf("authserver: token key: %w", err)
	}
	sessionKey, err := opts.Store.SigningKey(ctx, "oauth-session")
	if err != nil {
		return nil, fmt.Errorf("authserver: session key: %w", err)
	}
	s.cookies = &cookies{key: sessionKey.Secret, secure: s.secure}
	cfg := &fosite.Config{
		AccessTokenLifespan:   opts.AccessTokenLifespan,
		RefreshTokenLifespan:  opts.RefreshTokenLifespan,
		AuthorizeCodeLifespan: opts.CodeLifespan,
		// PKCE for every client, S256 only (OAuth 2.1 §4.1.1).
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.ExactAudienceMatchingStrategy,
		// Refresh tokens for every grant, whatever its scopes.
		RefreshTokenScopes: []string{},
		// state is optional with PKCE (OAuth 2.1 §4.1.1): PKCE binds the
		// code to the client that asked for it.
		MinParameterEntropy: -1,
		GlobalSecret:        tokenKey.Secret,
		TokenURL:            opts.Issuer + TokenPath,
		SanitationWhiteList: []string{"redirect_uri", "code_challenge", "code_challenge_method", "resource"},
	}
	s.strategy = newStrategy(cfg)
	s.provider = compose.Compose(cfg, storage{s}, s.strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2PKCEFactory,
	)
	return s, nil
}

func (s *Server) now() time.Time { return s.opts.Now() }

// Issuer returns the server's issuer identifier.
func (s *Server) Issuer() string { return s.opts.Issuer }

// OpenRoutes are the endpoints any origin may call (no cookie is read
// there): metadata, token, registration and revocation, with CORS
// headers, by ServeMux pattern.
func (s *Server) OpenRoutes() map[string]http.Handler {
	return map[string]http.Handler{
		MetadataPath: cors(http.HandlerFunc(s.metadata)),
		TokenPath:    cors(http.HandlerFunc(s.token)),
		RegisterPath: cors(http.HandlerFunc(s.register)),
		RevokePath:   cors(http.HandlerFunc(s.revoke)),
	}
}

// PageRoutes are the sign-in and consent page's routes (same-origin
// only), by ServeMux pattern.
func (s *Server) PageRoutes() map[string]http.Handler {
	return map[string]http.Handler{AuthorizePath: http.HandlerFunc(s.authorize)}
}

// cors lets pages of any origin call an endpoint that relies on no cookie
// (browser-based MCP clients exchange codes themselves).
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Protocol-Version")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metadata answers the RFC 8414 document.
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	iss := s.opts.Issuer
	doc := map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + AuthorizePath,
		"token_endpoint":                                 iss + TokenPath,
		"registration_endpoint":                          iss + RegisterPath,
		"revocation_endpoint":                            iss + RevokePath,
		"scopes_supported":                               scopes,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported":          s.opts.HTTPClient != nil,
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSONCached(w, doc)
}

func writeJSONCached(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	jsonEncoder(w).Encode(v)
}

// canonicalResource is a resource indicator as compared (RFC 8707 §2,
// MCP: scheme and host case-insensitive, no trailing slash).
func canonicalResource(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
		return "", false
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	return u.String(), true
}

// checkResource reports whether the resource indicators of a request (none,
// or this server's resource) are acceptable.
func (s *Server) checkResource(values []string) error {
	want, _ := canonicalResource(s.opts.Resource)
	for _, v := range values {
		got, ok := canonicalResource(v)
		if !ok {
			return fosite.ErrInvalidRequest.WithHintf("The resource %q is not an absolute URI without a fragment (RFC 8707).", v)
		}
		if got != want {
			return errInvalidTarget.WithHintf("Tokens of this server are for %s only, not %s.", s.opts.Resource, v)
		}
	}
	return nil
}

// errInvalidTarget is RFC 8707's invalid_target.
var errInvalidTarget = &fosite.RFC6749Error{
	ErrorField:       "invalid_target",
	DescriptionField: "The requested resource is invalid, unknown, or malformed.",
	CodeField:        http.StatusBadRequest,
}

// token is the token endpoint: the authorization code (with its PKCE
// verifier) and refresh token grants.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sess := &session{}
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err == nil {
			if err := s.checkResource(r.PostForm["resource"]); err != nil {
				s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(sess), err)
				return
			}
			if err := s.checkRefreshScope(ctx, r.PostForm); err != nil {
				s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(sess), err)
				return
			}
		}
	}
	ar, err := s.provider.NewAccessRequest(ctx, r, sess)
	if err != nil {
		s.log.InfoContext(ctx, "oauth token request refused", "grant_type", r.PostForm.Get("grant_type"), "client", r.PostForm.Get("client_id"), "error", fosite.ErrorToRFC6749Error(err).ErrorField, "why", fosite.ErrorToRFC6749Error(err).GetDescription())
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.log.InfoContext(ctx, "oauth token request refused", "grant_type", r.PostForm.Get("grant_type"), "client", r.PostForm.Get("client_id"), "error", fosite.ErrorToRFC6749Error(err).ErrorField)
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	if ar.GetGrantTypes().ExactOne("refresh_token") {
		if err := s.store.ExtendGrant(ctx, ar.GetID(), s.now().Add(s.opts.RefreshTokenLifespan)); err != nil {
			s.log.WarnContext(ctx, "extending an oauth grant", "grant", ar.GetID(), "error", err)
		}
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

// checkRefreshScope refuses a refresh that asks for scopes the grant does
// not hold (RFC 6749 §6: invalid_scope); fosite would ignore them.
func (s *Server) checkRefreshScope(ctx context.Context, form url.Values) error {
	if form.Get("grant_type") != "refresh_token" || form.Get("scope") == "" {
		return nil
	}
	sig := s.strategy.RefreshTokenSignature(ctx, form.Get("refresh_token"))
	t, err := s.store.GetOAuthToken(ctx, store.OAuthRefresh, hashSig(sig))
	if err != nil {
		return nil // fosite refuses the token itself
	}
	g, err := s.store.GetGrant(ctx, t.Grant)
	if err != nil {
		return nil
	}
	for _, sc := range strings.Fields(form.Get("scope")) {
		if !slices.Contains(g.Scopes, sc) {
			return fosite.ErrInvalidScope.WithHintf("The scope %q was not granted; a refresh cannot widen a grant: ask the person again.", sc)
		}
	}
	return nil
}

// revoke is the revocation endpoint (RFC 7009).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	err := s.provider.NewRevocationRequest(ctx, r)
	s.provider.WriteRevocationResponse(ctx, w, err)
}

// Verify resolves an access token this server issued to its principal,
// for the resource server: the token must be active, issued for
// Options.Resource, and its grant live with the person still a member.
// Any refusal wraps store.ErrNotFound; other errors are failures to check.
func (s *Server) Verify(ctx context.Context, token string) (store.Principal, error) {
	if !strings.HasPrefix(token, tokenPrefix+"at_") {
		return store.Principal{}, fmt.Errorf("not an access token of this server: %w", store.ErrNotFound)
	}
	_, ar, err := s.provider.IntrospectToken(ctx, token, fosite.AccessToken, &session{})
	if err != nil {
		rfc := fosite.ErrorToRFC6749Error(err)
		if rfc.CodeField >= 500 {
			return store.Principal{}, fmt.Errorf("checking an access token: %w", err)
		}
		return store.Principal{}, fmt.Errorf("access token refused (%s): %w", rfc.GetDescription(), store.ErrNotFound)
	}
	if !slices.Contains(ar.GetGrantedAudience(), s.opts.Resource) {
		return store.Principal{}, fmt.Errorf("access token issued for %v, not %s: %w", ar.GetGrantedAudience(), s.opts.Resource, store.ErrNotFound)
	}
	p, err := s.store.AuthenticateGrant(ctx, ar.GetID())
	if err != nil {
		return store.Principal{}, err
	}
	granted, err := store.NormalizeScopes(ar.GetGrantedScopes())
	if err != nil {
		return store.Principal{}, fmt.Errorf("access token scopes: %v: %w", err, store.ErrNotFound)
	}
	p.Scopes = store.ParseScopes(granted)
	if exp := ar.GetSession().GetExpiresAt(fosite.AccessToken); !exp.IsZero() {
		p.Expires = exp
	}
	return p, nil
}

// serverError logs a failure and answers 500 without its text.
func (s *Server) serverError(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.log.ErrorContext(r.Context(), "oauth: "+what, "error", err)
	writeOAuthError(w, http.StatusInternalServerError, "server_error", "the server cannot do this right now")
}
