package authserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"

	"github.com/kobana/workflow/mcpserver/store"
)

// Cookies of the sign-in page. With an https issuer they are __Host-
// cookies (Secure, Path=/, no Domain), so no other host can set them.
const (
	csrfCookie    = "kobana_oauth_csrf"
	sessionCookie = "kobana_oauth_session"
)

// cookies signs and reads the page's cookies and CSRF tokens.
type cookies struct {
	key    []byte
	secure bool
}

func (c *cookies) name(n string) string {
	if c.secure {
		return "__Host-" + n
	}
	return n
}

func (c *cookies) mac(parts ...string) string {
	m := hmac.New(sha256.New, c.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (c *cookies) set(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: c.name(name), Value: value, Path: "/", HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(maxAge / time.Second)})
}

func (c *cookies) get(r *http.Request, name string) string {
	k, err := r.Cookie(c.name(name))
	if err != nil {
		return ""
	}
	return k.Value
}

// csrfToken is the hidden field of the page's forms: bound to the
// browser's CSRF cookie and to the exact authorization request, so that
// no other page can post a sign-in or a consent.
func (c *cookies) csrfToken(browser, query string) string { return c.mac("csrf", browser, query) }

// signedIn is a browser's sign-in: who, in which workspace, until when.
type signedIn struct {
	Person    string `json:"p"`
	Workspace string `json:"w"`
	Expires   int64  `json:"e"`
	Browser   string `json:"b"` // the CSRF cookie it was issued with
}

func (c *cookies) session(v signedIn) string {
	b, _ := json.Marshal(v)
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + c.mac("session", p)
}

func (c *cookies) readSession(r *http.Request, browser string, now time.Time) (signedIn, bool) {
	p, sig, ok := strings.Cut(c.get(r, sessionCookie), ".")
	if !ok || subtle.ConstantTimeCompare([]byte(sig), []byte(c.mac("session", p))) != 1 {
		return signedIn{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	var v signedIn
	if err != nil || json.Unmarshal(b, &v) != nil || now.UnixMilli() >= v.Expires || v.Browser != browser {
		return signedIn{}, false
	}
	return v, true
}

// pageData is what the page shows.
type pageData struct {
	Step        string // "signin", "consent", "error"
	Client      string
	ClientID    string
	ClientURI   string
	Redirect    string
	Resource    string
	Scopes      []scopeLine
	CSRF        string
	Action      string
	Error       string
	Person      string
	Email       string
	Workspace   string
	WorkspaceID string
	Role        string
	Org         string
}

type scopeLine struct {
	Name, Meaning string
	Granted       bool
	Why           string
}

var scopeMeaning = map[string]string{
	"read":  "read the workspace: e-mails, agents, runs, webhooks, invoices, customers",
	"write": "change the workspace: run, reprocess, create, update and (after you confirm) delete records",
}

// authorize is the authorization endpoint and its page. GET shows the
// sign-in form (or, once signed in, the consent); POST signs in with a
// one-time code, or allows or denies. Nothing is sent to a redirect URI
// that is not registered: such requests get an error page here.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	// same-origin, not no-referrer: with no-referrer browsers send
	// "Origin: null" on the page's own form posts.
	w.Header().Set("Referrer-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		s.errorPage(w, http.StatusMethodNotAllowed, "The authorization endpoint answers GET and POST only.")
		return
	}
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			s.errorPage(w, http.StatusBadRequest, "The form could not be read.")
			return
		}
		// The page's forms post to the same URL: the authorization request
		// is the query alone (a POSTed request would be ambiguous).
		for k := range r.PostForm {
			if !strings.HasPrefix(k, "kobana_") {
				s.errorPage(w, http.StatusBadRequest, "Send the authorization request as a GET with its parameters in the URL.")
				return
			}
		}
	}
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err == nil {
		err = s.checkAuthorize(ar)
	}
	if err != nil {
		s.authorizeError(ctx, w, r, ar, err)
		return
	}
	c, _ := ar.GetClient().(*client)
	browser := s.cookies.get(r, csrfCookie)
	if browser == "" {
		browser = store.RandomHex(16)
		s.cookies.set(w, csrfCookie, browser, 0)
	}
	query := r.URL.RawQuery
	data := pageData{Client: c.name, ClientID: c.GetID(), ClientURI: c.uri, Redirect: ar.GetRedirectURI().String(),
		Resource: s.opts.ResourceName, CSRF: s.cookies.csrfToken(browser, query), Action: AuthorizePath + "?" + query}
	if data.Client == "" {
		data.Client = "an unnamed client"
	}
	now := s.now()
	who, signed := s.cookies.readSession(r, browser, now)

	if r.Method == http.MethodPost {
		if !s.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(r.PostForm.Get("kobana_csrf")), []byte(data.CSRF)) != 1 {
			s.log.InfoContext(ctx, "oauth consent refused: cross-site or stale form", "remote", r.RemoteAddr, "client", c.GetID())
			s.errorPage(w, http.StatusForbidden, "This form did not come from this page (or the page is too old). Start again from the application.")
			return
		}
		switch r.PostForm.Get("kobana_action") {
		case "signin":
			code := strings.TrimSpace(r.PostForm.Get("kobana_code"))
			sc, err := s.store.UseSignInCode(ctx, store.HashToken(code))
			if err != nil {
				if !errors.Is(err, store.ErrNotFound) {
					s.log.ErrorContext(ctx, "oauth sign-in", "error", err)
				}
				data.Step, data.Error = "signin", "That code is unknown, used or expired. Ask for a new one (kobana token signin)."
				s.page(w, http.StatusUnauthorized, data)
				return
			}
			who = signedIn{Person: sc.Person, Workspace: sc.Workspace, Expires: now.Add(s.opts.SessionLifespan).UnixMilli(), Browser: browser}
			signed = true
			s.cookies.set(w, sessionCookie, s.cookies.session(who), s.opts.SessionLifespan)
			s.log.InfoContext(ctx, "oauth sign-in", "person", sc.Person, "workspace", sc.Workspace, "client", c.GetID())
		case "signout":
			s.cookies.set(w, sessionCookie, "", -time.Second)
			signed = false
		case "deny":
			if !signed {
				break
			}
			s.authorizeError(ctx, w, r, ar, fosite.ErrAccessDenied.WithHint("The person declined."))
			return
		case "allow":
			if !signed {
				break
			}
			s.allow(ctx, w, r, ar, who, &data)
			return
		default:
			s.errorPage(w, http.StatusBadRequest, "Unknown action.")
			return
		}
	}
	if !signed {
		data.Step = "signin"
		data.Scopes = s.scopeLines(ar.GetRequestedScopes(), "")
		s.page(w, http.StatusOK, data)
		return
	}
	if err := s.fillPerson(ctx, who, &data, ar); err != nil {
		s.cookies.set(w, sessionCookie, "", -time.Second)
		data.Step, data.Error = "signin", err.Error()
		s.page(w, http.StatusOK, data)
		return
	}
	data.Step = "consent"
	s.page(w, http.StatusOK, data)
}

// checkAuthorize is what this server asks of an authorization request
// beyond fosite: PKCE with S256, the query response mode, and this
// server's resource.
func (s *Server) checkAuthorize(ar fosite.AuthorizeRequester) error {
	form := ar.GetRequestForm()
	if form.Get("code_challenge") == "" {
		return fosite.ErrInvalidRequest.WithHint("PKCE is required: send code_challenge and code_challenge_method=S256.")
	}
	if form.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("Only the S256 code_challenge_method is supported.")
	}
	if m := form.Get("response_mode"); m != "" && m != "query" {
		return fosite.ErrInvalidRequest.WithHint("Only the query response mode is supported.")
	}
	return s.checkResource(form["resource"])
}

// sameOrigin reports whether a POST came from this server's own page, by
// the headers browsers send (Origin, Sec-Fetch-Site); a request with
// neither is a non-browser one and left to the CSRF token.
func (s *Server) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(strings.TrimRight(o, "/"), s.opts.Issuer) {
		return false
	}
	return true
}

// requestedScopes are the scopes a request asks for; none means both.
func requestedScopes(ar fosite.AuthorizeRequester) []string {
	if len(ar.GetRequestedScopes()) == 0 {
		return scopes
	}
	return ar.GetRequestedScopes()
}

// grantable are the requested scopes the person's role can use: a viewer
// gets read only (write would grant nothing, and the page says so).
func grantable(requested []string, role store.Role) []string {
	var out []string
	for _, sc := range requested {
		if sc == "write" && role == "viewer" {
			continue
		}
		out = append(out, sc)
	}
	if slices.Contains(out, "write") && !slices.Contains(out, "read") {
		out = append([]string{"read"}, out...) // write implies read
	}
	return out
}

func (s *Server) scopeLines(requested []string, role store.Role) []scopeLine {
	if len(requested) == 0 {
		requested = scopes
	}
	var out []scopeLine
	granted := grantable(requested, role)
	for _, sc := range requested {
		l := scopeLine{Name: sc, Meaning: scopeMeaning[sc], Granted: role == "" || slices.Contains(granted, sc)}
		if !l.Granted {
			l.Why = fmt.Sprintf("not granted: a %s cannot change the workspace", role)
		}
		out = append(out, l)
	}
	return out
}

// pageMessage is an error whose text the sign-in page shows as written: a
// sentence for the person, not a message for a log.
type pageMessage string

func (m pageMessage) Error() string { return string(m) }

// fillPerson puts who is signed in on the page: name, e-mail, workspace
// and role, and the scopes they can grant; its error is a pageMessage.
func (s *Server) fillPerson(ctx context.Context, who signedIn, data *pageData, ar fosite.AuthorizeRequester) error {
	p, err := s.store.GetPerson(ctx, who.Person)
	if err != nil {
		return pageMessage("You are no longer known here; sign in again.")
	}
	ms, err := s.store.Memberships(ctx, who.Person)
	if err != nil {
		return pageMessage("Your workspaces cannot be read right now; try again.")
	}
	for _, m := range ms {
		if m.Workspace == who.Workspace {
			data.Person, data.Email, data.Workspace, data.WorkspaceID, data.Role, data.Org = p.Name, p.Email, m.WorkspaceName, m.Workspace, string(m.Role), m.Organization
			data.Scopes = s.scopeLines(requestedScopes(ar), m.Role)
			return nil
		}
	}
	return pageMessage("You are no longer a member of that workspace; sign in again.")
}

// allow grants the request: the code goes to the client's redirect URI,
// with the issuer (RFC 9207).
func (s *Server) allow(ctx context.Context, w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, who signedIn, data *pageData) {
	if err := s.fillPerson(ctx, who, data, ar); err != nil {
		data.Step, data.Error = "signin", err.Error()
		s.page(w, http.StatusOK, *data)
		return
	}
	granted := grantable(requestedScopes(ar), store.Role(data.Role))
	if len(granted) == 0 {
		s.authorizeError(ctx, w, r, ar, fosite.ErrInvalidScope.WithHint("None of the requested scopes can be granted to this person."))
		return
	}
	for _, sc := range granted {
		ar.GrantScope(sc)
	}
	ar.GrantAudience(s.opts.Resource)
	ar.SetID(store.NewGrantID())
	sess := &session{Person: who.Person, Workspace: who.Workspace}
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		s.authorizeError(ctx, w, r, ar, err)
		return
	}
	c := ar.GetClient()
	g := store.Grant{ID: ar.GetID(), Client: c.GetID(), Person: who.Person, Workspace: who.Workspace, Scopes: granted,
		Resource: s.opts.Resource, Expires: s.now().Add(s.opts.RefreshTokenLifespan)}
	if err := s.store.CreateGrant(ctx, g); err != nil {
		s.log.ErrorContext(ctx, "oauth: storing a grant", "error", err)
		s.authorizeError(ctx, w, r, ar, fosite.ErrServerError.WithHint("The grant could not be stored."))
		return
	}
	s.log.InfoContext(ctx, "oauth grant", "grant", g.ID, "client", c.GetID(), "person", g.Person, "workspace", g.Workspace, "scopes", strings.Join(granted, " "))
	resp.AddParameter("iss", s.opts.Issuer)
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// authorizeError answers a refused authorization request: on this page
// when the client or its redirect URI is not known to be valid (never a
// redirect there: no open redirector), else to the redirect URI with the
// error and the issuer (RFC 6749 §4.1.2.1, RFC 9207).
func (s *Server) authorizeError(ctx context.Context, w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	s.log.InfoContext(ctx, "oauth authorization refused", "client", r.URL.Query().Get("client_id"), "error", rfc.ErrorField, "why", rfc.GetDescription())
	if ar == nil || !ar.IsRedirectURIValid() {
		s.errorPage(w, http.StatusBadRequest, fmt.Sprintf("This sign-in request cannot be served: %s. Nothing was sent to the application.", rfc.GetDescription()))
		return
	}
	if req, ok := ar.(*fosite.AuthorizeRequest); ok {
		// Errors go back in the query (the one mode served), whatever
		// response_mode the request named.
		req.ResponseMode = fosite.ResponseModeQuery
	}
	s.provider.WriteAuthorizeError(ctx, &issWriter{ResponseWriter: w, iss: s.opts.Issuer}, ar, err)
}

// issWriter adds the iss parameter to the redirect of an error response.
type issWriter struct {
	http.ResponseWriter
	iss string
}

func (w *issWriter) WriteHeader(code int) {
	if loc := w.Header().Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			q := u.Query()
			q.Set("iss", w.iss)
			u.RawQuery = q.Encode()
			w.Header().Set("Location", u.String())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (s *Server) errorPage(w http.ResponseWriter, code int, msg string) {
	s.page(w, code, pageData{Step: "error", Error: msg})
}

func (s *Server) page(w http.ResponseWriter, code int, data pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := pageTemplate.Execute(w, data); err != nil {
		s.log.Error("oauth page", "error", err)
	}
}
