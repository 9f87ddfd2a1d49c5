package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/console"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

var demoNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// clock is a clock the test moves; the store and the console share it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is the console over the demo's Inbox, served by httptest.
type env struct {
	t     testing.TB
	st    store.Store
	clk   *clock
	srv   *httptest.Server
	tools *mcpserver.Server
	proc  *fakeProcessor
	out   *outside
}

// outside is the transport of the product's outbound requests: nothing
// leaves the test. It refuses every request unless a test sets answer,
// the HTTP status it then answers with; it records the URLs asked for.
type outside struct {
	mu     sync.Mutex
	answer int
	urls   []string
}

func (o *outside) RoundTrip(r *http.Request) (*http.Response, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.Body != nil {
		r.Body.Close()
	}
	if o.answer == 0 {
		return nil, errors.New("the console's tests send nothing outside")
	}
	o.urls = append(o.urls, r.URL.String())
	return &http.Response{StatusCode: o.answer, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
}

func (o *outside) set(status int) { o.mu.Lock(); o.answer = status; o.mu.Unlock() }

func (o *outside) sent() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.urls)
}

// fakeProcessor stands in for the pipeline's: it records the reprocess
// requests it is handed and refuses an e-mail that does not exist.
type fakeProcessor struct {
	repo inbox.Repo
	mu   sync.Mutex
	reqs []inbox.ReprocessRequest
}

func (f *fakeProcessor) Check(ctx context.Context, req inbox.ReprocessRequest) error {
	_, err := f.repo.Emails.Get(ctx, req.Workspace, req.EmailID)
	return err
}

func (f *fakeProcessor) Reprocess(ctx context.Context, req inbox.ReprocessRequest) (inbox.Reprocessed, error) {
	if err := f.Check(ctx, req); err != nil {
		return inbox.Reprocessed{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	return inbox.Reprocessed{EmailID: req.EmailID, Status: inbox.ReprocessQueued}, nil
}

func (f *fakeProcessor) count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.reqs) }

func openSQLite(t testing.TB, clk *clock) store.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "console.db"), store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openPG(t testing.TB, clk *clock) store.Store {
	dsn, _ := pgtest.SchemaDSN(t, "console", "console-test")
	st, err := pg.Open(context.Background(), dsn, pg.Options{Options: store.Options{Now: clk.Now}, PurgeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newEnv(t testing.TB, open func(testing.TB, *clock) store.Store) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: demoNow.Add(time.Hour)}
	st := open(t, clk)
	if _, err := inboxdemo.Load(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	proc := &fakeProcessor{repo: inbox.NewRepo(st)}
	out := &outside{}
	ibx, p, err := inboxmcp.New(inboxmcp.Options{Store: st, PublicURL: base, Now: clk.Now, Processor: proc, HTTPClient: &http.Client{Transport: out}})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ibx}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(ctx, console.Options{Store: st, Tools: tools, PublicURL: base, Now: clk.Now, Messages: inbox.BlobMessages{Blobs: st}, LiveInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, c.Handler())
	mux.Handle(inboxmcp.DownloadPath, p.DownloadHandler())
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{t: t, st: st, clk: clk, srv: srv, tools: tools, proc: proc, out: out}
}

// code mints a one-time sign-in code for a person in a workspace.
func (e *env) code(person, workspace string) string {
	e.t.Helper()
	c := store.NewSignInCode()
	if err := e.st.CreateSignInCode(context.Background(), store.SignInCode{Hash: store.HashToken(c), Person: person, Workspace: workspace, Expires: e.clk.Now().Add(10 * time.Minute)}); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// browser is a client with its own cookies.
func (e *env) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

type page struct {
	code   int
	header http.Header
	body   string
	url    string
}

func (e *env) get(c *http.Client, path string) page {
	e.t.Helper()
	res, err := c.Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

func (e *env) post(c *http.Client, path string, form url.Values, header map[string]string) page {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

func read(t testing.TB, res *http.Response) page {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{code: res.StatusCode, header: res.Header, body: string(b), url: res.Request.URL.Path}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t testing.TB, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF field on %s:\n%s", p.url, p.body)
	}
	return m[1]
}

// signIn signs the browser in with a fresh code and returns the page it
// lands on.
func (e *env) signIn(c *http.Client, person, workspace string) page {
	e.t.Helper()
	form := e.get(c, "/console/signin")
	return e.post(c, "/console/signin", url.Values{"csrf": {csrfOf(e.t, form)}, "code": {e.code(person, workspace)}}, nil)
}

func bothStores(t *testing.T, run func(t *testing.T, open func(testing.TB, *clock) store.Store)) {
	t.Run("sqlite", func(t *testing.T) { run(t, openSQLite) })
	t.Run("postgres", func(t *testing.T) { run(t, openPG) })
}

func TestSignInListDetailSignOut(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		b := e.browser()
		if p := e.get(b, "/console/emails?status=failed"); p.url != "/console/signin" {
			t.Fatalf("signed out, the list sent the browser to %s, want the sign-in page", p.url)
		}
		p := e.signIn(b, demo.Owner, demo.Workspace)
		if p.code != http.StatusOK || p.url != "/console/emails" {
			t.Fatalf("after sign-in: %d at %s\n%s", p.code, p.url, p.body)
		}
		if !strings.Contains(p.body, "Ana Souza") || !strings.Contains(p.body, `href="/console/emails/eml_inv_00"`) {
			t.Fatalf("the list does not show the person or the demo's e-mails:\n%s", p.body)
		}
		// The grant is listed with the other ways into the workspace.
		acc, err := e.st.ListAccess(context.Background(), store.AccessQuery{Person: demo.Owner})
		if err != nil {
			t.Fatal(err)
		}
		var grant string
		for _, a := range acc {
			if a.Client == console.ClientID {
				grant = a.ID
			}
		}
		if grant == "" {
			t.Fatalf("the console session is not in the access list: %+v", acc)
		}

		d := e.get(b, "/console/emails/eml_inv_00")
		if d.code != http.StatusOK || !strings.Contains(d.body, "Envelope") || !strings.Contains(d.body, "Timeline") {
			t.Fatalf("detail: %d\n%s", d.code, d.body)
		}
		if nf := e.get(b, "/console/emails/eml_nope"); nf.code != http.StatusNotFound {
			t.Fatalf("an unknown e-mail answered %d", nf.code)
		}

		out := e.post(b, "/console/signout", url.Values{"csrf": {csrfOf(t, p)}}, nil)
		if out.url != "/console/signin" {
			t.Fatalf("sign-out landed on %s (%d)", out.url, out.code)
		}
		if again := e.get(b, "/console/emails"); again.url != "/console/signin" {
			t.Fatalf("after sign-out the list answered %d at %s", again.code, again.url)
		}
		if _, err := e.st.AuthenticateGrant(context.Background(), grant); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after sign-out the session's grant still authenticates: %v", err)
		}
	})
}

func TestFiltersAreInTheURLAndPagesAreKeyset(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	p := e.get(b, "/console/emails?status=failed")
	if !strings.Contains(p.body, `href="/console/emails?status=failed" aria-current="page"`) {
		t.Fatalf("the failed facet is not current:\n%s", p.body)
	}
	for _, m := range regexp.MustCompile(`class="status s-([a-z]+)"`).FindAllStringSubmatch(p.body, -1) {
		if m[1] != "failed" {
			t.Fatalf("status=failed lists a %s e-mail", m[1])
		}
	}
	if bad := e.get(b, "/console/emails?status=%3Cscript%3E"); bad.code != http.StatusBadRequest {
		t.Fatalf("an unknown status answered %d", bad.code)
	}
	if bad := e.get(b, "/console/emails?cursor=forged"); bad.code != http.StatusBadRequest {
		t.Fatalf("a forged cursor answered %d", bad.code)
	}

	// Enough e-mails for two pages: the second continues where the first
	// stopped, with the filters kept.
	repo := inbox.NewRepo(e.st)
	for i := range 60 {
		em := inbox.Email{ID: "eml_bulk_" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26)), InboxID: "ibx_invoices", From: "bulk@example.com",
			Subject: "bulk", Status: inbox.EmailPending, ReceivedAt: demoNow.Add(time.Duration(i) * time.Minute)}
		if err := repo.Emails.Put(context.Background(), demo.Workspace, em); err != nil {
			t.Fatal(err)
		}
	}
	first := e.get(b, "/console/emails?status=pending")
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
	if next == nil {
		t.Fatalf("no next page after 60 pending e-mails:\n%s", first.body)
	}
	nextURL := strings.ReplaceAll(next[1], "&amp;", "&")
	if !strings.Contains(nextURL, "status=pending") || !strings.Contains(nextURL, "cursor=") {
		t.Fatalf("the next page's link %q lost the filter or has no cursor", nextURL)
	}
	ids := regexp.MustCompile(`href="/console/emails/(eml_[^"]+)"`)
	seen := map[string]bool{}
	for _, m := range ids.FindAllStringSubmatch(first.body, -1) {
		seen[m[1]] = true
	}
	second := e.get(b, nextURL)
	for _, m := range ids.FindAllStringSubmatch(second.body, -1) {
		if seen[m[1]] {
			t.Fatalf("%s is on both pages", m[1])
		}
	}
	if len(seen) != 50 {
		t.Fatalf("the first page lists %d e-mails, want 50", len(seen))
	}
}

func TestSignInRefusesWhatIsNotAFreshCode(t *testing.T) {
	e := newEnv(t, openSQLite)
	tok, err := e.st.CreateToken(context.Background(), store.NewToken{Person: demo.Owner, Workspace: demo.Workspace, Scopes: []string{"read", "write"}})
	if err != nil {
		t.Fatal(err)
	}
	used := e.code(demo.Owner, demo.Workspace)
	if _, err := e.st.UseSignInCode(context.Background(), store.HashToken(used)); err != nil {
		t.Fatal(err)
	}
	for name, code := range map[string]string{"static token": tok, "used code": used, "unknown code": store.NewSignInCode()} {
		b := e.browser()
		form := e.get(b, "/console/signin")
		p := e.post(b, "/console/signin", url.Values{"csrf": {csrfOf(t, form)}, "code": {code}}, nil)
		if p.code != http.StatusUnauthorized || p.url != "/console/signin" {
			t.Errorf("%s: %d at %s, want 401 on the sign-in page", name, p.code, p.url)
		}
		if e.get(b, "/console/emails").url != "/console/signin" {
			t.Errorf("%s opened the console", name)
		}
	}
	// A static token as a bearer header opens nothing either.
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/console/emails", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if p := read(t, res); p.url != "/console/signin" {
		t.Fatalf("a bearer token reached %s", p.url)
	}
}

func TestFormsNeedTheirCSRFTokenAndTheSameOrigin(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	list := e.signIn(b, demo.Owner, demo.Workspace)
	csrf := csrfOf(t, list)
	if p := e.post(b, "/console/signout", url.Values{}, nil); p.code != http.StatusForbidden {
		t.Fatalf("sign-out without its token answered %d", p.code)
	}
	if p := e.post(b, "/console/signout", url.Values{"csrf": {csrf + "x"}}, nil); p.code != http.StatusForbidden {
		t.Fatalf("sign-out with a wrong token answered %d", p.code)
	}
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}, {"Origin": "https://evil.example"}} {
		if p := e.post(b, "/console/signout", url.Values{"csrf": {csrf}}, h); p.code != http.StatusForbidden {
			t.Fatalf("a cross-origin sign-out (%v) answered %d", h, p.code)
		}
	}
	if p := e.get(b, "/console/emails"); p.url != "/console/emails" {
		t.Fatalf("the refused forms ended the session: %s", p.url)
	}
	// The sign-in form's token is bound to this browser's pre-session
	// cookie: another browser's token does not sign in (login CSRF).
	other := e.browser()
	form := e.get(other, "/console/signin")
	p := e.post(e.browser(), "/console/signin", url.Values{"csrf": {csrfOf(t, form)}, "code": {e.code(demo.Owner, demo.Workspace)}}, nil)
	if p.code != http.StatusForbidden {
		t.Fatalf("a sign-in with another browser's token answered %d", p.code)
	}
	if p := e.post(b, "/console/signout", url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "same-origin"}); p.url != "/console/signin" {
		t.Fatalf("a same-origin sign-out with its token answered %d at %s", p.code, p.url)
	}
}

func TestEveryResponseCarriesItsOwnCSPNonce(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	nonces := map[string]bool{}
	for _, path := range []string{"/console/signin", "/console/emails", "/console/emails/eml_inv_00", "/console/nothing"} {
		p := e.get(b, path)
		csp := p.header.Get("Content-Security-Policy")
		m := regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9_-]+)'`).FindStringSubmatch(csp)
		if m == nil {
			t.Fatalf("%s: no script nonce in CSP %q", path, csp)
		}
		if nonces[m[1]] {
			t.Fatalf("%s: nonce %s was used before", path, m[1])
		}
		nonces[m[1]] = true
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows inline code: %q", path, csp)
		}
		if got := p.header.Get("Referrer-Policy"); got != "same-origin" {
			t.Errorf("%s: Referrer-Policy %q", path, got)
		}
		if got := p.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control %q", path, got)
		}
		if strings.Contains(p.body, "<script") && !strings.Contains(p.body, `<script type="module" nonce="`+m[1]+`"`) {
			t.Errorf("%s: a script without this response's nonce:\n%s", path, p.body)
		}
		if regexp.MustCompile(`(?i)\son[a-z]+=`).MatchString(p.body) {
			t.Errorf("%s: an inline event handler:\n%s", path, p.body)
		}
	}
}

func TestSessionCookie(t *testing.T) {
	e := newEnv(t, openSQLite)
	form := e.get(e.browser(), "/console/signin")
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.srv.URL)
	for _, ck := range (&http.Response{Header: form.header}).Cookies() {
		jar.SetCookies(u, []*http.Cookie{ck})
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/console/signin", strings.NewReader(url.Values{"csrf": {csrfOf(t, form)}, "code": {e.code(demo.Owner, demo.Workspace)}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "kobana-console" {
			session = ck
		}
	}
	if session == nil {
		t.Fatalf("no session cookie: %v", res.Header["Set-Cookie"])
	}
	if !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != console.Prefix {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=%s", session, console.Prefix)
	}
	if session.Secure {
		t.Fatalf("on plain-http loopback the cookie is Secure, which a non-browser client drops: %+v", session)
	}
	// The browser holds a random value, never a token the store could
	// give back: the store keeps its hash only.
	if strings.HasPrefix(session.Value, "kbn_") || strings.HasPrefix(session.Value, "kbs_") || len(session.Value) < 64 {
		t.Fatalf("session cookie value %q", session.Value)
	}
	if _, err := e.st.GetOAuthToken(context.Background(), console.TokenKind, store.HashToken(session.Value)); err != nil {
		t.Fatalf("the store does not know the session by the hash of its cookie: %v", err)
	}
}

func TestHTTPSMakesTheCookieSecureAndPlainHTTPIsLoopbackOnly(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, &clock{t: demoNow})
	tools, err := mcpserver.New(mcpserver.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(ctx, console.Options{Store: st, Tools: tools, PublicURL: "https://console.example"})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	c.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://console.example/console/signin", nil))
	var pre *http.Cookie
	for _, ck := range rec.Result().Cookies() {
		pre = ck
	}
	if pre == nil || !pre.Secure || !strings.HasPrefix(pre.Name, "__Host-") || pre.Path != "/" {
		t.Fatalf("over https the sign-in cookie is %+v, want Secure, __Host-, Path=/", pre)
	}
	c, err = console.New(ctx, console.Options{Store: st, Tools: tools, PublicURL: "http://console.example"})
	if err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	c.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://console.example/console/signin", nil))
	if rec.Code != http.StatusForbidden || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("plain http to a non-loopback host answered %d with cookies %v", rec.Code, rec.Result().Cookies())
	}
}

func TestIdleAndAbsoluteExpiry(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	e.clk.Add(console.DefaultIdleTimeout - time.Minute)
	if p := e.get(b, "/console/emails"); p.url != "/console/emails" {
		t.Fatalf("a session used within its idle time ended: %s", p.url)
	}
	e.clk.Add(console.DefaultIdleTimeout - time.Minute)
	if p := e.get(b, "/console/emails"); p.url != "/console/emails" {
		t.Fatalf("a use did not move the idle expiry on: %s", p.url)
	}
	e.clk.Add(console.DefaultIdleTimeout + time.Second)
	if p := e.get(b, "/console/emails"); p.url != "/console/signin" {
		t.Fatalf("a session idle for longer than %v is still open", console.DefaultIdleTimeout)
	}

	b = e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	for used := time.Duration(0); used < console.DefaultLifetime-20*time.Minute; used += 20 * time.Minute {
		e.clk.Add(20 * time.Minute)
		if p := e.get(b, "/console/emails"); p.url != "/console/emails" {
			t.Fatalf("a session used every 20 minutes ended after %v", used+20*time.Minute)
		}
	}
	e.clk.Add(20 * time.Minute)
	if p := e.get(b, "/console/emails"); p.url != "/console/signin" {
		t.Fatalf("a session used all along outlived its lifetime of %v", console.DefaultLifetime)
	}
}

func TestRevokedAccessEndsTheSession(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Viewer, demo.Workspace)
	if n, err := e.st.RevokePersonAccess(context.Background(), demo.Viewer, ""); err != nil || n == 0 {
		t.Fatalf("revoking: %d, %v", n, err)
	}
	if p := e.get(b, "/console/emails"); p.url != "/console/signin" {
		t.Fatalf("a revoked session still opens the console: %s", p.url)
	}
}

func TestViewerReadsAndMayNotWrite(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	p := e.signIn(b, demo.Viewer, demo.Workspace)
	if p.url != "/console/emails" || !strings.Contains(p.body, "viewer") {
		t.Fatalf("the viewer's list: %d at %s\n%s", p.code, p.url, p.body)
	}
	if strings.Count(p.body, `method="post"`) != 1 {
		t.Fatalf("the viewer is shown a write control besides sign-out:\n%s", p.body)
	}
	acc, err := e.st.ListAccess(context.Background(), store.AccessQuery{Person: demo.Viewer})
	if err != nil {
		t.Fatal(err)
	}
	var grant string
	for _, a := range acc {
		if a.Client == console.ClientID {
			grant = a.ID
			if strings.Join(a.Scopes, ",") != "read" {
				t.Fatalf("the viewer's console grant has scopes %v", a.Scopes)
			}
		}
	}
	// The tools the console reads through refuse a viewer's write, and an
	// owner's destructive call that no one confirmed.
	viewer, err := e.st.AuthenticateGrant(context.Background(), grant)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.tools.Call(context.Background(), viewer, inboxmcp.ToolAgentsCreate, json.RawMessage(`{"name":"x","model":"x","system_message":"x"}`))
	if te := (*mcpserver.ToolError)(nil); !errors.As(err, &te) || te.Code != "permission_denied" {
		t.Fatalf("a viewer's agents_create: %v", err)
	}
	owner := viewer
	owner.Role, owner.Scopes = "owner", []string{"read", "write"}
	_, err = e.tools.Call(context.Background(), owner, inboxmcp.ToolEmailsDelete, json.RawMessage(`{"id":"eml_inv_00"}`))
	if te := (*mcpserver.ToolError)(nil); !errors.As(err, &te) || te.Code != mcpserver.CodeConfirmationRequired {
		t.Fatalf("an unconfirmed emails_delete: %v", err)
	}
	if _, err := inbox.NewRepo(e.st).Emails.Get(context.Background(), demo.Workspace, "eml_inv_00"); err != nil {
		t.Fatalf("the unconfirmed delete deleted: %v", err)
	}
}

func TestAnotherWorkspacesEmailIsNotFound(t *testing.T) {
	e := newEnv(t, openSQLite)
	if err := inbox.NewRepo(e.st).Emails.Put(context.Background(), demo.Sandbox, inbox.Email{ID: "eml_sandbox_only", InboxID: "ibx_x", Subject: "sandbox secret", Status: inbox.EmailPending, ReceivedAt: demoNow}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	if p := e.get(b, "/console/emails/eml_sandbox_only"); p.code != http.StatusNotFound || strings.Contains(p.body, "sandbox secret") {
		t.Fatalf("Finance's session read a Sandbox e-mail: %d", p.code)
	}
}

// hostile are values a stranger writes into an e-mail.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`javascript:alert(3)`,
	`<svg onload=alert(4)><a xlink:href="javascript:alert(5)">x</a></svg>`,
	`</textarea><style>body{display:none}</style>`,
	"\u202egnp.exe",
	`=?UTF-8?B?PHNjcmlwdD5hbGVydCg2KTwvc2NyaXB0Pg==?=`,
}

func TestHostileContentIsShownEscaped(t *testing.T) {
	e := newEnv(t, openSQLite)
	all := strings.Join(hostile, " ")
	em := inbox.Email{ID: "eml_hostile", InboxID: "ibx_invoices", MessageID: all, From: all, To: []string{all}, Cc: []string{all},
		Subject: all, Text: all, Status: inbox.EmailRejected, StatusDetail: all, ReceivedAt: demoNow.Add(time.Minute),
		Headers:     map[string]string{"X-Evil": all, all: "name"},
		Attachments: []inbox.AttachmentInfo{{Index: 0, Filename: all, ContentType: all, Size: 10}},
		Auth:        &inbox.SenderAuth{EnvelopeFrom: all, Helo: all, SPF: inbox.AuthCheck{Result: "fail", Detail: all}, DMARC: inbox.AuthCheck{Result: "fail", Domain: all}}}
	if err := inbox.NewRepo(e.st).Emails.Put(context.Background(), demo.Workspace, em); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	for _, path := range []string{"/console/emails", "/console/emails/eml_hostile"} {
		p := e.get(b, path)
		if p.code != http.StatusOK {
			t.Fatalf("%s: %d", path, p.code)
		}
		for _, bad := range []string{"<script>alert", "<img", "<svg", "<style>", `href="javascript:`, "onerror=alert(2)>"} {
			if strings.Contains(p.body, bad) {
				t.Errorf("%s: the hostile %q reached the page unescaped", path, bad)
			}
		}
		if !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: the hostile subject is not shown, escaped", path)
		}
	}
	// A 1 MB subject still renders, escaped, in the list and its page.
	huge := strings.Repeat("<b>", 1<<20/3)
	if err := inbox.NewRepo(e.st).Emails.Put(context.Background(), demo.Workspace, inbox.Email{ID: "eml_huge", InboxID: "ibx_invoices", Subject: huge, Status: inbox.EmailPending, ReceivedAt: demoNow.Add(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/console/emails", "/console/emails/eml_huge"} {
		if p := e.get(b, path); p.code != http.StatusOK || strings.Contains(p.body, "<b><b>") || !strings.Contains(p.body, "&lt;b&gt;&lt;b&gt;") {
			t.Errorf("%s with a 1 MB subject: %d", path, p.code)
		}
	}
}

// hostileHTML is an e-mail whose HTML body tries to run script, fetch a
// remote image, send a form and navigate its parent.
const hostileHTML = "From: a@example.com\r\nTo: b@example.com\r\nSubject: html\r\nMIME-Version: 1.0\r\n" +
	"Content-Type: multipart/alternative; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nplain\r\n" +
	"--b1\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
	"<p>Ol=E1</p><script>alert(1)</script><img src=3D\"https://tracker.example/p.gif\"><form action=3D\"https://evil.example/\"><button>go</button></form>" +
	"<a href=3D\"javascript:top.location=3D'https://evil.example'\">x</a>\r\n--b1--\r\n"

func TestHTMLBodyOnlyInASandboxedFrame(t *testing.T) {
	e := newEnv(t, openSQLite)
	ctx := context.Background()
	repo := inbox.NewRepo(e.st)
	for _, id := range []string{"eml_html", "eml_plain"} {
		if err := repo.Emails.Put(ctx, demo.Workspace, inbox.Email{ID: id, InboxID: "ibx_invoices", Subject: id, Status: inbox.EmailProcessed, ReceivedAt: demoNow}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.st.PutBlob(ctx, demo.Workspace, "eml_html", []byte(hostileHTML)); err != nil {
		t.Fatal(err)
	}
	if err := e.st.PutBlob(ctx, demo.Workspace, "eml_plain", []byte("From: a@example.com\r\nSubject: plain\r\n\r\njust text\r\n")); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)

	d := e.get(b, "/console/emails/eml_html")
	frame := regexp.MustCompile(`<iframe[^>]*>`).FindString(d.body)
	if frame != `<iframe class="html-body" sandbox src="/console/emails/eml_html/html" title="HTML body of the e-mail" referrerpolicy="no-referrer">` {
		t.Fatalf("the HTML body's frame is %q", frame)
	}
	if strings.Contains(d.body, "tracker.example") || strings.Contains(d.body, "<script>alert") {
		t.Fatalf("the HTML body reached the console's page")
	}
	h := e.get(b, "/console/emails/eml_html/html")
	csp := h.header.Get("Content-Security-Policy")
	if h.code != http.StatusOK || csp != "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox" {
		t.Fatalf("the frame: %d, CSP %q", h.code, csp)
	}
	if h.header.Get("Content-Type") != "text/html; charset=utf-8" || h.header.Get("X-Frame-Options") != "SAMEORIGIN" || h.header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("the frame's headers: %v", h.header)
	}
	if !strings.Contains(h.body, "<p>Olá</p>") {
		t.Fatalf("the frame's body is not the decoded HTML part: %q", h.body)
	}
	remote := e.get(b, "/console/emails/eml_html?images=remote")
	if !strings.Contains(remote.body, `src="/console/emails/eml_html/html?images=remote"`) {
		t.Fatalf("asking for remote images does not reach the frame")
	}
	if csp := e.get(b, "/console/emails/eml_html/html?images=remote").header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src data: https: http:;") || !strings.Contains(csp, "sandbox") {
		t.Fatalf("with remote images asked for, the frame's CSP is %q", csp)
	}
	if p := e.get(b, "/console/emails/eml_plain"); strings.Contains(p.body, "<iframe") {
		t.Fatalf("an e-mail without an HTML body shows a frame")
	}
	if p := e.get(b, "/console/emails/eml_plain/html"); p.code != http.StatusNotFound {
		t.Fatalf("the frame of an e-mail without an HTML body answered %d", p.code)
	}
	// Another workspace's e-mail, even with a raw message, is not found.
	if err := e.st.PutBlob(ctx, demo.Sandbox, "eml_other", []byte(hostileHTML)); err != nil {
		t.Fatal(err)
	}
	if p := e.get(b, "/console/emails/eml_other/html"); p.code != http.StatusNotFound || strings.Contains(p.body, "Ol") {
		t.Fatalf("another workspace's HTML body answered %d", p.code)
	}
}

func TestWorkflowRunPage(t *testing.T) {
	e := newEnv(t, openSQLite)
	ctx := context.Background()
	big := `"` + strings.Repeat("x", console.MaxShownBody+100) + `"`
	run := inbox.WorkflowRun{ID: "wrun_page", AgentRunID: "arun_page", EmailID: "eml_inv_00", InboxID: "ibx_invoices", Status: runrecord.RunInterrupted, StartedAt: demoNow,
		Steps: []runrecord.Step{
			{Index: 0, Label: "<b>create</b>", State: runrecord.Succeeded, DurationMS: 12, ID: "wrun_page/0",
				Request:  &runrecord.Request{Method: "POST", URL: "https://erp.example/payables?token=[redacted secrets.ERP_TOKEN]", Headers: map[string]string{"Idempotency-Key": `"wrun_page/0"`, "Authorization": "Bearer [redacted secrets.ERP_TOKEN]"}, Body: json.RawMessage(`{"n":1,"evil":"<script>alert(1)</script>"}`)},
				Response: &runrecord.Response{Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(big), Size: int64(len(big))}},
			{Index: 1, Label: "attach", State: runrecord.Unknown, Reason: runrecord.ReasonInterrupted, Error: "interrupted after sending; it uses steps.0.response.body.id and steps.7", ID: "wrun_page/1",
				Request: &runrecord.Request{Method: "POST", URL: "https://erp.example/payables/${{steps.0.response.body.id}}/x", Headers: map[string]string{"Idempotency-Key": `"wrun_page/1"`, "X-Ref": "steps.0"}}},
		}}
	if err := inbox.NewRepo(e.st).WorkflowRuns.Put(ctx, demo.Workspace, run); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	p := e.get(b, "/console/workflow-runs/wrun_page")
	if p.code != http.StatusOK {
		t.Fatalf("%d\n%s", p.code, p.body)
	}
	for _, want := range []string{
		`id="step-0"`, `id="step-1"`, "&lt;b&gt;create&lt;/b&gt;", "Request as sent", "HTTP 201",
		"Bearer [redacted secrets.ERP_TOKEN]", "<code>&#34;wrun_page/1&#34;</code>",
		`<a href="#step-0">steps.0</a>.response.body.id and steps.7`, // a reference to a step the run has not stays text
		`<dd class="wrap"><a href="#step-0">steps.0</a></dd>`,
		"Resuming sends it again with the same X-Kobana-Step-Id and Idempotency-Key",
		"100 more bytes are not shown",
		`\u003cscript\u003ealert(1)\u003c/script\u003e`, // as the record keeps it
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the run's page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, strings.Repeat("x", console.MaxShownBody+1)) {
		t.Errorf("the run's page holds the hostile body raw or the whole large body")
	}
	// "Load the rest": the same page with that body whole, the others
	// still cut.
	rest := `<a href="/console/workflow-runs/wrun_page?whole=0.response#step-0">load the rest</a>`
	if !strings.Contains(p.body, rest) {
		t.Fatalf("the cut body offers no way to load the rest:\n%s", p.body)
	}
	whole := e.get(b, "/console/workflow-runs/wrun_page?whole=0.response")
	if whole.code != http.StatusOK || !strings.Contains(whole.body, strings.Repeat("x", console.MaxShownBody+100)+"</pre>") || strings.Contains(whole.body, "more bytes are not shown") {
		t.Errorf("with the rest loaded: %d, the body is not whole", whole.code)
	}
	if other := e.get(b, "/console/workflow-runs/wrun_page?whole=1.response"); !strings.Contains(other.body, "100 more bytes are not shown") {
		t.Errorf("asking for another body's rest uncut this one")
	}
	if e.get(b, "/console/emails/eml_inv_00").code != http.StatusOK {
		t.Fatal("the e-mail's page")
	}
	if p := e.get(b, "/console/workflow-runs/wrun_none"); p.code != http.StatusNotFound {
		t.Fatalf("an unknown run answered %d", p.code)
	}
}

func TestAgentRunPage(t *testing.T) {
	e := newEnv(t, openSQLite)
	ctx := context.Background()
	run := inbox.AgentRun{ID: "arun_page", AgentID: "agt_x", EmailID: "eml_inv_00", Model: "gpt-x", Status: inbox.RunSucceeded, PromptVersion: "p7",
		Output: json.RawMessage(`{"amount":12345678901234567890123,"note":"</pre><script>alert(1)</script>"}`),
		Tokens: inbox.Tokens{Input: 1000, Output: 200, Cached: 100}, CostUSD: 0.0123,
		Calls:     []inbox.ModelCall{{Round: 0, Attempt: 1, Status: 429, Cause: "rate_limited", DurationMS: 30, WaitMS: 2000}, {Round: 0, Attempt: 2, Status: 200, DurationMS: 900}},
		Repairs:   []inbox.Repair{{Round: 1, Diagnostics: json.RawMessage(`[{"severity":"error","code":"unknown-field","message":"<img src=x onerror=alert(2)>","pointer":"/workflow/0/x","range":{"start":{"line":3,"column":7,"offset":20},"end":{"line":3,"column":9,"offset":22}}}]`)}},
		StartedAt: demoNow, FinishedAt: demoNow.Add(time.Second)}
	if err := inbox.NewRepo(e.st).AgentRuns.Put(ctx, demo.Workspace, run); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	p := e.get(b, "/console/agent-runs/arun_page")
	for _, want := range []string{"gpt-x", "p7", "1000 in (100 cached), 200 out", "0.0123 USD", "rate_limited", "2000 ms",
		`<pre class="body json" data-json>`, "12345678901234567890123", `\u003c/pre\u003e\u003cscript\u003e`, "<code>3:7</code> error <code>unknown-field</code>",
		"&lt;img src=x onerror=alert(2)&gt;"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the agent run's page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<img src=x") {
		t.Errorf("hostile text reached the agent run's page unescaped")
	}
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)

// formOf reads the hidden fields of the page's first form posting to
// action.
func formOf(t *testing.T, p page, action string) url.Values {
	t.Helper()
	i := strings.Index(p.body, `action="`+action+`"`)
	if i < 0 {
		t.Fatalf("no form posting to %s on %s:\n%s", action, p.url, p.body)
	}
	end := strings.Index(p.body[i:], "</form>")
	v := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(p.body[i:i+end], -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	return v
}

func TestReprocessAsksFirstRunsOnceAndIsRecorded(t *testing.T) {
	bothStores(t, testReprocess)
}

func testReprocess(t *testing.T, open func(testing.TB, *clock) store.Store) {
	e := newEnv(t, open)
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	d := e.get(b, "/console/emails/eml_inv_00")
	ask := e.post(b, "/console/emails/eml_inv_00/reprocess", formOf(t, d, "/console/emails/eml_inv_00/reprocess"), nil)
	if ask.code != http.StatusOK || !strings.Contains(ask.body, "Confirm emails_reprocess") || !strings.Contains(ask.body, "&#34;id&#34;: &#34;eml_inv_00&#34;") ||
		!strings.Contains(ask.body, "<dt>Records</dt><dd>1</dd>") {
		t.Fatalf("the confirmation page: %d\n%s", ask.code, ask.body)
	}
	if n := e.proc.count(); n != 0 {
		t.Fatalf("asking ran the tool %d times", n)
	}
	answer := formOf(t, ask, "/console/confirm")
	tampered := url.Values{}
	for k, v := range answer {
		tampered[k] = v
	}
	tampered.Set("arguments", `{"id":"eml_inv_01","mode":"restart"}`)
	if p := e.post(b, "/console/confirm", tampered, nil); p.code != http.StatusForbidden {
		t.Fatalf("a confirmation with other arguments answered %d", p.code)
	}
	done := e.post(b, "/console/confirm", answer, nil)
	if done.code != http.StatusOK || e.proc.count() != 1 || e.proc.reqs[0].Actor != "person:"+demo.Owner || e.proc.reqs[0].Mode != "restart" {
		t.Fatalf("the confirmed call: %d, %+v\n%s", done.code, e.proc.reqs, done.body)
	}
	if p := e.post(b, "/console/confirm", answer, nil); p.code != http.StatusConflict || e.proc.count() != 1 {
		t.Fatalf("the same confirmation again: %d, %d runs", p.code, e.proc.count())
	}
	evs, err := inbox.NewRepo(e.st).Events.List(context.Background(), demo.Workspace, store.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, ev := range evs.Items {
		if ev.Type == console.EventConsoleAction && ev.Actor == "person:"+demo.Owner && strings.Contains(string(ev.Payload), `"client":"kobana-console"`) && strings.Contains(string(ev.Payload), `"tool":"emails_reprocess"`) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no console.action event naming the person and the console: %+v", evs.Items)
	}

	// An answer left too long expires.
	ask = e.post(b, "/console/emails/eml_inv_00/reprocess", formOf(t, d, "/console/emails/eml_inv_00/reprocess"), nil)
	e.clk.Add(console.ConfirmationLifetime + time.Second)
	if p := e.post(b, "/console/confirm", formOf(t, ask, "/console/confirm"), nil); p.code != http.StatusForbidden || e.proc.count() != 1 {
		t.Fatalf("an expired confirmation: %d, %d runs", p.code, e.proc.count())
	}
	// A record the check refuses is not asked about.
	if p := e.post(b, "/console/emails/eml_nope/reprocess", url.Values{"csrf": {answer.Get("csrf")}, "mode": {"restart"}}, nil); p.code != http.StatusNotFound || strings.Contains(p.body, "/console/confirm") {
		t.Fatalf("reprocessing an unknown e-mail: %d", p.code)
	}
}

func TestViewerSeesNoActionAndIsRefused(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Viewer, demo.Workspace)
	d := e.get(b, "/console/emails/eml_inv_00")
	if strings.Contains(d.body, "/reprocess") || strings.Count(d.body, `method="post"`) != 1 {
		t.Fatalf("the viewer is shown a write control:\n%s", d.body)
	}
	csrf := csrfOf(t, d)
	if p := e.post(b, "/console/emails/eml_inv_00/reprocess", url.Values{"csrf": {csrf}, "mode": {"restart"}}, nil); p.code != http.StatusForbidden {
		t.Fatalf("the viewer's reprocess answered %d", p.code)
	}
	// An owner's answer, posted from the viewer's session, runs nothing:
	// an answer is bound to the session it was asked in.
	owner := e.browser()
	e.signIn(owner, demo.Owner, demo.Workspace)
	ask := e.post(owner, "/console/emails/eml_inv_00/reprocess", formOf(t, e.get(owner, "/console/emails/eml_inv_00"), "/console/emails/eml_inv_00/reprocess"), nil)
	answer := formOf(t, ask, "/console/confirm")
	answer.Set("csrf", csrf)
	if p := e.post(b, "/console/confirm", answer, nil); p.code != http.StatusForbidden || e.proc.count() != 0 {
		t.Fatalf("the owner's answer posted by the viewer: %d, %d runs", p.code, e.proc.count())
	}
}

func TestDeliveriesAndReplayAsksFirst(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	p := e.get(b, "/console/deliveries?status=delivered")
	if p.code != http.StatusOK || !strings.Contains(p.body, `href="/console/deliveries?status=delivered" aria-current="page"`) {
		t.Fatalf("deliveries: %d\n%s", p.code, p.body)
	}
	for _, m := range regexp.MustCompile(`class="status s-([a-z]+)"`).FindAllStringSubmatch(p.body, -1) {
		if m[1] != "delivered" {
			t.Fatalf("status=delivered lists a %s delivery", m[1])
		}
	}
	m := regexp.MustCompile(`action="/console/deliveries/(dlv_[^"/]+)/replay"`).FindStringSubmatch(e.get(b, "/console/deliveries").body)
	if m == nil {
		t.Fatalf("the owner is offered no replay")
	}
	ask := e.post(b, "/console/deliveries/"+m[1]+"/replay", url.Values{"csrf": {csrfOf(t, p)}}, nil)
	if ask.code != http.StatusOK || !strings.Contains(ask.body, "Confirm webhooks_deliveries_replay") || !strings.Contains(ask.body, m[1]) {
		t.Fatalf("the replay's confirmation: %d\n%s", ask.code, ask.body)
	}
	if p := e.post(b, "/console/deliveries/dlv_nope/replay", url.Values{"csrf": {csrfOf(t, p)}}, nil); p.code != http.StatusNotFound {
		t.Fatalf("replaying an unknown delivery answered %d", p.code)
	}
	if p := e.get(b, "/console/deliveries?status=bogus"); p.code != http.StatusBadRequest {
		t.Fatalf("an unknown status answered %d", p.code)
	}

	v := e.browser()
	e.signIn(v, demo.Viewer, demo.Workspace)
	if p := e.get(v, "/console/deliveries"); p.code != http.StatusOK || strings.Contains(p.body, "/replay") {
		t.Fatalf("the viewer's deliveries: %d, or a replay control", p.code)
	}
}

func TestSwitchWorkspace(t *testing.T) {
	e := newEnv(t, openSQLite)
	if err := inbox.NewRepo(e.st).Emails.Put(context.Background(), demo.Sandbox, inbox.Email{ID: "eml_sandbox_only", InboxID: "ibx_x", Subject: "only in the sandbox", Status: inbox.EmailPending, ReceivedAt: demoNow}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	p := e.signIn(b, demo.Owner, demo.Workspace)
	if !strings.Contains(p.body, `<option value="ws_sandbox">`) || strings.Contains(p.body, "only in the sandbox") {
		t.Fatalf("the owner of two workspaces is not offered the other, or sees its e-mails:\n%s", p.body)
	}
	form := formOf(t, p, "/console/workspace")
	if p := e.post(b, "/console/workspace", url.Values{"csrf": {form.Get("csrf")}, "workspace": {"ws_nowhere"}}, nil); p.code != http.StatusForbidden {
		t.Fatalf("switching to a workspace of no membership answered %d", p.code)
	}
	before, _ := e.st.ListAccess(context.Background(), store.AccessQuery{Person: demo.Owner})
	sw := e.post(b, "/console/workspace", url.Values{"csrf": {form.Get("csrf")}, "workspace": {demo.Sandbox}}, nil)
	if sw.url != "/console/emails" || !strings.Contains(sw.body, "only in the sandbox") || !strings.Contains(sw.body, "· ws_sandbox ·") {
		t.Fatalf("after switching: %d at %s\n%s", sw.code, sw.url, sw.body)
	}
	after, _ := e.st.ListAccess(context.Background(), store.AccessQuery{Person: demo.Owner})
	live := 0
	for _, a := range after {
		if a.Client == console.ClientID {
			live++
		}
	}
	if live != 1 || len(after) != len(before) {
		t.Fatalf("after switching %d console sessions are live (want 1), %d accesses (were %d)", live, len(after), len(before))
	}
	// The viewer, a member of one workspace, is offered no switch.
	v := e.browser()
	if p := e.signIn(v, demo.Viewer, demo.Workspace); strings.Contains(p.body, "/console/workspace") {
		t.Fatal("a member of one workspace is offered a switch")
	}
}

// BenchmarkPages renders the e-mails list and an e-mail's page for a
// signed-in person, over the demo's records and 1000 more e-mails, through
// the whole handler (session, tool call, template).
func BenchmarkPages(b *testing.B) {
	e := newEnv(b, openSQLite)
	repo := inbox.NewRepo(e.st)
	for i := range 1000 {
		em := inbox.Email{ID: fmt.Sprintf("eml_bench_%04d", i), InboxID: "ibx_invoices", From: "bench@example.com", Subject: "bench", Status: inbox.EmailProcessed, ReceivedAt: demoNow.Add(time.Duration(i) * time.Second)}
		if err := repo.Emails.Put(context.Background(), demo.Workspace, em); err != nil {
			b.Fatal(err)
		}
	}
	c := e.browser()
	e.signIn(c, demo.Owner, demo.Workspace)
	for _, page := range []struct{ name, path string }{{"list", "/console/emails"}, {"list-processed", "/console/emails?status=processed"}, {"email", "/console/emails/eml_inv_00"}} {
		path := page.path
		b.Run(page.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				p := e.get(c, path)
				if p.code != http.StatusOK {
					b.Fatalf("%s: %d", path, p.code)
				}
				size = len(p.body)
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}

// listed are the e-mails a list page links to, in order.
func listed(p page) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="/console/emails/(eml_[^"/?]+)"`).FindAllStringSubmatch(p.body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestEmailFiltersSearchAndFacetCounts(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		b := e.browser()
		e.signIn(b, demo.Owner, demo.Workspace)
		for _, c := range []struct {
			url  string
			want string
		}{
			{"/console/emails?from=ACME.example&status=failed", "eml_inv_12 eml_inv_09"},
			{"/console/emails?q=nf-004205", "eml_inv_15"},
			{"/console/emails?q=%3Cdemo.kobana", ""}, // Message-IDs of the demo, no match: < is not in them
			{"/console/emails?since=2026-11-14&until=2026-11-15", "eml_rcp_05 eml_inv_16"},
			{"/console/emails?inbox=ibx_receipts&since=2026-11-10", "eml_rcp_05 eml_rcp_04"},
		} {
			p := e.get(b, c.url)
			if p.code != http.StatusOK {
				t.Fatalf("%s: %d\n%s", c.url, p.code, p.body)
			}
			if got := strings.Join(listed(p), " "); got != c.want {
				t.Errorf("%s lists %q, want %q", c.url, got, c.want)
			}
		}
		// The facets count under the other filters, and keep them.
		p := e.get(b, "/console/emails?from=acme.example")
		for _, want := range []string{
			`href="/console/emails?from=acme.example" aria-current="page">all <span class="count">6</span>`,
			`href="/console/emails?from=acme.example&amp;status=failed">failed <span class="count">2</span>`,
			`href="/console/emails?from=acme.example&amp;status=processed">processed <span class="count">4</span>`,
			`href="/console/emails?from=acme.example&amp;status=rejected">rejected <span class="count">0</span>`,
			`<caption>6 e-mails, newest first</caption>`,
			`name="from" value="acme.example"`,
			`<a href="/console/emails">Clear the filters</a>`,
		} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the filtered list lacks %s:\n%s", want, p.body)
			}
		}
		// The form's empty fields are left out of the URL.
		if p := e.get(b, "/console/emails?inbox=&from=acme.example&q=&since=&until="); p.url != "/console/emails" || !strings.Contains(p.body, `name="from" value="acme.example"`) {
			t.Errorf("the form's empty fields: %s", p.url)
		}
		// What the person typed comes back escaped.
		x := e.get(b, "/console/emails?q="+url.QueryEscape(`"><script>alert(1)</script>`))
		if x.code != http.StatusOK || strings.Contains(x.body, "<script>alert") || !strings.Contains(x.body, `value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`) {
			t.Errorf("the search text is not shown escaped (%d):\n%s", x.code, x.body)
		}
		for _, bad := range []string{"/console/emails?since=yesterday", "/console/emails?since=2026-11-10&until=2026-11-01"} {
			if p := e.get(b, bad); p.code != http.StatusBadRequest {
				t.Errorf("%s answered %d", bad, p.code)
			}
		}
	})
}

// hostileAttachment is an e-mail whose attachment is HTML with script,
// named to look like something else and to break a header.
const hostileAttachment = "From: a@example.com\r\nTo: b@example.com\r\nSubject: att\r\nMIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n" +
	"--b1\r\nContent-Type: text/html\r\nContent-Disposition: attachment; filename*=UTF-8''fatura%22%3B%20x%3D1%E2%80%AE.html\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
	"PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\r\n--b1--\r\n"

func TestEmailTimelineAndAttachmentDownload(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		ctx := context.Background()
		b := e.browser()
		e.signIn(b, demo.Owner, demo.Workspace)
		repo := inbox.NewRepo(e.st)
		em, err := repo.Emails.Get(ctx, demo.Workspace, "eml_inv_11")
		if err != nil {
			t.Fatal(err)
		}
		p := e.get(b, "/console/emails/eml_inv_11")
		// The timeline: received, the agent run, its workflow run, the
		// delivery of the event about the e-mail, in time order.
		var at []int
		for _, want := range []string{
			`<strong>Received</strong>`,
			`<strong>Agent run</strong> <a href="/console/agent-runs/` + em.AgentRunID + `">`,
			`<strong>Workflow run</strong> <a href="/console/workflow-runs/` + em.WorkflowRunID + `">`,
			`<strong>Webhook delivery</strong> <a href="/console/webhooks/whk_erp#dlv_erp_01">dlv_erp_01</a> <span class="status s-delivered">delivered</span>`,
		} {
			i := strings.Index(p.body, want)
			if i < 0 {
				t.Fatalf("the timeline lacks %s:\n%s", want, p.body)
			}
			at = append(at, i)
		}
		if !slices.IsSorted(at) {
			t.Errorf("the timeline is not in time order: %v", at)
		}
		if strings.Contains(p.body, "dlv_erp_02") || strings.Contains(p.body, "dlv_chat_") {
			t.Errorf("the timeline lists deliveries about other e-mails")
		}

		// Each attachment downloads as a file, never as a page.
		m := regexp.MustCompile(`href="(/console/emails/eml_inv_11/attachments/0)" download>([^<]+)<`).FindStringSubmatch(p.body)
		if m == nil || len(em.Attachments) == 0 {
			t.Fatalf("no download link for the attachment:\n%s", p.body)
		}
		raw, err := e.st.GetBlob(ctx, demo.Workspace, "eml_inv_11")
		if err != nil {
			t.Fatal(err)
		}
		msg, err := eml.New(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := msg.Open(0)
		want, _ := io.ReadAll(rc)
		rc.Close()
		d := e.get(b, m[1])
		if d.code != http.StatusOK || d.body != string(want) || int64(len(want)) != em.Attachments[0].Size {
			t.Fatalf("the download: %d, %d bytes, want the attachment's %d", d.code, len(d.body), len(want))
		}
		if d.header.Get("Content-Type") != "application/octet-stream" || d.header.Get("X-Content-Type-Options") != "nosniff" ||
			d.header.Get("Content-Disposition") != `attachment; filename="`+em.Attachments[0].Filename+`"; filename*=UTF-8''`+em.Attachments[0].Filename || d.header.Get("Content-Length") != fmt.Sprint(len(want)) {
			t.Fatalf("the download's headers: %v", d.header)
		}

		// A stranger's HTML attachment with a name built to break the
		// header stays a download of bytes, named safely.
		if err := repo.Emails.Put(ctx, demo.Workspace, inbox.Email{ID: "eml_att", InboxID: "ibx_invoices", Subject: "att", Status: inbox.EmailProcessed, ReceivedAt: demoNow,
			Attachments: []inbox.AttachmentInfo{{Index: 0, Filename: "fatura\"; x=1\u202e.html", ContentType: "text/html", Size: 25}}}); err != nil {
			t.Fatal(err)
		}
		if err := e.st.PutBlob(ctx, demo.Workspace, "eml_att", []byte(hostileAttachment)); err != nil {
			t.Fatal(err)
		}
		h := e.get(b, "/console/emails/eml_att/attachments/0")
		disp := h.header.Get("Content-Disposition")
		if h.code != http.StatusOK || h.header.Get("Content-Type") != "application/octet-stream" || h.body != "<script>alert(1)</script>" ||
			disp != `attachment; filename="fatura__ x=1.html"; filename*=UTF-8''fatura%22%3B%20x%3D1.html` {
			t.Fatalf("the hostile attachment: %d %q, Content-Disposition %q, Content-Type %q", h.code, h.body, disp, h.header.Get("Content-Type"))
		}
		if csp := h.header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") {
			t.Fatalf("the download's CSP is %q", csp)
		}
		for path, code := range map[string]int{
			"/console/emails/eml_att/attachments/1":    http.StatusNotFound,
			"/console/emails/eml_att/attachments/x":    http.StatusNotFound,
			"/console/emails/eml_nope/attachments/0":   http.StatusNotFound,
			"/console/emails/eml_inv_11/attachments/9": http.StatusNotFound,
		} {
			if got := e.get(b, path); got.code != code {
				t.Errorf("%s answered %d, want %d", path, got.code, code)
			}
		}
		// Another workspace's e-mail, even with a raw message, is not found.
		if err := e.st.PutBlob(ctx, demo.Sandbox, "eml_other", []byte(hostileAttachment)); err != nil {
			t.Fatal(err)
		}
		if got := e.get(b, "/console/emails/eml_other/attachments/0"); got.code != http.StatusNotFound || strings.Contains(got.body, "alert(1)") {
			t.Errorf("another workspace's attachment answered %d", got.code)
		}
	})
}

// consoleActions are the console.action events recorded for a tool.
func (e *env) consoleActions(tool string) []inbox.SystemEvent {
	e.t.Helper()
	evs, err := inbox.NewRepo(e.st).Events.List(context.Background(), demo.Workspace, store.Query{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []inbox.SystemEvent
	for _, ev := range evs.Items {
		if ev.Type == console.EventConsoleAction && ev.Actor == "person:"+demo.Owner && strings.Contains(string(ev.Payload), `"client":"kobana-console"`) && strings.Contains(string(ev.Payload), `"tool":"`+tool+`"`) {
			out = append(out, ev)
		}
	}
	return out
}

func TestWebhooksPagesTestAndRecover(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		b := e.browser()
		e.signIn(b, demo.Owner, demo.Workspace)
		list := e.get(b, "/console/webhooks")
		for _, want := range []string{
			`<a href="/console/webhooks/whk_chat"><code>https://chat.example.com/hooks/kobana-alerts</code></a>`,
			`<span class="health h-bad">75%</span> <span class="muted">3 of the latest 4 failed</span>`,
			`<span class="health h-ok">0%</span> <span class="muted">0 of the latest 5 failed</span>`,
			`<span class="status s-failing">failing</span>`,
		} {
			if !strings.Contains(list.body, want) {
				t.Fatalf("the webhooks page lacks %s:\n%s", want, list.body)
			}
		}
		p := e.get(b, "/console/webhooks/whk_chat?status=failed")
		if p.code != http.StatusOK || strings.Count(p.body, `<section class="delivery"`) != 3 || !strings.Contains(p.body, `id="dlv_chat_03"`) ||
			!strings.Contains(p.body, "{&#34;error&#34;:&#34;webhook_revoked&#34;}") || !strings.Contains(p.body, "HTTP 410") {
			t.Fatalf("the failed deliveries of whk_chat: %d\n%s", p.code, p.body)
		}
		if strings.Contains(p.body, `id="dlv_chat_00"`) {
			t.Fatalf("the failed facet shows a delivered delivery")
		}
		// A replay from this page comes back to it.
		ask := e.post(b, "/console/deliveries/dlv_chat_03/replay", formOf(t, p, "/console/deliveries/dlv_chat_03/replay"), nil)
		if back := formOf(t, ask, "/console/confirm").Get("back"); back != "/console/webhooks/whk_chat?status=failed" {
			t.Fatalf("the replay goes back to %q", back)
		}

		// Sending a test event asks first, then sends one.
		e.out.set(http.StatusOK)
		ask = e.post(b, "/console/webhooks/whk_erp/test", formOf(t, p, "/console/webhooks/whk_chat/test"), nil)
		if ask.code != http.StatusOK || !strings.Contains(ask.body, "Confirm webhooks_test") || len(e.out.sent()) != 0 {
			t.Fatalf("the test event's confirmation: %d, %d sent\n%s", ask.code, len(e.out.sent()), ask.body)
		}
		if done := e.post(b, "/console/confirm", formOf(t, ask, "/console/confirm"), nil); done.code != http.StatusOK || len(e.out.sent()) != 1 ||
			e.out.sent()[0] != "https://erp.example.com/hooks/kobana" || len(e.consoleActions("webhooks_test")) != 1 {
			t.Fatalf("the confirmed test event: %d, sent %v\n%s", done.code, e.out.sent(), done.body)
		}

		// Recovering every failed delivery since a time says how many,
		// then sends them, oldest first, and records the action.
		since := demoNow.Add(-3 * 24 * time.Hour).Format("2006-01-02T15:04")
		form := formOf(t, p, "/console/webhooks/whk_chat/recover")
		form.Set("since", since)
		ask = e.post(b, "/console/webhooks/whk_chat/recover", form, nil)
		if ask.code != http.StatusOK || !strings.Contains(ask.body, "Confirm webhooks_deliveries_recover") || !strings.Contains(ask.body, "<dt>Records</dt><dd>3</dd>") ||
			!strings.Contains(ask.body, "&#34;webhook_id&#34;: &#34;whk_chat&#34;") {
			t.Fatalf("the recovery's confirmation: %d\n%s", ask.code, ask.body)
		}
		done := e.post(b, "/console/confirm", formOf(t, ask, "/console/confirm"), nil)
		if done.code != http.StatusOK || len(e.out.sent()) != 4 || len(e.consoleActions("webhooks_deliveries_recover")) != 1 {
			t.Fatalf("the confirmed recovery: %d, sent %v\n%s", done.code, e.out.sent(), done.body)
		}
		after := e.get(b, "/console/webhooks/whk_chat?status=failed")
		if strings.Contains(after.body, `<section class="delivery"`) || !strings.Contains(after.body, "No delivery matches") {
			t.Fatalf("failed deliveries are left after the recovery:\n%s", after.body)
		}
		if all := e.get(b, "/console/webhooks/whk_chat"); strings.Count(all.body, "replayed by per_ana") != 3 {
			t.Fatalf("the recovered deliveries do not show the person's attempts:\n%s", all.body)
		}
		// Nothing left to recover: the check says so, nobody is asked.
		if again := e.post(b, "/console/webhooks/whk_chat/recover", form, nil); again.code != http.StatusConflict || !strings.Contains(again.body, "nothing_to_recover") {
			t.Fatalf("recovering again: %d\n%s", again.code, again.body)
		}
		if bad := e.post(b, "/console/webhooks/whk_chat/recover", url.Values{"csrf": {form.Get("csrf")}, "since": {"soon"}}, nil); bad.code != http.StatusBadRequest {
			t.Fatalf("a malformed time answered %d", bad.code)
		}

		// A viewer sees the pages and no control, and is refused anyway.
		v := e.browser()
		e.signIn(v, demo.Viewer, demo.Workspace)
		vp := e.get(v, "/console/webhooks/whk_chat")
		if vp.code != http.StatusOK || strings.Contains(vp.body, "/test\"") || strings.Contains(vp.body, "/recover\"") || strings.Contains(vp.body, "/replay\"") {
			t.Fatalf("the viewer's webhook page: %d, or a control\n%s", vp.code, vp.body)
		}
		csrf := csrfOf(t, vp)
		for _, path := range []string{"/console/webhooks/whk_chat/test", "/console/webhooks/whk_chat/recover"} {
			if r := e.post(v, path, url.Values{"csrf": {csrf}, "since": {since}}, nil); r.code != http.StatusForbidden {
				t.Errorf("the viewer's %s answered %d", path, r.code)
			}
		}
		if len(e.out.sent()) != 4 {
			t.Errorf("the viewer's refused actions sent %v", e.out.sent())
		}
		if nf := e.get(b, "/console/webhooks/whk_nope"); nf.code != http.StatusNotFound {
			t.Errorf("an unknown webhook answered %d", nf.code)
		}
	})
}

func TestWorkspacePages(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		ctx := context.Background()
		// A secret whose value must never reach a page.
		const value = "sk_live_never_shown_4242"
		if err := e.st.SetSecret(ctx, demo.Workspace, "CONSOLE_TEST_TOKEN", value); err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		e.signIn(b, demo.Viewer, demo.Workspace)
		pages := map[string][]string{
			"/console/inboxes": {`id="ibx_invoices"`, `<a href="/console/emails?inbox=ibx_invoices">Its e-mails</a>`, `<dt>Allowed senders</dt>`},
			"/console/agents":  {`id="agt_invoices"`, `<summary>System message</summary>`, `<dt>Egress</dt>`},
			"/console/secrets": {`<code>CONSOLE_TEST_TOKEN</code>`, `<code>ERP_TOKEN</code>`},
			"/console/events":  {`<code>webhook.delivery_failed</code>`, `data-json`},
			"/console/usage?month=2026-11": {`<svg role="img"`, `<title id="chart-title">Cost per month, USD</title>`, `<rect class="bar current"`,
				`<a href="/console/usage?month=2026-10">`, `2026-11 by model`, `2026-11 by inbox`, `<code>claude-`},
			"/console/events?type=webhook.delivery_failed": {`<code>whk_chat</code>`},
		}
		for path, wants := range pages {
			p := e.get(b, path)
			if p.code != http.StatusOK {
				t.Fatalf("%s: %d\n%s", path, p.code, p.body)
			}
			for _, want := range wants {
				if !strings.Contains(p.body, want) {
					t.Errorf("%s lacks %s:\n%s", path, want, p.body)
				}
			}
			if strings.Contains(p.body, value) {
				t.Errorf("%s shows a secret's value", path)
			}
		}
		// The filtered log holds that type only.
		for _, m := range regexp.MustCompile(`<a href="/console/events\?type=[^"]+"><code>([^<]+)</code>`).FindAllStringSubmatch(e.get(b, "/console/events?type=webhook.delivery_failed").body, -1) {
			if m[1] != "webhook.delivery_failed" {
				t.Errorf("the filtered log lists a %s", m[1])
			}
		}
		// The chart's bars are as tall as their costs, in proportion.
		u := e.get(b, "/console/usage?month=2026-11").body
		heights := regexp.MustCompile(`<rect class="bar[^"]*" x="\d+" y="\d+" width="\d+" height="(\d+)"><title>([0-9-]+): ([0-9.]+) USD</title>`).FindAllStringSubmatch(u, -1)
		if len(heights) != 6 {
			t.Fatalf("the chart has %d bars, want 6:\n%s", len(heights), u)
		}
		var tallest, top float64
		for _, h := range heights {
			ht, _ := strconv.ParseFloat(h[1], 64)
			cost, _ := strconv.ParseFloat(h[3], 64)
			if ht > tallest {
				tallest, top = ht, cost
			}
			if (cost == 0) != (ht == 0) {
				t.Errorf("bar %s: %v USD drawn %v high", h[2], cost, ht)
			}
		}
		for _, h := range heights {
			ht, _ := strconv.ParseFloat(h[1], 64)
			cost, _ := strconv.ParseFloat(h[3], 64)
			if top > 0 && math.Abs(ht/tallest-cost/top) > 0.02 {
				t.Errorf("bar %s is %v of the tallest, its cost %v of the highest", h[2], ht/tallest, cost/top)
			}
		}
		if tallest == 0 {
			t.Errorf("the demo's months cost nothing on the chart")
		}
		for _, bad := range []string{"/console/usage?month=2026-13", "/console/usage?month=soon"} {
			if p := e.get(b, bad); p.code != http.StatusBadRequest {
				t.Errorf("%s answered %d", bad, p.code)
			}
		}
	})
}

func TestBulkReprocessAndReplay(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		b := e.browser()
		e.signIn(b, demo.Owner, demo.Workspace)
		list := e.get(b, "/console/emails?status=failed&from=acme")
		form := formOf(t, list, "/console/emails/bulk")
		if form.Get("status") != "failed" || form.Get("from") != "acme" || !strings.Contains(list.body, `<input type="checkbox" name="id" value="eml_inv_12"`) {
			t.Fatalf("the bulk form lacks the filters or the rows' boxes: %v\n%s", form, list.body)
		}
		// A selection: what, with which arguments, how many — then each.
		sel := url.Values{"csrf": {form.Get("csrf")}, "scope": {"selected"}, "id": {"eml_inv_12", "eml_inv_03", "eml_inv_12"}}
		ask := e.post(b, "/console/emails/bulk", sel, nil)
		if ask.code != http.StatusOK || !strings.Contains(ask.body, "Confirm emails_reprocess") || !strings.Contains(ask.body, "<dt>Records</dt><dd>2</dd>") ||
			!strings.Contains(ask.body, "&#34;eml_inv_12&#34;,\n    &#34;eml_inv_03&#34;") || e.proc.count() != 0 {
			t.Fatalf("the selection's confirmation: %d, %d run\n%s", ask.code, e.proc.count(), ask.body)
		}
		done := e.post(b, "/console/confirm", formOf(t, ask, "/console/confirm"), nil)
		if done.code != http.StatusOK || e.proc.count() != 2 || e.proc.reqs[0].EmailID != "eml_inv_12" || e.proc.reqs[1].EmailID != "eml_inv_03" ||
			!strings.Contains(done.body, "&#34;done&#34;:2") {
			t.Fatalf("the confirmed selection: %d, %+v\n%s", done.code, e.proc.reqs, done.body)
		}
		evs := e.consoleActions("emails_reprocess")
		if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"ids":["eml_inv_12","eml_inv_03"]`) {
			t.Fatalf("the bulk action's event: %+v", evs)
		}
		// A filter's results, resolved when asked.
		ask = e.post(b, "/console/emails/bulk", url.Values{"csrf": {form.Get("csrf")}, "scope": {"filter"}, "status": {"failed"}}, nil)
		if ask.code != http.StatusOK || !strings.Contains(ask.body, "<dt>Records</dt><dd>6</dd>") {
			t.Fatalf("the filter's confirmation: %d\n%s", ask.code, ask.body)
		}
		if back := formOf(t, ask, "/console/confirm").Get("back"); back != "/console/emails?status=failed" {
			t.Errorf("the filter's action goes back to %q", back)
		}
		// Nothing is asked about a record the tool's check refuses, nor about
		// no record at all.
		if p := e.post(b, "/console/emails/bulk", url.Values{"csrf": {form.Get("csrf")}, "scope": {"selected"}, "id": {"eml_inv_12", "eml_nope"}}, nil); p.code != http.StatusNotFound || strings.Contains(p.body, "/console/confirm") {
			t.Errorf("a selection with an unknown e-mail: %d", p.code)
		}
		if p := e.post(b, "/console/emails/bulk", url.Values{"csrf": {form.Get("csrf")}, "scope": {"selected"}}, nil); p.code != http.StatusBadRequest {
			t.Errorf("an empty selection: %d", p.code)
		}
		if n := e.proc.count(); n != 2 {
			t.Errorf("asking ran %d reprocesses, want the 2 confirmed", n)
		}

		// Deliveries: every failed one, replayed once confirmed.
		e.out.set(http.StatusOK)
		dl := e.get(b, "/console/deliveries?status=failed")
		ask = e.post(b, "/console/deliveries/bulk", url.Values{"csrf": {formOf(t, dl, "/console/deliveries/bulk").Get("csrf")}, "scope": {"filter"}, "status": {"failed"}}, nil)
		if ask.code != http.StatusOK || !strings.Contains(ask.body, "Confirm webhooks_deliveries_replay") || !strings.Contains(ask.body, "<dt>Records</dt><dd>3</dd>") || len(e.out.sent()) != 0 {
			t.Fatalf("the deliveries' confirmation: %d\n%s", ask.code, ask.body)
		}
		if done := e.post(b, "/console/confirm", formOf(t, ask, "/console/confirm"), nil); done.code != http.StatusOK || len(e.out.sent()) != 3 || len(e.consoleActions("webhooks_deliveries_replay")) != 1 {
			t.Fatalf("the confirmed replays: %d, sent %v", done.code, e.out.sent())
		}

		// A viewer has no box to tick, and is refused anyway.
		v := e.browser()
		e.signIn(v, demo.Viewer, demo.Workspace)
		vl := e.get(v, "/console/emails?status=failed")
		if strings.Contains(vl.body, `name="id"`) || strings.Contains(vl.body, "/console/emails/bulk") {
			t.Fatalf("the viewer is offered bulk actions:\n%s", vl.body)
		}
		csrf := csrfOf(t, vl)
		for _, path := range []string{"/console/emails/bulk", "/console/deliveries/bulk"} {
			if p := e.post(v, path, url.Values{"csrf": {csrf}, "scope": {"filter"}, "status": {"failed"}}, nil); p.code != http.StatusForbidden {
				t.Errorf("the viewer's %s: %d", path, p.code)
			}
		}
		if e.proc.count() != 2 || len(e.out.sent()) != 3 {
			t.Errorf("the viewer's refused actions ran something")
		}
	})
}

// events reads a server-sent event stream's events (name and data) onto
// a channel, until the stream ends.
func sseEvents(t *testing.T, res *http.Response) <-chan [2]string {
	ch := make(chan [2]string, 16)
	go func() {
		defer close(ch)
		var name, data string
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && name != "":
				ch <- [2]string{name, data}
				name, data = "", ""
			}
		}
	}()
	return ch
}

func nextEvent(t *testing.T, ch <-chan [2]string) [2]string {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended without an event")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return [2]string{}
}

var versionAttr = regexp.MustCompile(`<main id="main" data-version="([^"]+)"( data-live)?>`)

func TestLivePagesStreamTheirChanges(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		b := e.browser()
		e.signIn(b, demo.Owner, demo.Workspace)
		list := e.get(b, "/console/emails?status=pending")
		m := versionAttr.FindStringSubmatch(list.body)
		if m == nil || m[2] == "" || !strings.Contains(list.body, `id="live-toggle" aria-pressed="false"`) {
			t.Fatalf("the list is not live:\n%s", list.body)
		}
		if again := versionAttr.FindStringSubmatch(e.get(b, "/console/emails?status=pending").body); again[1] != m[1] {
			t.Fatalf("the same list has two versions: %s, %s", m[1], again[1])
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/console/live?path="+url.QueryEscape("/console/emails?status=pending")+"&v="+m[1], nil)
		res, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("the stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		events := sseEvents(t, res)
		// A new pending e-mail changes the list: the stream says so with
		// the version the page now has.
		if err := inbox.NewRepo(e.st).Emails.Put(context.Background(), demo.Workspace, inbox.Email{ID: "eml_new", InboxID: "ibx_invoices", Subject: "new",
			Status: inbox.EmailPending, ReceivedAt: demoNow.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, events)
		now := e.get(b, "/console/emails?status=pending")
		if ev[0] != "changed" || !strings.Contains(now.body, "eml_new") || ev[1] != versionAttr.FindStringSubmatch(now.body)[1] {
			t.Fatalf("after a new e-mail the stream sent %v; the page is at %s", ev, versionAttr.FindStringSubmatch(now.body)[1])
		}
		// Signed out elsewhere, the stream ends.
		e.post(b, "/console/signout", url.Values{"csrf": {csrfOf(t, now)}}, nil)
		if ev := nextEvent(t, events); ev[0] != "ended" {
			t.Fatalf("after sign-out the stream sent %v", ev)
		}

		// A stale version is told at once; a page that is not the
		// console's is refused.
		b = e.browser()
		e.signIn(b, demo.Viewer, demo.Workspace)
		res2, err := b.Get(e.srv.URL + "/console/live?path=" + url.QueryEscape("/console/webhooks") + "&v=stale")
		if err != nil {
			t.Fatal(err)
		}
		if ev := nextEvent(t, sseEvents(t, res2)); ev[0] != "changed" {
			t.Fatalf("a stale version: %v", ev)
		}
		res2.Body.Close()
		for _, p := range []string{"https://evil.example/console/emails", "/console/live?path=/console/emails", "/console/emails/eml_inv_00/eml", "/elsewhere"} {
			if got := e.get(b, "/console/live?path="+url.QueryEscape(p)); got.code != http.StatusBadRequest {
				t.Errorf("streaming %s answered %d", p, got.code)
			}
		}
		// A finished run's page is not live; an e-mail's page is, while
		// pending.
		if p := e.get(b, "/console/emails/eml_inv_00"); strings.Contains(p.body, "data-live") {
			t.Errorf("a processed e-mail's page is live")
		}
		if p := e.get(b, "/console/emails/eml_new"); !strings.Contains(p.body, "data-live") {
			t.Errorf("a pending e-mail's page is not live")
		}
	})
}

// A live page's checks do not count as using the session: left open, it
// still ends when idle.
func TestLiveChecksDoNotKeepASessionAlive(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	p := e.get(b, "/console/emails")
	v := versionAttr.FindStringSubmatch(p.body)[1]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/console/live?path="+url.QueryEscape("/console/emails")+"&v="+v, nil)
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := sseEvents(t, res)
	// Two minutes at a time, each long enough for a check to move the
	// idle expiry on if checks counted as use (they run every 20 ms here).
	for range int(console.DefaultIdleTimeout/(2*time.Minute)) + 1 {
		e.clk.Add(2 * time.Minute)
		time.Sleep(100 * time.Millisecond)
	}
	if ev := nextEvent(t, events); ev[0] != "ended" {
		t.Fatalf("past the idle expiry the stream sent %v", ev)
	}
	if again := e.get(b, "/console/emails"); again.url != "/console/signin" {
		t.Fatalf("past the idle expiry, with a live page open, the list answered at %s", again.url)
	}
}
