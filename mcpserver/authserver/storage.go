package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/token/hmac"

	"github.com/kobana/workflow/mcpserver/store"
)

// session is what fosite keeps with every code and token: who the grant
// speaks for and when each of its tokens expires.
type session struct {
	Person    string                         `json:"person"`
	Workspace string                         `json:"workspace"`
	Expires   map[fosite.TokenType]time.Time `json:"expires,omitempty"`
}

func (s *session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.Expires == nil {
		s.Expires = map[fosite.TokenType]time.Time{}
	}
	s.Expires[key] = exp
}

func (s *session) GetExpiresAt(key fosite.TokenType) time.Time { return s.Expires[key] }
func (s *session) GetUsername() string                         { return s.Person }
func (s *session) GetSubject() string                          { return s.Person }

func (s *session) Clone() fosite.Session {
	c := *s
	c.Expires = make(map[fosite.TokenType]time.Time, len(s.Expires))
	for k, v := range s.Expires {
		c.Expires[k] = v
	}
	return &c
}

// record is how a fosite request is kept in a store.OAuthToken's Data:
// fosite sanitises the form before it is stored (no code, verifier or
// token is in it).
type record struct {
	ID                string     `json:"id"`
	RequestedAt       time.Time  `json:"requested_at"`
	Client            string     `json:"client"`
	RequestedScopes   []string   `json:"requested_scopes"`
	GrantedScopes     []string   `json:"granted_scopes"`
	RequestedAudience []string   `json:"requested_audience"`
	GrantedAudience   []string   `json:"granted_audience"`
	Form              url.Values `json:"form"`
	Session           *session   `json:"session"`
}

// storage implements the fosite storage interfaces the authorization code,
// PKCE, refresh, revocation and introspection handlers need, over a
// store.Store: every code and token by the SHA-256 of its signature, with
// the grant it belongs to.
type storage struct {
	s *Server
}

func hashSig(sig string) string { return store.HashToken(sig) }

func (st storage) put(ctx context.Context, kind, sig string, r fosite.Requester, expires time.Time) error {
	sess, _ := r.GetSession().(*session)
	rec := record{ID: r.GetID(), RequestedAt: r.GetRequestedAt(), Client: r.GetClient().GetID(),
		RequestedScopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(),
		RequestedAudience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: r.GetRequestForm(), Session: sess}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return st.s.store.PutOAuthToken(ctx, store.OAuthToken{Kind: kind, Hash: hashSig(sig), Grant: r.GetID(), Data: data, Expires: expires})
}

// get returns the request of a code or token, and fosite's error for one
// that was used (with the request, as fosite wants) or whose grant was
// revoked (as if it were unknown).
func (st storage) get(ctx context.Context, kind, sig string, used error) (fosite.Requester, error) {
	t, err := st.s.store.GetOAuthToken(ctx, kind, hashSig(sig))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(t.Data, &rec); err != nil {
		return nil, fmt.Errorf("oauth %s: reading its record: %w", kind, err)
	}
	c, err := st.s.client(ctx, rec.Client, false)
	if err != nil {
		return nil, err
	}
	if rec.Session == nil {
		rec.Session = &session{}
	}
	req := &fosite.Request{ID: rec.ID, RequestedAt: rec.RequestedAt, Client: c,
		RequestedScope: rec.RequestedScopes, GrantedScope: rec.GrantedScopes,
		RequestedAudience: rec.RequestedAudience, GrantedAudience: rec.GrantedAudience,
		Form: rec.Form, Session: rec.Session}
	if req.Form == nil {
		req.Form = url.Values{}
	}
	if !t.Used.IsZero() {
		return req, used
	}
	if kind != store.OAuthPKCE && kind != store.OAuthCode {
		g, err := st.s.store.GetGrant(ctx, rec.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if err != nil || !g.Revoked.IsZero() {
			return nil, fosite.ErrNotFound
		}
	}
	return req, nil
}

func (st storage) use(ctx context.Context, kind, sig string) error {
	err := st.s.store.UseOAuthToken(ctx, kind, hashSig(sig))
	if errors.Is(err, store.ErrNotFound) {
		return fosite.ErrNotFound
	}
	return err
}

func (st storage) del(ctx context.Context, kind, sig string) error {
	err := st.s.store.DeleteOAuthToken(ctx, kind, hashSig(sig))
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleting what is gone is done
	}
	return err
}

// ---- fosite.ClientManager ----

func (st storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	return st.s.client(ctx, id, true)
}

// ClientAssertionJWTValid implements fosite.ClientManager: no client
// authenticates with a JWT assertion here (every client is public), so no
// assertion id was ever seen.
func (st storage) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT implements fosite.ClientManager (see
// ClientAssertionJWTValid).
func (st storage) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

// ---- oauth2.AuthorizeCodeStorage ----

func (st storage) CreateAuthorizeCodeSession(ctx context.Context, sig string, r fosite.Requester) error {
	return st.put(ctx, store.OAuthCode, sig, r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

func (st storage) GetAuthorizeCodeSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return st.get(ctx, store.OAuthCode, sig, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession spends a code: of two exchanges racing,
// one wins and the other fails.
func (st storage) InvalidateAuthorizeCodeSession(ctx context.Context, sig string) error {
	if err := st.use(ctx, store.OAuthCode, sig); err != nil {
		return fmt.Errorf("the authorization code was used already: %w", fosite.ErrInvalidatedAuthorizeCode)
	}
	return nil
}

// ---- pkce.PKCERequestStorage ----

func (st storage) CreatePKCERequestSession(ctx context.Context, sig string, r fosite.Requester) error {
	return st.put(ctx, store.OAuthPKCE, sig, r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

func (st storage) GetPKCERequestSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return st.get(ctx, store.OAuthPKCE, sig, fosite.ErrNotFound)
}

func (st storage) DeletePKCERequestSession(ctx context.Context, sig string) error {
	return st.del(ctx, store.OAuthPKCE, sig)
}

// ---- oauth2.AccessTokenStorage ----

func (st storage) CreateAccessTokenSession(ctx context.Context, sig string, r fosite.Requester) error {
	return st.put(ctx, store.OAuthAccess, sig, r, r.GetSession().GetExpiresAt(fosite.AccessToken))
}

func (st storage) GetAccessTokenSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return st.get(ctx, store.OAuthAccess, sig, fosite.ErrNotFound)
}

func (st storage) DeleteAccessTokenSession(ctx context.Context, sig string) error {
	return st.del(ctx, store.OAuthAccess, sig)
}

// ---- oauth2.RefreshTokenStorage, oauth2.TokenRevocationStorage ----

func (st storage) CreateRefreshTokenSession(ctx context.Context, sig, _ string, r fosite.Requester) error {
	return st.put(ctx, store.OAuthRefresh, sig, r, r.GetSession().GetExpiresAt(fosite.RefreshToken))
}

// GetRefreshTokenSession answers fosite.ErrInactiveToken for a rotated
// refresh token: fosite then revokes the grant (RevokeRefreshToken).
func (st storage) GetRefreshTokenSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return st.get(ctx, store.OAuthRefresh, sig, fosite.ErrInactiveToken)
}

func (st storage) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return st.del(ctx, store.OAuthRefresh, sig)
}

// RotateRefreshToken uses up the refresh token being exchanged and the
// access tokens issued before it. Of two refreshes racing with one token,
// one wins; the other is told to retry (and then finds the token used,
// which revokes the grant, as a reuse must).
func (st storage) RotateRefreshToken(ctx context.Context, requestID, sig string) error {
	if err := st.s.store.UseOAuthToken(ctx, store.OAuthRefresh, hashSig(sig)); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fosite.ErrSerializationFailure
		}
		return err
	}
	return st.s.store.UseGrantTokens(ctx, requestID, store.OAuthAccess)
}

// RevokeRefreshToken revokes the whole grant: a refresh token revoked by
// its client (RFC 7009), or one used after it was rotated (a reuse that
// RFC 6819 §5.2.2.3 and OAuth 2.1 §4.3.1 answer by revoking everything
// issued for the grant).
func (st storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	err := st.s.store.RevokeToken(ctx, requestID)
	if errors.Is(err, store.ErrNotFound) {
		return fosite.ErrNotFound
	}
	if err == nil {
		st.s.log.InfoContext(ctx, "oauth grant revoked", "grant", requestID)
	}
	return err
}

// RevokeAccessToken uses up the grant's access tokens. (fosite's RFC 7009
// handler revokes the refresh token's grant with it, which §2.1 allows.)
func (st storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return st.s.store.UseGrantTokens(ctx, requestID, store.OAuthAccess)
}

// RevokeRefreshTokenMaybeGracePeriod is RevokeRefreshToken (no grace).
func (st storage) RevokeRefreshTokenMaybeGracePeriod(ctx context.Context, requestID, _ string) error {
	return st.RevokeRefreshToken(ctx, requestID)
}

// ---- tokens ----

// tokenPrefix starts every code and token this server issues ("kbo_at_",
// "kbo_rt_", "kbo_ac_"), so that secret scanners recognise them and the
// resource server tells them from static kbn_ tokens.
const tokenPrefix = "kbo_"

// strategy is fosite's HMAC-SHA strategy with this server's prefixes: a
// token is prefix + key + "." + HMAC(key); only the HMAC (the signature)
// is looked up, and stored hashed.
type strategy struct {
	*oauth2.HMACSHAStrategyUnPrefixed
}

func newStrategy(cfg *fosite.Config) *strategy {
	return &strategy{oauth2.NewHMACSHAStrategyUnPrefixed(&hmac.HMACStrategy{Config: cfg}, cfg)}
}

func prefixed(part, token string) string {
	if token == "" {
		return ""
	}
	return tokenPrefix + part + "_" + token
}

func unprefixed(part, token string) string { return strings.TrimPrefix(token, tokenPrefix+part+"_") }

func (h *strategy) GenerateAccessToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	t, sig, err := h.HMACSHAStrategyUnPrefixed.GenerateAccessToken(ctx, r)
	return prefixed("at", t), sig, err
}

func (h *strategy) ValidateAccessToken(ctx context.Context, r fosite.Requester, token string) error {
	return h.HMACSHAStrategyUnPrefixed.ValidateAccessToken(ctx, r, unprefixed("at", token))
}

func (h *strategy) GenerateRefreshToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	t, sig, err := h.HMACSHAStrategyUnPrefixed.GenerateRefreshToken(ctx, r)
	return prefixed("rt", t), sig, err
}

func (h *strategy) ValidateRefreshToken(ctx context.Context, r fosite.Requester, token string) error {
	return h.HMACSHAStrategyUnPrefixed.ValidateRefreshToken(ctx, r, unprefixed("rt", token))
}

func (h *strategy) GenerateAuthorizeCode(ctx context.Context, r fosite.Requester) (string, string, error) {
	t, sig, err := h.HMACSHAStrategyUnPrefixed.GenerateAuthorizeCode(ctx, r)
	return prefixed("ac", t), sig, err
}

func (h *strategy) ValidateAuthorizeCode(ctx context.Context, r fosite.Requester, token string) error {
	return h.HMACSHAStrategyUnPrefixed.ValidateAuthorizeCode(ctx, r, unprefixed("ac", token))
}
