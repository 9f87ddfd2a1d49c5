package console_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/kobana/workflow/mcpserver/console"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

// provider is an OpenID provider for the tests: discovery, keys, an
// authorization endpoint that signs in whoever the test says at once, and
// a token endpoint that checks the client's secret, the redirect URI and
// the PKCE verifier.
type provider struct {
	t      testing.TB
	url    string
	key    *rsa.PrivateKey
	secret string

	mu sync.Mutex
	// who signs in next: their claims.
	claims map[string]any
	// badNonce makes the ID token carry another nonce.
	badNonce bool
	now      func() time.Time
	codes    map[string]providerCode
	// auth is the last authorization request's query.
	auth url.Values
	// tokens are the tokens it issued.
	tokens []string
}

type providerCode struct {
	nonce, challenge, redirect string
	used                       bool
}

const oidcClient = "kobana-console-test"

func newProvider(t testing.TB) *provider {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{t: t, key: key, secret: "s3cret-of-the-console", codes: map[string]providerCode{}, now: time.Now,
		claims: map[string]any{"sub": "idp-ana", "email": "ana@demo.kobana.dev", "email_verified": true}}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	p.url = hs.URL
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": p.url, "jwks_uri": p.url + "/keys", "authorization_endpoint": p.url + "/auth",
			"token_endpoint": p.url + "/token", "id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /auth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		p.mu.Lock()
		p.auth = q
		code := store.RandomHex(16)
		p.codes[code] = providerCode{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
		p.mu.Unlock()
		if q.Get("client_id") != oidcClient || q.Get("response_type") != "code" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
		}
		fail := func(code int, e string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(map[string]string{"error": e})
		}
		if id != oidcClient || secret != p.secret {
			fail(http.StatusUnauthorized, "invalid_client")
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		c, known := p.codes[r.PostFormValue("code")]
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		if !known || c.used || r.PostFormValue("grant_type") != "authorization_code" || r.PostFormValue("redirect_uri") != c.redirect ||
			b64.EncodeToString(sum[:]) != c.challenge {
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		c.used = true
		p.codes[r.PostFormValue("code")] = c
		claims := map[string]any{"iss": p.url, "aud": oidcClient, "iat": p.now().Unix(), "exp": p.now().Add(time.Hour).Unix(), "nonce": c.nonce}
		if p.badNonce {
			claims["nonce"] = "another"
		}
		for k, v := range p.claims {
			claims[k] = v
		}
		sig, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
		idt, err := jwt.Signed(sig).Claims(claims).Serialize()
		if err != nil {
			t.Error(err)
		}
		at := "at-" + store.RandomHex(16)
		p.tokens = append(p.tokens, at, idt)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "id_token": idt})
	})
	return p
}

func (p *provider) set(f func(p *provider)) { p.mu.Lock(); defer p.mu.Unlock(); f(p) }

// newOIDCEnv is a console on 127.0.0.1 that also signs in through p.
func newOIDCEnv(t testing.TB, open func(testing.TB, *clock) store.Store, p *provider) *env {
	e := newEnvWith(t, open, "127.0.0.1", &console.OIDC{Issuer: p.url, ClientID: oidcClient, ClientSecret: p.secret, Name: "Acme <ID>"})
	p.set(func(p *provider) { p.now = e.clk.Now })
	return e
}

// seen records every answer the browser got from the console.
type seen struct {
	mu   sync.Mutex
	all  bytes.Buffer
	next http.RoundTripper
}

func (s *seen) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Header.Write(&s.all)
	s.all.Write(b)
	return res, nil
}

// oidcStart posts the sign-in page's OIDC form; stop says whether to stop
// at the provider's redirect to the callback (returned), else the browser
// follows it.
func (e *env) oidcStart(c *http.Client, stop bool) (page, string) {
	e.t.Helper()
	form := e.get(c, "/console/signin")
	if !strings.Contains(form.body, "Sign in with Acme &lt;ID&gt;") {
		e.t.Fatalf("the sign-in page offers no OIDC sign-in:\n%s", form.body)
	}
	if !stop {
		return e.post(c, "/console/signin/oidc", url.Values{"csrf": {csrfOf(e.t, form)}, "next": {"/console/deliveries"}}, nil), ""
	}
	var callback string
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if r.URL.Path == "/console/signin/oidc/callback" {
			callback = r.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}
	defer func() { c.CheckRedirect = nil }()
	p := e.post(c, "/console/signin/oidc", url.Values{"csrf": {csrfOf(e.t, form)}}, nil)
	if callback == "" {
		e.t.Fatalf("the provider did not send the browser back: %d %s\n%s", p.code, p.url, p.body)
	}
	return p, callback
}

// A person signs in through the company's OpenID provider: the console
// sends them there with a state, a nonce and a PKCE challenge, exchanges
// the code on the server with its secret and verifier, and opens its own
// session; the browser never sees the provider's tokens.
func TestOIDCSignIn(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		p := newProvider(t)
		e := newOIDCEnv(t, open, p)
		rec := &seen{next: http.DefaultTransport}
		b := e.browser()
		b.Transport = rec
		pg, _ := e.oidcStart(b, false)
		if pg.code != http.StatusOK || pg.url != "/console/signin/oidc/callback" || !strings.Contains(pg.body, `content="0;url=/console/deliveries"`) {
			t.Fatalf("after the provider: %d %s\n%s", pg.code, pg.url, pg.body)
		}
		p.mu.Lock()
		auth := p.auth
		tokens := append([]string(nil), p.tokens...)
		p.mu.Unlock()
		if auth.Get("code_challenge_method") != "S256" || auth.Get("nonce") == "" || len(auth.Get("state")) < 32 ||
			auth.Get("redirect_uri") != e.srv.URL+"/console/signin/oidc/callback" || !strings.Contains(auth.Get("scope"), "openid") {
			t.Errorf("the authorization request: %v", auth)
		}
		if d := e.get(b, "/console/deliveries"); d.url != "/console/deliveries" || !strings.Contains(d.body, "Ana Souza") {
			t.Fatalf("not signed in: %s\n%s", d.url, d.body)
		}
		rec.mu.Lock()
		all := rec.all.String()
		rec.mu.Unlock()
		if len(tokens) != 2 {
			t.Fatalf("the provider issued %d tokens", len(tokens))
		}
		for _, tok := range tokens {
			if strings.Contains(all, tok) || strings.Contains(all, tok[:20]) {
				t.Errorf("the browser saw a token of the provider")
			}
		}
		acc, err := e.st.ListAccess(t.Context(), store.AccessQuery{Person: demo.Owner})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range acc {
			found = found || (a.Client == console.ClientID && a.Workspace == demo.Workspace)
		}
		if !found {
			t.Errorf("no console grant in the access list: %+v", acc)
		}
	})
}

// What an OIDC sign-in refuses, each saying why: the provider's answer
// taken to another browser, sent twice or too late; an ID token with
// another nonce; an unverified or unknown e-mail address; a wrong client
// secret; the provider's own error (shown escaped).
func TestOIDCSignInRefusals(t *testing.T) {
	p := newProvider(t)
	e := newOIDCEnv(t, openSQLite, p)

	// Another browser.
	_, callback := e.oidcStart(e.browser(), true)
	if pg := e.get(e.browser(), strings.TrimPrefix(callback, e.srv.URL)); pg.code != http.StatusUnauthorized || !strings.Contains(pg.body, "another browser") {
		t.Errorf("the callback in another browser: %d\n%s", pg.code, pg.body)
	}
	// Twice: the first signs in, the second is refused.
	b := e.browser()
	_, callback = e.oidcStart(b, true)
	if pg := e.get(b, strings.TrimPrefix(callback, e.srv.URL)); pg.code != http.StatusOK {
		t.Fatalf("the callback: %d\n%s", pg.code, pg.body)
	}
	if pg := e.get(b, strings.TrimPrefix(callback, e.srv.URL)); pg.code != http.StatusUnauthorized || !strings.Contains(pg.body, "already used") {
		t.Errorf("the callback again: %d\n%s", pg.code, pg.body)
	}
	// Too late.
	b = e.browser()
	_, callback = e.oidcStart(b, true)
	e.clk.Add(console.OIDCFlowTimeout + time.Second)
	if pg := e.get(b, strings.TrimPrefix(callback, e.srv.URL)); pg.code != http.StatusUnauthorized || !strings.Contains(pg.body, "expired") {
		t.Errorf("a late callback: %d\n%s", pg.code, pg.body)
	}

	for _, tc := range []struct {
		name string
		set  func(p *provider)
		want string
	}{
		{"another nonce", func(p *provider) { p.badNonce = true }, "nonce differs"},
		{"unverified e-mail", func(p *provider) { p.claims["email_verified"] = false }, "not verified"},
		{"unknown e-mail", func(p *provider) { p.claims["email"] = "eve@example.com" }, "No one here is eve@example.com"},
		{"wrong secret", func(p *provider) { p.secret = "another" }, "did not accept the sign-in (invalid_client)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.set(func(p *provider) {
				p.badNonce, p.secret = false, "s3cret-of-the-console"
				p.claims = map[string]any{"sub": "idp-ana", "email": "ana@demo.kobana.dev", "email_verified": true}
				tc.set(p)
			})
			b := e.browser()
			pg, _ := e.oidcStart(b, false)
			if pg.code != http.StatusUnauthorized || !strings.Contains(pg.body, tc.want) {
				t.Errorf("%d, want 401 saying %q:\n%s", pg.code, tc.want, pg.body)
			}
			if d := e.get(b, "/console/emails"); d.url != "/console/signin" {
				t.Errorf("signed in anyway: %s", d.url)
			}
		})
	}
	pg := e.get(e.browser(), "/console/signin/oidc/callback?error=access_denied&error_description="+url.QueryEscape("<script>alert(1)</script>"))
	if pg.code != http.StatusUnauthorized || !strings.Contains(pg.body, "access_denied (&lt;script&gt;alert(1)&lt;/script&gt;)") {
		t.Errorf("the provider's error: %d\n%s", pg.code, pg.body)
	}
	// The sign-in page's form may send the browser to the provider (a
	// form's redirect is held to its page's form-action); no other page's.
	if csp := e.get(e.browser(), "/console/signin").header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' "+p.url+";") {
		t.Errorf("the sign-in page's policy: %s", csp)
	}
	b = e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	if csp := e.get(b, "/console/emails").header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self';") {
		t.Errorf("the list's policy: %s", csp)
	}
	if pg := e.post(e.browser(), "/console/signin/oidc", url.Values{"csrf": {"forged"}}, nil); pg.code != http.StatusForbidden {
		t.Errorf("the OIDC form without its token: %d", pg.code)
	}
}
