package authserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/authserver"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// env is an authorization server on loopback over a fresh store with one
// organization: Ana (owner) and Vic (viewer) of workspace w1.
type env struct {
	t     *testing.T
	st    store.Store
	as    *authserver.Server
	url   string
	mux   *http.ServeMux
	ctx   context.Context
	redir string
}

const resource = "/mcp"

func newEnv(t *testing.T, tweak func(*authserver.Options)) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, err := range []error{
		st.PutOrganization(ctx, store.Organization{ID: "o1", Name: "Org"}),
		st.PutWorkspace(ctx, store.Workspace{ID: "w1", Organization: "o1", Name: "Finance"}),
		st.PutPerson(ctx, store.Person{ID: "ana", Organization: "o1", Name: "Ana Souza", Email: "ana@example.com"}),
		st.PutPerson(ctx, store.Person{ID: "vic", Organization: "o1", Name: "Vic Viewer", Email: "vic@example.com"}),
		st.SetMembership(ctx, "w1", "ana", "owner"),
		st.SetMembership(ctx, "w1", "vic", "viewer"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	opts := authserver.Options{Store: st, Issuer: hs.URL, Resource: hs.URL + resource, ResourceName: "Kobana"}
	if tweak != nil {
		tweak(&opts)
	}
	as, err := authserver.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for p, h := range as.OpenRoutes() {
		mux.Handle(p, h)
	}
	for p, h := range as.PageRoutes() {
		mux.Handle(p, h)
	}
	return &env{t: t, st: st, as: as, url: hs.URL, mux: mux, ctx: ctx, redir: "http://127.0.0.1:9/callback"}
}

// register registers a client with the given metadata (redirect_uris
// defaulting to e.redir) and returns its id.
func (e *env) register(meta map[string]any) string {
	e.t.Helper()
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta["redirect_uris"]; !ok {
		meta["redirect_uris"] = []string{e.redir}
	}
	code, body := e.postJSON(authserver.RegisterPath, meta)
	if code != http.StatusCreated {
		e.t.Fatalf("register: HTTP %d %s", code, body)
	}
	var m struct {
		ClientID string `json:"client_id"`
		Method   string `json:"token_endpoint_auth_method"`
	}
	json.Unmarshal(body, &m)
	if m.ClientID == "" || m.Method != "none" {
		e.t.Fatalf("register: %s", body)
	}
	return m.ClientID
}

func (e *env) postJSON(path string, v any) (int, []byte) {
	b, _ := json.Marshal(v)
	resp, err := http.Post(e.url+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// signInCode mints a sign-in code for a person in w1.
func (e *env) signInCode(person string) string {
	e.t.Helper()
	code := store.NewSignInCode()
	if err := e.st.CreateSignInCode(e.ctx, store.SignInCode{Hash: store.HashToken(code), Person: person, Workspace: "w1", Expires: time.Now().Add(5 * time.Minute)}); err != nil {
		e.t.Fatal(err)
	}
	return code
}

// browser is a cookie-keeping client that does not follow redirects.
func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	v := store.RandomHex(32)
	sum := sha256.Sum256([]byte(v))
	return pkce{v, base64.RawURLEncoding.EncodeToString(sum[:])}
}

// authURL is an authorization request of client for scope with p.
func (e *env) authURL(client, scope string, p pkce, extra url.Values) string {
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {e.redir}, "state": {"st-" + store.RandomHex(4)},
		"code_challenge": {p.challenge}, "code_challenge_method": {"S256"}, "resource": {e.url + resource}}
	if scope != "" {
		q.Set("scope", scope)
	}
	for k, v := range extra {
		if len(v) == 0 {
			q.Del(k)
		} else {
			q[k] = v
		}
	}
	return e.url + authserver.AuthorizePath + "?" + q.Encode()
}

var csrfField = regexp.MustCompile(`name="kobana_csrf" value="([^"]+)"`)

// page GETs or POSTs the authorization page and returns the response and
// its body.
func page(t *testing.T, b *http.Client, method, u string, form url.Values, header http.Header) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

func csrfOf(t *testing.T, html string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%s", html)
	}
	return m[1]
}

// consent signs in with a fresh code of person and allows; it returns the
// redirect's query.
func (e *env) consent(b *http.Client, u, person string) url.Values {
	e.t.Helper()
	resp, html := page(e.t, b, "GET", u, nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(html, "Sign in to Kobana") {
		e.t.Fatalf("authorize page: HTTP %d\n%s", resp.StatusCode, html)
	}
	csrf := csrfOf(e.t, html)
	resp, html = page(e.t, b, "POST", u, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"signin"}, "kobana_code": {e.signInCode(person)}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(html, "Allow ") {
		e.t.Fatalf("after sign-in: HTTP %d\n%s", resp.StatusCode, html)
	}
	resp, html = page(e.t, b, "POST", u, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"allow"}}, nil)
	return redirected(e.t, resp, html, e.redir)
}

// redirected checks resp is a redirect to want and returns its query.
func redirected(t *testing.T, resp *http.Response, body, want string) url.Values {
	t.Helper()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || !strings.HasPrefix(loc, want+"?") {
		t.Fatalf("want a redirect to %s, got HTTP %d Location %q\n%s", want, resp.StatusCode, loc, body)
	}
	u, _ := url.Parse(loc)
	return u.Query()
}

type tokens struct {
	Access  string `json:"access_token"`
	Refresh string `json:"refresh_token"`
	Type    string `json:"token_type"`
	Expires int    `json:"expires_in"`
	Scope   string `json:"scope"`
	Error   string `json:"error"`
	Desc    string `json:"error_description"`
	status  int
}

func (e *env) token(form url.Values) tokens {
	e.t.Helper()
	resp, err := http.PostForm(e.url+authserver.TokenPath, form)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var tk tokens
	json.NewDecoder(resp.Body).Decode(&tk)
	tk.status = resp.StatusCode
	return tk
}

func (e *env) exchange(client, code string, p pkce) tokens {
	return e.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {e.redir}, "client_id": {client},
		"code_verifier": {p.verifier}, "resource": {e.url + resource}})
}

func (e *env) refresh(client, rt string, extra url.Values) tokens {
	f := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}, "resource": {e.url + resource}}
	for k, v := range extra {
		f[k] = v
	}
	return e.token(f)
}

// grant runs the whole flow for person and returns the client and tokens.
func (e *env) grant(person, scope string) (string, tokens) {
	e.t.Helper()
	client := e.register(map[string]any{"client_name": "Test client"})
	p := newPKCE()
	q := e.consent(browser(e.t), e.authURL(client, scope, p, nil), person)
	tk := e.exchange(client, q.Get("code"), p)
	if tk.status != http.StatusOK || tk.Access == "" || tk.Refresh == "" {
		e.t.Fatalf("exchange: %+v", tk)
	}
	return client, tk
}

func (e *env) refused(token string) error {
	_, err := e.as.Verify(e.ctx, token)
	if err == nil {
		return errors.New("the token is still accepted")
	}
	if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("refused, but not as a bad token: %v", err)
	}
	return nil
}

// TestMetadata: RFC 8414's document names every endpoint below the issuer,
// S256 only, the iss response parameter and both registration ways.
func TestMetadata(t *testing.T) {
	e := newEnv(t, func(o *authserver.Options) { o.HTTPClient = http.DefaultClient })
	resp, err := http.Get(e.url + authserver.MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	want := map[string]any{
		"issuer": e.url, "authorization_endpoint": e.url + "/oauth/authorize", "token_endpoint": e.url + "/oauth/token",
		"registration_endpoint": e.url + "/oauth/register", "revocation_endpoint": e.url + "/oauth/revoke",
		"authorization_response_iss_parameter_supported": true, "client_id_metadata_document_supported": true,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if fmt.Sprint(m["code_challenge_methods_supported"]) != "[S256]" || fmt.Sprint(m["grant_types_supported"]) != "[authorization_code refresh_token]" ||
		fmt.Sprint(m["token_endpoint_auth_methods_supported"]) != "[none]" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("metadata = %v", m)
	}
}

// TestFlow: registration, sign-in, consent, code exchange with PKCE, the
// access token accepted for the resource, refresh with rotation, and the
// reuse of a rotated refresh token revoking the whole grant.
func TestFlow(t *testing.T) {
	e := newEnv(t, nil)
	client, tk := e.grant("ana", "read write")
	if !strings.HasPrefix(tk.Access, "kbo_at_") || !strings.HasPrefix(tk.Refresh, "kbo_rt_") || tk.Type != "bearer" || tk.Scope != "read write" || tk.Expires < 800 || tk.Expires > 900 {
		t.Errorf("tokens = %+v", tk)
	}
	p, err := e.as.Verify(e.ctx, tk.Access)
	if err != nil {
		t.Fatal(err)
	}
	if p.Person != "ana" || p.Workspace != "w1" || p.Organization != "o1" || p.Role != "owner" || !slices.Equal(p.Scopes, []string{"read", "write"}) ||
		!store.IsGrantID(p.TokenID) || time.Until(p.Expires) > 15*time.Minute+time.Second {
		t.Errorf("principal = %+v", p)
	}
	// The grant is in the access list, with its client, never a value.
	list, _ := e.st.ListAccess(e.ctx, store.AccessQuery{})
	if len(list) != 1 || list[0].ID != p.TokenID || list[0].Kind != store.OAuthGrant || list[0].ClientName != "Test client" || list[0].LastUsed.IsZero() {
		t.Errorf("access list = %+v", list)
	}
	// Refresh rotates: a new pair, the old access token no longer works.
	tk2 := e.refresh(client, tk.Refresh, nil)
	if tk2.status != http.StatusOK || tk2.Refresh == tk.Refresh || tk2.Access == tk.Access {
		t.Fatalf("refresh = %+v", tk2)
	}
	if err := e.refused(tk.Access); err != nil {
		t.Errorf("access token of before the refresh: %v", err)
	}
	if _, err := e.as.Verify(e.ctx, tk2.Access); err != nil {
		t.Errorf("refreshed access token: %v", err)
	}
	// Reusing the rotated refresh token: invalid_grant, and the grant is
	// revoked with everything issued for it.
	if re := e.refresh(client, tk.Refresh, nil); re.status != http.StatusBadRequest || re.Error != "invalid_grant" {
		t.Errorf("reused refresh token = %+v, want invalid_grant", re)
	}
	if err := e.refused(tk2.Access); err != nil {
		t.Errorf("access token after a refresh token was reused: %v", err)
	}
	if re := e.refresh(client, tk2.Refresh, nil); re.status != http.StatusBadRequest || re.Access != "" {
		t.Errorf("the newest refresh token after a reuse = %+v, want refused", re)
	}
	if g, _ := e.st.GetGrant(e.ctx, p.TokenID); g.Revoked.IsZero() {
		t.Errorf("grant after reuse = %+v, want revoked", g)
	}
}

// TestBadCodeExchanges: a wrong or missing PKCE verifier, a redirect URI
// other than the authorization's, another client and another resource are
// each refused (invalid_grant; invalid_request without a verifier;
// invalid_target for the resource) and issue nothing; a reused code is
// invalid_grant and revokes what the code gave.
func TestBadCodeExchanges(t *testing.T) {
	e := newEnv(t, nil)
	client := e.register(nil)
	other := e.register(nil)
	for name, tc := range map[string]struct {
		form url.Values
		err  string
	}{
		"wrong verifier":   {url.Values{"code_verifier": {newPKCE().verifier}}, "invalid_grant"},
		"no verifier":      {url.Values{"code_verifier": {""}}, "invalid_grant"},
		"other redirect":   {url.Values{"redirect_uri": {"http://127.0.0.1:9/other"}}, "invalid_grant"},
		"other client":     {url.Values{"client_id": {other}}, "invalid_grant"},
		"another resource": {url.Values{"resource": {"https://elsewhere.example/mcp"}}, "invalid_target"},
	} {
		p := newPKCE()
		code := e.consent(browser(t), e.authURL(client, "read", p, nil), "ana").Get("code")
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {e.redir}, "client_id": {client}, "code_verifier": {p.verifier}}
		for k, v := range tc.form {
			form[k] = v
		}
		if tk := e.token(form); tk.Access != "" || tk.Error != tc.err {
			t.Errorf("%s: %+v, want %s", name, tk, tc.err)
		}
	}
	if list, _ := e.st.ListAccess(e.ctx, store.AccessQuery{}); len(list) != 5 {
		t.Fatalf("grants = %d, want the five consented", len(list))
	}
	p := newPKCE()
	code := e.consent(browser(t), e.authURL(client, "read", p, nil), "ana").Get("code")
	tk := e.exchange(client, code, p)
	if tk.status != http.StatusOK {
		t.Fatalf("exchange: %+v", tk)
	}
	if again := e.exchange(client, code, p); again.Error != "invalid_grant" || again.Access != "" {
		t.Errorf("reused code: %+v, want invalid_grant", again)
	}
	if err := e.refused(tk.Access); err != nil {
		t.Errorf("the access token of a reused code: %v", err)
	}
	if re := e.refresh(client, tk.Refresh, nil); re.Access != "" {
		t.Errorf("the refresh token of a reused code: %+v", re)
	}
}

// TestBadAuthorizationRequests: requests that name no registered client or
// redirect URI get this server's error page and no redirect (no open
// redirector); the others are sent back with the RFC's error and the
// issuer.
func TestBadAuthorizationRequests(t *testing.T) {
	e := newEnv(t, nil)
	client := e.register(map[string]any{"redirect_uris": []string{e.redir}, "scope": "read"})
	p := newPKCE()
	b := browser(t)
	for name, extra := range map[string]url.Values{
		"unregistered redirect":   {"redirect_uri": {"https://evil.example/cb"}},
		"redirect with more path": {"redirect_uri": {e.redir + "/x"}},
		"redirect with a query":   {"redirect_uri": {e.redir + "?next=https://evil.example"}},
		"unknown client":          {"client_id": {"cli_nope"}},
		"no client":               {"client_id": {}},
	} {
		resp, html := page(t, b, "GET", e.authURL(client, "read", p, extra), nil, nil)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(html, "Nothing was sent to the application") {
			t.Errorf("%s: HTTP %d Location %q, want this server's error page\n%s", name, resp.StatusCode, resp.Header.Get("Location"), html)
		}
	}
	for name, tc := range map[string]struct {
		extra url.Values
		scope string
		err   string
	}{
		"no PKCE":             {url.Values{"code_challenge": {}, "code_challenge_method": {}}, "read", "invalid_request"},
		"plain PKCE":          {url.Values{"code_challenge_method": {"plain"}}, "read", "invalid_request"},
		"another resource":    {url.Values{"resource": {"https://elsewhere.example/mcp"}}, "read", "invalid_target"},
		"unknown scope":       {nil, "read admin", "invalid_scope"},
		"beyond its scope":    {nil, "read write", "invalid_scope"},
		"implicit grant":      {url.Values{"response_type": {"token"}}, "read", "unsupported_response_type"},
		"fragment delivery":   {url.Values{"response_mode": {"fragment"}}, "read", "unsupported_response_mode"},
		"relative resource":   {url.Values{"resource": {"/mcp"}}, "read", "invalid_request"},
		"resource w/fragment": {url.Values{"resource": {e.url + "/mcp#x"}}, "read", "invalid_request"},
	} {
		resp, html := page(t, b, "GET", e.authURL(client, tc.scope, p, tc.extra), nil, nil)
		q := redirected(t, resp, html, e.redir)
		if q.Get("error") != tc.err || q.Get("iss") != e.url || q.Get("code") != "" {
			t.Errorf("%s: redirect query %v, want error=%s with iss", name, q, tc.err)
		}
	}
}

// TestConsentForms: a consent posted without the page's CSRF token, with
// another page's, or from another origin grants nothing; denying sends
// access_denied; a spent or unknown sign-in code signs nobody in.
func TestConsentForms(t *testing.T) {
	e := newEnv(t, nil)
	client := e.register(nil)
	p := newPKCE()
	u := e.authURL(client, "read", p, nil)
	b := browser(t)
	_, html := page(t, b, "GET", u, nil, nil)
	csrf := csrfOf(t, html)
	code := e.signInCode("ana")

	// Sign-in CSRF: the code is not spent by a forged form.
	for name, tc := range map[string]struct {
		form   url.Values
		header http.Header
	}{
		"no token":        {url.Values{"kobana_action": {"signin"}, "kobana_code": {code}}, nil},
		"forged token":    {url.Values{"kobana_csrf": {"x" + csrf[1:]}, "kobana_action": {"signin"}, "kobana_code": {code}}, nil},
		"cross-site page": {url.Values{"kobana_csrf": {csrf}, "kobana_action": {"signin"}, "kobana_code": {code}}, http.Header{"Origin": {"https://evil.example"}}},
		"cross-site hint": {url.Values{"kobana_csrf": {csrf}, "kobana_action": {"signin"}, "kobana_code": {code}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
	} {
		resp, html := page(t, b, "POST", u, tc.form, tc.header)
		if resp.StatusCode != http.StatusForbidden || strings.Contains(html, "Allow ") {
			t.Errorf("%s: HTTP %d, want 403\n%s", name, resp.StatusCode, html)
		}
	}
	// Another browser (its own CSRF cookie) cannot use this page's token.
	other := browser(t)
	page(t, other, "GET", u, nil, nil)
	if resp, _ := page(t, other, "POST", u, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"signin"}, "kobana_code": {code}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another browser's token: HTTP %d, want 403", resp.StatusCode)
	}
	// A token for another request (a wider scope) is refused too.
	wider := e.authURL(client, "read write", p, nil)
	if resp, _ := page(t, b, "POST", wider, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"signin"}, "kobana_code": {code}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the token of another request: HTTP %d, want 403", resp.StatusCode)
	}
	// Unknown code.
	if resp, html := page(t, b, "POST", u, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"signin"}, "kobana_code": {"kbs_nope"}}, nil); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(html, "unknown, used or expired") {
		t.Errorf("unknown code: HTTP %d\n%s", resp.StatusCode, html)
	}
	// The real sign-in works (the code was not spent above), once.
	resp, html := page(t, b, "POST", u, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"signin"}, "kobana_code": {code}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(html, `id="person">Ana Souza`) || !strings.Contains(html, `id="workspace">Finance`) || !strings.Contains(html, `id="role">owner`) {
		t.Fatalf("consent page: HTTP %d\n%s", resp.StatusCode, html)
	}
	if resp, _ := page(t, browser(t), "GET", u, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	// Consent CSRF: allow without the token, or from another origin.
	for name, tc := range map[string]struct {
		form   url.Values
		header http.Header
	}{
		"no token":   {url.Values{"kobana_action": {"allow"}}, nil},
		"cross-site": {url.Values{"kobana_csrf": {csrf}, "kobana_action": {"allow"}}, http.Header{"Origin": {"null"}}},
	} {
		resp, _ := page(t, b, "POST", u, tc.form, tc.header)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
			t.Errorf("consent %s: HTTP %d Location %q, want 403", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if list, _ := e.st.ListAccess(e.ctx, store.AccessQuery{}); len(list) != 0 {
		t.Errorf("grants after forged consents: %+v", list)
	}
	// Deny.
	resp, html = page(t, b, "POST", u, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"deny"}}, nil)
	if q := redirected(t, resp, html, e.redir); q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("iss") != e.url {
		t.Errorf("deny: %v", q)
	}
	// A POST carrying the authorization request in its body is refused.
	if resp, _ := page(t, b, "POST", u, url.Values{"kobana_csrf": {csrf}, "kobana_action": {"allow"}, "redirect_uri": {"https://evil.example/cb"}}, nil); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("a POSTed redirect_uri: HTTP %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestScopes: a viewer's grant holds read only, whatever it asked; a
// refresh cannot widen a grant (invalid_scope); a read grant's token is
// read-scoped.
func TestScopes(t *testing.T) {
	e := newEnv(t, nil)
	client, tk := e.grant("vic", "read write")
	if tk.Scope != "read" {
		t.Errorf("viewer's grant scope = %q, want read", tk.Scope)
	}
	if re := e.refresh(client, tk.Refresh, url.Values{"scope": {"read write"}}); re.Error != "invalid_scope" || re.Access != "" {
		t.Errorf("widening refresh = %+v, want invalid_scope", re)
	}
	if re := e.refresh(client, tk.Refresh, url.Values{"scope": {"read"}}); re.status != http.StatusOK {
		t.Errorf("a refresh for the granted scope = %+v", re)
	}
	_, tk = e.grant("ana", "read")
	if p, err := e.as.Verify(e.ctx, tk.Access); err != nil || !slices.Equal(p.Scopes, []string{"read"}) {
		t.Errorf("read grant's principal = %+v %v", p, err)
	}
}

// TestRevocation: RFC 7009 for a refresh or an access token revokes the
// grant; revoking the grant by
// id (kobana token revoke) or all of a person's access refuses the rest;
// expired access tokens are refused.
func TestRevocation(t *testing.T) {
	e := newEnv(t, func(o *authserver.Options) { o.AccessTokenLifespan = time.Second })
	revoke := func(client, token string) int {
		resp, err := http.PostForm(e.url+authserver.RevokePath, url.Values{"token": {token}, "client_id": {client}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	client, tk := e.grant("ana", "read")
	if code := revoke(client, tk.Refresh); code != http.StatusOK {
		t.Fatalf("revoke: HTTP %d", code)
	}
	if err := e.refused(tk.Access); err != nil {
		t.Errorf("after revoking the refresh token: %v", err)
	}
	if re := e.refresh(client, tk.Refresh, nil); re.Access != "" {
		t.Errorf("revoked refresh token: %+v", re)
	}
	if code := revoke(client, tk.Refresh); code != http.StatusOK {
		t.Errorf("revoking a revoked token: HTTP %d, want 200 (RFC 7009 §2.2)", code)
	}
	client, tk = e.grant("ana", "read")
	if code := revoke("cli_other", tk.Access); code == http.StatusOK {
		t.Errorf("another client revoked the token")
	}
	if code := revoke(client, tk.Access); code != http.StatusOK {
		t.Fatalf("revoke: HTTP %d", code)
	}
	if err := e.refused(tk.Access); err != nil {
		t.Errorf("revoked access token: %v", err)
	}
	if re := e.refresh(client, tk.Refresh, nil); re.Access != "" {
		t.Errorf("refresh after revoking its access token: %+v", re)
	}
	client, tk = e.grant("ana", "read")
	p, err := e.as.Verify(e.ctx, tk.Access)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.RevokeToken(e.ctx, p.TokenID); err != nil {
		t.Fatal(err)
	}
	if err := e.refused(tk.Access); err != nil {
		t.Errorf("after kobana token revoke: %v", err)
	}
	if re := e.refresh(client, tk.Refresh, nil); re.Access != "" {
		t.Errorf("refresh of a revoked grant: %+v", re)
	}
	_, tk = e.grant("ana", "read")
	if n, err := e.st.RevokePersonAccess(e.ctx, "ana", ""); err != nil || n != 1 {
		t.Errorf("RevokePersonAccess = %d %v", n, err)
	}
	if err := e.refused(tk.Access); err != nil {
		t.Errorf("after revoking the person's access: %v", err)
	}
	_, tk = e.grant("vic", "read")
	if err := testwait.Until(10*time.Second, func() error { return e.refused(tk.Access) }); err != nil {
		t.Errorf("an access token past its lifetime: %v", err)
	}
}

// TestAudience: a token issued by this server for its resource is refused
// by a server whose resource is another, and a token of another issuer
// (another key) is refused.
func TestAudience(t *testing.T) {
	e := newEnv(t, nil)
	_, tk := e.grant("ana", "read")
	other, err := authserver.New(e.ctx, authserver.Options{Store: e.st, Issuer: e.url, Resource: "https://billing.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Verify(e.ctx, tk.Access); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("token for another resource: %v", err)
	}
	for _, bad := range []string{"", "kbo_at_x", tk.Refresh, "kbn_" + strings.Repeat("0", 64), tk.Access[:len(tk.Access)-2] + "xx"} {
		if err := e.refused(bad); err != nil {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestRegistration: RFC 7591 with its limits: redirect URIs that could
// send a code astray are invalid_redirect_uri, unsupported metadata
// invalid_client_metadata, and an address registering too often 429.
func TestRegistration(t *testing.T) {
	e := newEnv(t, func(o *authserver.Options) { o.Registration.PerAddressPerHour = 12 })
	for name, meta := range map[string]map[string]any{
		"no redirect":          {"redirect_uris": []string{}},
		"http remote":          {"redirect_uris": []string{"http://evil.example/cb"}},
		"javascript":           {"redirect_uris": []string{"javascript:alert(1)"}},
		"data":                 {"redirect_uris": []string{"data:text/html,x"}},
		"fragment":             {"redirect_uris": []string{"https://app.example/cb#x"}},
		"relative":             {"redirect_uris": []string{"/cb"}},
		"bare custom scheme":   {"redirect_uris": []string{"myapp:/cb"}},
		"userinfo":             {"redirect_uris": []string{"https://user@app.example/cb"}},
		"too many":             {"redirect_uris": slices.Repeat([]string{"https://app.example/cb"}, 11)},
		"implicit":             {"redirect_uris": []string{"https://app.example/cb"}, "response_types": []string{"token"}},
		"client credentials":   {"redirect_uris": []string{"https://app.example/cb"}, "grant_types": []string{"client_credentials"}},
		"unknown scope":        {"redirect_uris": []string{"https://app.example/cb"}, "scope": "admin"},
		"control in the name":  {"redirect_uris": []string{"https://app.example/cb"}, "client_name": "a\x1b[31mb"},
		"not an object":        nil,
		"http client uri":      {"redirect_uris": []string{"https://app.example/cb"}, "client_uri": "http://app.example"},
		"too long a name":      {"redirect_uris": []string{"https://app.example/cb"}, "client_name": strings.Repeat("x", 101)},
		"too long a redirect":  {"redirect_uris": []string{"https://app.example/" + strings.Repeat("x", 2000)}},
		"non-https custom ok?": {"redirect_uris": []string{"ftp://app.example/cb"}},
	} {
		var code int
		var body []byte
		if meta == nil {
			code, body = e.postJSON(authserver.RegisterPath, []string{"x"})
		} else {
			code, body = e.postJSON(authserver.RegisterPath, meta)
		}
		if code != http.StatusBadRequest || !strings.Contains(string(body), `"invalid_`) {
			t.Errorf("%s: HTTP %d %s", name, code, body)
		}
	}
	// Accepted: https, loopback http (any port at use, RFC 8252), a
	// reverse-domain scheme; a secret-based method is replaced by none.
	code, body := e.postJSON(authserver.RegisterPath, map[string]any{"redirect_uris": []string{"https://app.example/cb", "http://localhost:3000/cb", "com.example.app:/cb"},
		"token_endpoint_auth_method": "client_secret_basic", "client_name": "App"})
	if code != http.StatusCreated || !strings.Contains(string(body), `"token_endpoint_auth_method":"none"`) {
		t.Errorf("valid registration: HTTP %d %s", code, body)
	}
	var last int
	for range 12 {
		last, _ = e.postJSON(authserver.RegisterPath, map[string]any{"redirect_uris": []string{"https://app.example/cb"}})
	}
	if last != http.StatusTooManyRequests {
		t.Errorf("the 13th registration from one address: HTTP %d, want 429", last)
	}
}

// TestClientIDMetadataDocument: a client whose id is the https URL of its
// metadata document is read from there (through Options.HTTPClient),
// kept, and served like a registered one; a document whose client_id is
// not its URL, one that redirects, or one naming a confidential client is
// refused, with this server's error page and no redirect.
func TestClientIDMetadataDocument(t *testing.T) {
	docs := map[string]string{}
	var fetches int
	var mu sync.Mutex
	host := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fetches++
		if r.URL.Path == "/moved.json" {
			http.Redirect(w, r, "/client.json", http.StatusFound)
			return
		}
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, doc)
	}))
	defer host.Close()
	e := newEnv(t, func(o *authserver.Options) { o.HTTPClient = host.Client() })
	id := host.URL + "/client.json"
	docs["/client.json"] = fmt.Sprintf(`{"client_id":%q,"client_name":"Metadata App","redirect_uris":[%q],"token_endpoint_auth_method":"none"}`, id, e.redir)
	docs["/other.json"] = fmt.Sprintf(`{"client_id":%q,"client_name":"Liar","redirect_uris":[%q]}`, id, e.redir)
	docs["/secret.json"] = fmt.Sprintf(`{"client_id":%q,"client_name":"Secret","redirect_uris":[%q],"token_endpoint_auth_method":"client_secret_basic"}`, host.URL+"/secret.json", e.redir)
	p := newPKCE()
	q := e.consent(browser(t), e.authURL(id, "read", p, nil), "ana")
	tk := e.exchange(id, q.Get("code"), p)
	if tk.status != http.StatusOK {
		t.Fatalf("exchange for a metadata-document client: %+v", tk)
	}
	if c, err := e.st.GetOAuthClient(e.ctx, id); err != nil || c.Name != "Metadata App" || c.Kind != "metadata" {
		t.Errorf("kept client = %+v %v", c, err)
	}
	if re := e.refresh(id, tk.Refresh, nil); re.status != http.StatusOK {
		t.Errorf("refresh: %+v", re)
	}
	mu.Lock()
	n := fetches
	mu.Unlock()
	if n != 1 {
		t.Errorf("the document was read %d times, want once (kept by its Cache-Control)", n)
	}
	for _, bad := range []string{host.URL + "/other.json", host.URL + "/moved.json", host.URL + "/secret.json", host.URL + "/missing.json"} {
		resp, html := page(t, browser(t), "GET", e.authURL(bad, "read", p, nil), nil, nil)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("%s: HTTP %d Location %q\n%s", bad, resp.StatusCode, resp.Header.Get("Location"), html)
		}
	}
}
