package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/kobana/workflow/mcpserver/store"
)

// CeremonyKind is the store.OAuthToken kind that keeps a passkey
// ceremony's challenge between its two requests, by the challenge's hash.
const CeremonyKind = "webauthn"

// CeremonyTimeout is how long a passkey ceremony may take, from the
// options the browser asks for to the credential it sends back.
const CeremonyTimeout = 5 * time.Minute

// MaxPasskeys caps the passkeys a person keeps.
const MaxPasskeys = 20

// relyingParty is the console as a WebAuthn relying party: its ID is the
// public URL's host name. A loopback IP address cannot be an RP ID, so a
// console on http://127.0.0.1:PORT offers passkeys on
// http://localhost:PORT (Origin says which). nil when the public URL's
// host is another IP address: no passkeys then.
type relyingParty struct {
	wa *webauthn.WebAuthn
	// Origin is where passkeys work; host its host and port.
	Origin, host string
}

func newRelyingParty(publicURL string) (*relyingParty, error) {
	u, err := url.Parse(publicURL)
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return nil, nil
		}
		host = "localhost"
	}
	origin := u.Scheme + "://" + host
	if p := u.Port(); p != "" {
		origin += ":" + p
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID: host, RPDisplayName: "Kobana console", RPOrigins: []string{origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: CeremonyTimeout, TimeoutUVD: CeremonyTimeout},
			Registration: webauthn.TimeoutConfig{Timeout: CeremonyTimeout, TimeoutUVD: CeremonyTimeout},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("console: passkeys for %s: %w", origin, err)
	}
	return &relyingParty{wa: wa, Origin: origin, host: strings.TrimPrefix(origin, u.Scheme+"://")}, nil
}

// initSignin sets up what signing in needs besides a code: the relying
// party of passkeys and their page, and the OIDC provider when there is
// one.
func (c *Console) initSignin(ctx context.Context, opts Options) error {
	rp, err := newRelyingParty(c.base)
	if err != nil {
		return err
	}
	c.rp = rp
	c.pages["passkeys"] = parsePage("passkeys")
	c.pages["continue"] = parsePage("continue")
	return c.initOIDC(ctx, opts.OIDC)
}

// passkeysAt says whether passkeys work on the page the request is for
// (its host is the relying party's), and else where they do ("" when
// nowhere).
func (c *Console) passkeysAt(r *http.Request) (here bool, origin string) {
	if c.rp == nil {
		return false, ""
	}
	if strings.EqualFold(r.Host, c.rp.host) {
		return true, ""
	}
	return false, c.rp.Origin
}

// passkeyUser is a person as the WebAuthn library sees them: the user
// handle is the person's id.
type passkeyUser struct {
	id, name string
	creds    []webauthn.Credential
}

func (u *passkeyUser) WebAuthnID() []byte                         { return []byte(u.id) }
func (u *passkeyUser) WebAuthnName() string                       { return u.name }
func (u *passkeyUser) WebAuthnDisplayName() string                { return u.name }
func (u *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// passkeyUser loads a person's passkeys.
func (c *Console) passkeyUser(ctx context.Context, person string) (*passkeyUser, []store.Passkey, error) {
	p, err := c.store.GetPerson(ctx, person)
	if err != nil {
		return nil, nil, fmt.Errorf("console: person %s: %w", person, err)
	}
	keys, err := c.store.ListPasskeys(ctx, person)
	if err != nil {
		return nil, nil, fmt.Errorf("console: passkeys of %s: %w", person, err)
	}
	u := &passkeyUser{id: person, name: p.Name}
	if p.Email != "" {
		u.name = p.Email
	}
	for _, k := range keys {
		var cr webauthn.Credential
		if err := json.Unmarshal(k.Credential, &cr); err != nil {
			return nil, nil, fmt.Errorf("console: passkey %s of %s: %w", k.ID, person, err)
		}
		u.creds = append(u.creds, cr)
	}
	return u, keys, nil
}

// ceremony is what the server keeps of a passkey ceremony between its
// two requests.
type ceremony struct {
	// Purpose is "register" or "signin".
	Purpose string               `json:"purpose"`
	Session webauthn.SessionData `json:"session"`
	// Name is the name of the passkey being registered.
	Name string `json:"name,omitempty"`
}

// ceremonyError is a ceremony the console refuses, with what the person
// is told.
type ceremonyError struct{ msg string }

func (e *ceremonyError) Error() string { return e.msg }

var (
	errCeremonyUnknown = &ceremonyError{"This passkey request is unknown or was already used. Try again."}
	errCeremonyExpired = &ceremonyError{"This passkey request expired (it lasts " + CeremonyTimeout.String() + "). Try again."}
)

// beginCeremony keeps a ceremony for its challenge; grant is the session
// it belongs to ("" before sign-in).
func (c *Console) beginCeremony(ctx context.Context, grant string, cer ceremony) error {
	data, err := json.Marshal(cer)
	if err != nil {
		return err
	}
	return c.store.PutOAuthToken(ctx, store.OAuthToken{Kind: CeremonyKind, Hash: store.HashToken(cer.Session.Challenge), Grant: grant,
		Data: data, Expires: c.now().Add(CeremonyTimeout)})
}

// spendCeremony finds the ceremony of a challenge the browser sent back
// and uses it up, so that a credential sent twice is refused the second
// time: it must be for purpose, of the session grant, and not expired.
func (c *Console) spendCeremony(ctx context.Context, challenge, purpose, grant string) (ceremony, error) {
	hash := store.HashToken(challenge)
	t, err := c.store.GetOAuthToken(ctx, CeremonyKind, hash)
	if errors.Is(err, store.ErrNotFound) {
		return ceremony{}, errCeremonyUnknown
	}
	if err != nil {
		return ceremony{}, err
	}
	var cer ceremony
	if err := json.Unmarshal(t.Data, &cer); err != nil || cer.Purpose != purpose || t.Grant != grant {
		return ceremony{}, errCeremonyUnknown
	}
	if !t.Used.IsZero() {
		return ceremony{}, errCeremonyUnknown
	}
	if !c.now().Before(t.Expires) {
		return ceremony{}, errCeremonyExpired
	}
	if err := c.store.UseOAuthToken(ctx, CeremonyKind, hash); errors.Is(err, store.ErrNotFound) {
		return ceremony{}, errCeremonyUnknown
	} else if err != nil {
		return ceremony{}, err
	}
	return cer, nil
}

// passkeyJSON answers a ceremony's options request.
func passkeyJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func passkeyJSONError(w http.ResponseWriter, code int, msg string) {
	passkeyJSON(w, code, map[string]string{"error": msg})
}

type passkeysData struct {
	Keys []store.Passkey
	// Here says passkeys can be added on this page; Origin is where they
	// can when not here ("" when nowhere).
	Here                        bool
	Origin, CSRF, Notice, Error string
}

// passkeysPage lists the person's passkeys, with the forms that add and
// remove them.
func (c *Console) passkeysPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderPasskeys(w, r, s, http.StatusOK, r.URL.Query().Get("added") != "", "")
}

func (c *Console) renderPasskeys(w http.ResponseWriter, r *http.Request, s *session, code int, added bool, problem string) {
	keys, err := c.store.ListPasskeys(r.Context(), s.principal.Person)
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: passkeys", "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "Your passkeys cannot be read right now; try again.")
		return
	}
	d := passkeysData{Keys: keys, CSRF: s.csrf, Error: problem}
	d.Here, d.Origin = c.passkeysAt(r)
	if added {
		d.Notice = "Your passkey was added. Next time, sign in with it."
	}
	c.render(w, r, s, code, "passkeys", d)
}

// passkeyOptions starts registering a passkey for the signed-in person.
func (c *Console) passkeyOptions(w http.ResponseWriter, r *http.Request, s *session) {
	if c.rp == nil {
		passkeyJSONError(w, http.StatusNotFound, "Passkeys need the console on a domain name.")
		return
	}
	ctx := r.Context()
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" || len(name) > 100 {
		passkeyJSONError(w, http.StatusBadRequest, "Name the passkey (at most 100 characters), e.g. “laptop”.")
		return
	}
	u, keys, err := c.passkeyUser(ctx, s.principal.Person)
	if err != nil {
		c.log.ErrorContext(ctx, "console: passkey options", "error", err)
		passkeyJSONError(w, http.StatusServiceUnavailable, "Passkeys cannot be added right now; try again.")
		return
	}
	if len(keys) >= MaxPasskeys {
		passkeyJSONError(w, http.StatusConflict, fmt.Sprintf("You have %d passkeys, the most a person keeps; remove one first.", len(keys)))
		return
	}
	var exclude []protocol.CredentialDescriptor
	for _, cr := range u.creds {
		exclude = append(exclude, cr.Descriptor())
	}
	opts, sd, err := c.rp.wa.BeginRegistration(u, webauthn.WithExclusions(exclude))
	if err == nil {
		err = c.beginCeremony(ctx, s.grant, ceremony{Purpose: "register", Session: *sd, Name: name})
	}
	if err != nil {
		c.log.ErrorContext(ctx, "console: passkey options", "error", err)
		passkeyJSONError(w, http.StatusServiceUnavailable, "Passkeys cannot be added right now; try again.")
		return
	}
	passkeyJSON(w, http.StatusOK, opts)
}

// addPasskey finishes registering a passkey: the credential the browser
// made for the challenge this session asked for.
func (c *Console) addPasskey(w http.ResponseWriter, r *http.Request, s *session) {
	if c.rp == nil {
		c.renderPasskeys(w, r, s, http.StatusNotFound, false, "Passkeys need the console on a domain name.")
		return
	}
	ctx := r.Context()
	if r.PostFormValue("credential") == "" {
		c.renderPasskeys(w, r, s, http.StatusBadRequest, false, "Your browser made no passkey: passkeys need scripts on.")
		return
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(r.PostFormValue("credential")))
	if err != nil {
		c.renderPasskeys(w, r, s, http.StatusBadRequest, false, "The browser sent no passkey the console could read: "+protocolDetails(err))
		return
	}
	cer, err := c.spendCeremony(ctx, parsed.Response.CollectedClientData.Challenge, "register", s.grant)
	if err != nil {
		c.ceremonyFailed(w, r, s, err)
		return
	}
	u, _, err := c.passkeyUser(ctx, s.principal.Person)
	if err != nil {
		c.ceremonyFailed(w, r, s, err)
		return
	}
	cred, err := c.rp.wa.CreateCredential(u, cer.Session, parsed)
	if err != nil {
		c.log.InfoContext(ctx, "console: passkey refused", "person", s.principal.Person, "error", err)
		c.renderPasskeys(w, r, s, http.StatusBadRequest, false, "The passkey was not added: "+protocolDetails(err))
		return
	}
	data, err := json.Marshal(cred)
	if err != nil {
		c.ceremonyFailed(w, r, s, err)
		return
	}
	id := base64.RawURLEncoding.EncodeToString(cred.ID)
	err = c.store.CreatePasskey(ctx, store.Passkey{ID: id, Person: s.principal.Person, Workspace: s.principal.Workspace, Name: cer.Name, Credential: data, Created: c.now()})
	if errors.Is(err, store.ErrConflict) {
		c.renderPasskeys(w, r, s, http.StatusConflict, false, "That passkey is already registered.")
		return
	}
	if err != nil {
		c.ceremonyFailed(w, r, s, err)
		return
	}
	c.log.InfoContext(ctx, "console: passkey added", "person", s.principal.Person, "passkey", id)
	http.Redirect(w, r, Prefix+"passkeys?added=1", http.StatusSeeOther)
}

// removePasskey removes one of the person's passkeys.
func (c *Console) removePasskey(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	err := c.store.DeletePasskey(r.Context(), s.principal.Person, id)
	if errors.Is(err, store.ErrNotFound) {
		c.renderPasskeys(w, r, s, http.StatusNotFound, false, "You have no such passkey.")
		return
	}
	if err != nil {
		c.ceremonyFailed(w, r, s, err)
		return
	}
	c.log.InfoContext(r.Context(), "console: passkey removed", "person", s.principal.Person, "passkey", id)
	http.Redirect(w, r, Prefix+"passkeys", http.StatusSeeOther)
}

// ceremonyFailed answers a refused ceremony with what the person is told,
// or a failure of the store as one to try again.
func (c *Console) ceremonyFailed(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var ce *ceremonyError
	if errors.As(err, &ce) {
		if s == nil {
			c.signinForm(w, r, http.StatusUnauthorized, ce.msg)
		} else {
			c.renderPasskeys(w, r, s, http.StatusBadRequest, false, ce.msg)
		}
		return
	}
	c.log.ErrorContext(r.Context(), "console: passkey", "error", err)
	if s == nil {
		c.signinForm(w, r, http.StatusServiceUnavailable, "You cannot sign in with a passkey right now; try again.")
		return
	}
	c.renderPasskeys(w, r, s, http.StatusServiceUnavailable, false, "Your passkeys cannot be changed right now; try again.")
}

// protocolDetails is what the WebAuthn library says went wrong.
func protocolDetails(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return pe.Details
	}
	return err.Error()
}

// signinOK checks the sign-in form's CSRF token, bound to the browser's
// pre-session cookie.
func (c *Console) signinOK(r *http.Request) bool {
	pre, err := r.Cookie(c.preName())
	return err == nil && pre.Value != "" && r.PostFormValue("csrf") == c.mac("signin", pre.Value)
}

// passkeySigninOptions starts a sign-in with a passkey: a challenge any
// of the browser's passkeys for this console may sign.
func (c *Console) passkeySigninOptions(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if c.rp == nil {
		passkeyJSONError(w, http.StatusNotFound, "Passkeys need the console on a domain name.")
		return
	}
	if !c.signinOK(r) {
		passkeyJSONError(w, http.StatusForbidden, "This form is stale or did not come from this console; reload the page.")
		return
	}
	opts, sd, err := c.rp.wa.BeginDiscoverableLogin()
	if err == nil {
		err = c.beginCeremony(r.Context(), "", ceremony{Purpose: "signin", Session: *sd})
	}
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: passkey sign-in options", "error", err)
		passkeyJSONError(w, http.StatusServiceUnavailable, "You cannot sign in with a passkey right now; try again.")
		return
	}
	passkeyJSON(w, http.StatusOK, opts)
}

// errOtherPerson is an assertion whose user handle is not the person the
// passkey was registered for.
var errOtherPerson = errors.New("the passkey belongs to another person")

// passkeySignin signs in with a passkey's assertion: it must answer a
// challenge this console made and did not see answered, be signed by a
// passkey registered here for the person its user handle names, and its
// sign counter must have moved on (else the authenticator may be cloned).
func (c *Console) passkeySignin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if c.rp == nil {
		c.signinForm(w, r, http.StatusNotFound, "Passkeys need the console on a domain name.")
		return
	}
	if !c.signinOK(r) {
		c.signinForm(w, r, http.StatusForbidden, "This form is stale or did not come from this console; try again.")
		return
	}
	ctx := r.Context()
	if r.PostFormValue("credential") == "" {
		c.signinForm(w, r, http.StatusBadRequest, "Your browser used no passkey: passkeys need scripts on.")
		return
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(r.PostFormValue("credential")))
	if err != nil {
		c.signinForm(w, r, http.StatusBadRequest, "The browser sent no passkey the console could read: "+protocolDetails(err))
		return
	}
	cer, err := c.spendCeremony(ctx, parsed.Response.CollectedClientData.Challenge, "signin", "")
	if err != nil {
		c.ceremonyFailed(w, r, nil, err)
		return
	}
	var key store.Passkey
	_, cred, err := c.rp.wa.ValidatePasskeyLogin(func(rawID, userHandle []byte) (webauthn.User, error) {
		k, err := c.store.GetPasskey(ctx, base64.RawURLEncoding.EncodeToString(rawID))
		if err != nil {
			return nil, err
		}
		if string(userHandle) != k.Person {
			return nil, errOtherPerson
		}
		key = k
		u, _, err := c.passkeyUser(ctx, k.Person)
		return u, err
	}, cer.Session, parsed)
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.signinForm(w, r, http.StatusUnauthorized, "This passkey is not registered here (it may have been removed). Sign in with a code, then add it again.")
		return
	case errors.Is(err, errOtherPerson):
		c.log.WarnContext(ctx, "console: passkey sign-in refused: the user handle names another person", "passkey", base64.RawURLEncoding.EncodeToString(parsed.RawID))
		c.signinForm(w, r, http.StatusUnauthorized, "This passkey belongs to another person; it cannot sign you in.")
		return
	case err != nil:
		c.log.InfoContext(ctx, "console: passkey sign-in refused", "error", err)
		c.signinForm(w, r, http.StatusUnauthorized, "The passkey did not sign you in: "+protocolDetails(err))
		return
	}
	if cred.Authenticator.CloneWarning {
		c.log.WarnContext(ctx, "console: passkey sign-in refused: its sign counter went back, the authenticator may be cloned",
			"person", key.Person, "passkey", key.ID, "sign_count", cred.Authenticator.SignCount)
		c.signinForm(w, r, http.StatusUnauthorized, "This passkey's counter went back, so it may have been copied: it cannot sign in. Sign in with a code and remove it.")
		return
	}
	data, err := json.Marshal(cred)
	if err == nil {
		err = c.store.UsePasskey(ctx, key.ID, data, c.now())
	}
	if err != nil {
		c.ceremonyFailed(w, r, nil, err)
		return
	}
	ws, err := c.passkeyWorkspace(ctx, key)
	var value string
	var p store.Principal
	if err == nil {
		value, p, err = c.openSession(ctx, key.Person, ws)
	}
	if errors.Is(err, store.ErrNotFound) {
		c.signinForm(w, r, http.StatusForbidden, "You are not a member of any workspace any more.")
		return
	}
	if err != nil {
		c.ceremonyFailed(w, r, nil, err)
		return
	}
	c.log.InfoContext(ctx, "console: sign-in with a passkey", "person", p.Person, "workspace", p.Workspace, "grant", p.TokenID, "passkey", key.ID)
	c.setCookie(w, c.preName(), "", -1)
	c.setCookie(w, c.cookieName(), value, c.lifetime)
	http.Redirect(w, r, localNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// passkeyWorkspace is the workspace a sign-in with a passkey opens: the
// one it was registered in while the person is a member there, else the
// first of their workspaces. ErrNotFound when they are in none.
func (c *Console) passkeyWorkspace(ctx context.Context, key store.Passkey) (string, error) {
	ms, err := c.store.Memberships(ctx, key.Person)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if m.Workspace == key.Workspace {
			return m.Workspace, nil
		}
	}
	if len(ms) == 0 {
		return "", store.ErrNotFound
	}
	return ms[0].Workspace, nil
}

// parsePage parses one page of the console's own templates.
func parsePage(name string) *template.Template {
	return template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
}

// signinRoutes adds the routes of passkeys and OIDC sign-in.
func (c *Console) signinRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Prefix+"passkeys", c.signedIn(c.passkeysPage))
	mux.HandleFunc("POST "+Prefix+"passkeys/options", c.signedIn(c.passkeyOptions))
	mux.HandleFunc("POST "+Prefix+"passkeys", c.signedIn(c.addPasskey))
	mux.HandleFunc("POST "+Prefix+"passkeys/{id}/remove", c.signedIn(c.removePasskey))
	mux.HandleFunc("POST "+Prefix+"signin/passkey/options", c.passkeySigninOptions)
	mux.HandleFunc("POST "+Prefix+"signin/passkey", c.passkeySignin)
	mux.HandleFunc("POST "+Prefix+"signin/oidc", c.oidcStart)
	mux.HandleFunc("GET "+Prefix+"signin/oidc/callback", c.oidcCallback)
}
