package console

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// Prefix is the path the console is served under.
const Prefix = "/console/"

// Tools runs a product's tool for a principal, as MCP's tools/call would
// (mcpserver.Server.Call): the console reads only through it.
type Tools interface {
	Call(ctx context.Context, p store.Principal, tool string, args json.RawMessage) (json.RawMessage, error)
	// CallConfirmed runs a destructive tool the person confirmed.
	CallConfirmed(ctx context.Context, p store.Principal, tool string, args json.RawMessage) (json.RawMessage, error)
	// Check runs a destructive tool's check before the person is asked.
	Check(ctx context.Context, p store.Principal, tool string, args json.RawMessage) error
	// May says whether the principal may run the tool (the pages show
	// only the controls it may use).
	May(p store.Principal, tool string) bool
}

// Store is what the console keeps in the product's store.
type Store interface {
	store.Identity
	store.AccessList
	store.OAuth
	store.Keys
	// Ledger spends each confirmation once; Records keeps the system
	// events of the actions people confirm.
	store.Ledger
	store.Records
	// Passkeys keeps the people's passkeys.
	store.Passkeys
}

// Options configures New.
type Options struct {
	// Store keeps the sessions (OAuth grants and tokens), spends sign-in
	// codes and holds the CSRF key.
	Store Store
	// Tools runs the Inbox product's tools.
	Tools Tools
	// Messages opens raw messages, for the HTML body of an e-mail the
	// person may read (emails_get says so first); nil shows no HTML body.
	Messages inbox.Messages
	// PublicURL is where the server is reached (scheme and host): an https
	// URL makes the session cookie Secure; plain http is served only to a
	// loopback host (development), with a cookie that is not.
	PublicURL string
	// IdleTimeout and Lifetime end a session (defaults DefaultIdleTimeout
	// and DefaultLifetime).
	IdleTimeout, Lifetime time.Duration
	// OIDC, when set, also signs people in through an external OpenID
	// Connect provider.
	OIDC *OIDC
	// LiveInterval is how often a live page's stream looks for changes
	// (default DefaultLiveInterval).
	LiveInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Console serves the back office. Build it with New.
type Console struct {
	store    Store
	tools    Tools
	messages inbox.Messages
	base     string
	secure   bool
	loopback bool
	idle     time.Duration
	lifetime time.Duration
	// liveEvery is how often a live stream looks for changes.
	liveEvery time.Duration
	key       []byte
	now       func() time.Time
	log       *slog.Logger
	pages     pages
	cop       *http.CrossOriginProtection
	// rp is the console as a WebAuthn relying party; nil when the public
	// URL's host cannot have passkeys.
	rp *relyingParty
	// oidc signs people in through an external provider; nil when none.
	oidc *oidcSignin
}

// keyPurpose names the store's signing key of the console's CSRF tokens.
const keyPurpose = "console"

// New builds the console. The public URL must be absolute.
func New(ctx context.Context, opts Options) (*Console, error) {
	if opts.Store == nil || opts.Tools == nil {
		return nil, errors.New("console: Options.Store and Options.Tools are required")
	}
	u, err := url.Parse(opts.PublicURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("console: public URL %q is not an absolute http(s) URL", opts.PublicURL)
	}
	k, err := opts.Store.SigningKey(ctx, keyPurpose)
	if err != nil {
		return nil, fmt.Errorf("console: signing key: %w", err)
	}
	c := &Console{store: opts.Store, tools: opts.Tools, messages: opts.Messages, base: strings.TrimRight(opts.PublicURL, "/"), secure: u.Scheme == "https",
		loopback: isLoopback(u.Hostname()), idle: opts.IdleTimeout, lifetime: opts.Lifetime,
		key: k.Secret, liveEvery: opts.LiveInterval, now: opts.Now, log: opts.Logger, pages: parsePages(), cop: http.NewCrossOriginProtection()}
	if c.idle <= 0 {
		c.idle = DefaultIdleTimeout
	}
	if c.lifetime <= 0 {
		c.lifetime = DefaultLifetime
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.liveEvery <= 0 {
		c.liveEvery = DefaultLiveInterval
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if err := c.initSignin(ctx, opts); err != nil {
		return nil, err
	}
	c.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.log.InfoContext(r.Context(), "console: cross-origin request refused", "path", r.URL.Path, "remote", r.RemoteAddr)
		c.message(w, r, nil, http.StatusForbidden, "This form did not come from this console. Go back, reload the page and try again.")
	}))
	return c, nil
}

// URL is the console's address on the public URL.
func (c *Console) URL() string { return c.base + Prefix }

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler serves the console; mount it at Prefix.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix+"static/", http.StripPrefix(Prefix+"static/", staticHandler()))
	mux.HandleFunc("GET "+Prefix+"{$}", c.home)
	mux.HandleFunc("GET "+Prefix+"signin", c.signinPage)
	mux.HandleFunc("POST "+Prefix+"signin", c.signin)
	mux.HandleFunc("POST "+Prefix+"signout", c.signedIn(c.signout))
	mux.HandleFunc("POST "+Prefix+"workspace", c.signedIn(c.switchWorkspace))
	mux.HandleFunc("GET "+Prefix+"emails", c.signedIn(c.emails))
	mux.HandleFunc("GET "+Prefix+"emails/{id}", c.signedIn(c.email))
	mux.HandleFunc("GET "+Prefix+"emails/{id}/eml", c.signedIn(c.eml))
	mux.HandleFunc("GET "+Prefix+"emails/{id}/html", c.signedIn(c.emailHTML))
	mux.HandleFunc("GET "+Prefix+"emails/{id}/attachments/{n}", c.signedIn(c.attachment))
	mux.HandleFunc("POST "+Prefix+"emails/{id}/reprocess", c.signedIn(c.reprocess))
	mux.HandleFunc("POST "+Prefix+"emails/bulk", c.signedIn(c.bulkEmails))
	mux.HandleFunc("POST "+Prefix+"deliveries/bulk", c.signedIn(c.bulkDeliveries))
	mux.HandleFunc("POST "+Prefix+"confirm", c.signedIn(c.confirm))
	mux.HandleFunc("GET "+Prefix+"deliveries", c.signedIn(c.deliveries))
	mux.HandleFunc("POST "+Prefix+"deliveries/{id}/replay", c.signedIn(c.replay))
	mux.HandleFunc("GET "+Prefix+"webhooks", c.signedIn(c.webhooks))
	mux.HandleFunc("GET "+Prefix+"webhooks/{id}", c.signedIn(c.webhook))
	mux.HandleFunc("POST "+Prefix+"webhooks/{id}/test", c.signedIn(c.webhookTest))
	mux.HandleFunc("POST "+Prefix+"webhooks/{id}/recover", c.signedIn(c.recoverDeliveries))
	mux.HandleFunc("GET "+Prefix+"inboxes", c.signedIn(c.inboxes))
	mux.HandleFunc("GET "+Prefix+"agents", c.signedIn(c.agents))
	mux.HandleFunc("GET "+Prefix+"secrets", c.signedIn(c.secrets))
	mux.HandleFunc("GET "+Prefix+"usage", c.signedIn(c.usage))
	mux.HandleFunc("GET "+Prefix+"events", c.signedIn(c.events))
	mux.HandleFunc("GET "+Prefix+"workflow-runs/{id}", c.signedIn(c.workflowRun))
	mux.HandleFunc("GET "+Prefix+"agent-runs/{id}", c.signedIn(c.agentRun))
	mux.HandleFunc("GET "+Prefix+"try", c.signedIn(c.try))
	mux.HandleFunc("POST "+Prefix+"try", tryBody(c.signedIn(c.tryRun)))
	c.signinRoutes(mux)
	mux.HandleFunc("GET "+Prefix+"live", c.signedIn(c.liveStream(mux)))
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		s, _, _ := c.readSession(r)
		c.message(w, r, s, http.StatusNotFound, "There is no such page in the console.")
	})
	return c.headers(c.cop.Handler(mux))
}

type nonceKey struct{}

// headers sets what every console response carries: a strict CSP with a
// nonce of its own, no framing, a referrer kept to this origin (Chromium
// sends Origin: null on a page's own POSTs under no-referrer), no caching
// of private pages. Plain http is refused unless the console is on a
// loopback host.
func (c *Console) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [18]byte
		rand.Read(b[:])
		nonce := base64.RawURLEncoding.EncodeToString(b[:])
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"' 'strict-dynamic'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; form-action 'self'"+c.signinFormAction(r)+"; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !c.secure && !c.loopback {
			c.message(w, r, nil, http.StatusForbidden, "The console needs HTTPS: serve with a TLS certificate (or behind a TLS proxy with -public-url https://…).")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), nonceKey{}, nonce)))
	})
}

func nonceOf(r *http.Request) string {
	n, _ := r.Context().Value(nonceKey{}).(string)
	return n
}

// signedIn runs h with the request's session, or sends the browser to
// the sign-in page. A POST must also carry the session's CSRF token.
func (c *Console) signedIn(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok, err := c.readSession(r)
		if err != nil {
			c.log.ErrorContext(r.Context(), "console: reading the session", "error", err)
			c.message(w, r, nil, http.StatusServiceUnavailable, "The console cannot read your session right now; try again.")
			return
		}
		if !ok {
			if r.Method != http.MethodGet {
				c.message(w, r, nil, http.StatusUnauthorized, "Your session ended. Sign in again.")
				return
			}
			http.Redirect(w, r, Prefix+"signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !c.csrfOK(r, s.csrf) {
			c.message(w, r, s, http.StatusForbidden, "This form is stale or did not come from this console. Go back, reload the page and try again.")
			return
		}
		h(w, r, s)
	}
}

// csrfOK reports whether a POST's form carries the expected token.
func (c *Console) csrfOK(r *http.Request, want string) bool {
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	return want != "" && r.PostFormValue("csrf") == want
}

func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	if _, ok, _ := c.readSession(r); ok {
		http.Redirect(w, r, Prefix+"emails", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}

// localNext is where to go after sign-in: a console path of the form's
// next field, else the e-mails.
func localNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || !strings.HasPrefix(u.EscapedPath(), Prefix) || strings.Contains(next, "\\") {
		return Prefix + "emails"
	}
	return u.RequestURI()
}

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	if _, ok, _ := c.readSession(r); ok {
		http.Redirect(w, r, localNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.signinForm(w, r, http.StatusOK, "")
}

// signinForm renders the sign-in form with a CSRF token bound to a fresh
// pre-session cookie.
func (c *Console) signinForm(w http.ResponseWriter, r *http.Request, code int, problem string) {
	pre := store.RandomHex(16)
	c.setCookie(w, c.preName(), pre, 15*time.Minute)
	d := signinData{CSRF: c.mac("signin", pre), Next: localNext(r.FormValue("next")), Error: problem}
	d.Passkeys, d.PasskeyOrigin = c.passkeysAt(r)
	if c.oidc != nil {
		d.OIDC = c.oidc.cfg.Name
	}
	c.render(w, r, nil, code, "signin", d)
}

type signinData struct {
	CSRF, Next, Error string
	// Passkeys offers signing in with a passkey on this page;
	// PasskeyOrigin is where passkeys work when not here.
	Passkeys      bool
	PasskeyOrigin string
	// OIDC is the name of the provider people may sign in with.
	OIDC string
}

func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	pre, err := r.Cookie(c.preName())
	if err != nil || pre.Value == "" || r.PostFormValue("csrf") != c.mac("signin", pre.Value) {
		c.signinForm(w, r, http.StatusForbidden, "This form is stale or did not come from this console; enter the code again.")
		return
	}
	code := strings.TrimSpace(r.PostFormValue("code"))
	if !strings.HasPrefix(code, store.SignInCodePrefix) {
		c.signinForm(w, r, http.StatusUnauthorized, "A sign-in code starts with "+store.SignInCodePrefix+" (kobana token signin prints one). Access tokens do not open the console.")
		return
	}
	value, p, err := c.startSession(r.Context(), code)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			c.log.ErrorContext(r.Context(), "console: sign-in", "error", err)
		}
		c.signinForm(w, r, http.StatusUnauthorized, "That code is unknown, used or expired. Ask for a new one (kobana token signin).")
		return
	}
	c.log.InfoContext(r.Context(), "console: sign-in", "person", p.Person, "workspace", p.Workspace, "grant", p.TokenID)
	c.setCookie(w, c.preName(), "", -1)
	c.setCookie(w, c.cookieName(), value, c.lifetime)
	http.Redirect(w, r, localNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.store.RevokeToken(r.Context(), s.grant); err != nil && !errors.Is(err, store.ErrNotFound) {
		c.log.ErrorContext(r.Context(), "console: sign-out", "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "You could not be signed out right now; try again.")
		return
	}
	c.log.InfoContext(r.Context(), "console: sign-out", "person", s.principal.Person, "grant", s.grant)
	c.setCookie(w, c.cookieName(), "", -1)
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}

// switchWorkspace moves the person to another workspace they are a member
// of: a new session for it (its grant carries the role there), and the
// old one revoked. Its absolute expiry starts again: the person is the
// same, the grant is new.
func (c *Console) switchWorkspace(w http.ResponseWriter, r *http.Request, s *session) {
	ws := r.PostFormValue("workspace")
	value, p, err := c.openSession(r.Context(), s.principal.Person, ws)
	if errors.Is(err, store.ErrNotFound) {
		c.message(w, r, s, http.StatusForbidden, "You are not a member of that workspace.")
		return
	}
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: switching workspace", "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "The workspace cannot be switched right now; try again.")
		return
	}
	if err := c.store.RevokeToken(r.Context(), s.grant); err != nil && !errors.Is(err, store.ErrNotFound) {
		c.log.ErrorContext(r.Context(), "console: ending the session switched from", "grant", s.grant, "error", err)
	}
	c.log.InfoContext(r.Context(), "console: workspace switched", "person", p.Person, "workspace", p.Workspace, "grant", p.TokenID)
	c.setCookie(w, c.cookieName(), value, c.lifetime)
	http.Redirect(w, r, Prefix+"emails", http.StatusSeeOther)
}
