package console_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/console"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/store"
)

// newLocalhostEnv is newEnv with the console's public URL on
// http://localhost:PORT, where passkeys work (an IP address is no relying
// party ID); the test's requests go there too.
func newLocalhostEnv(t testing.TB, open func(testing.TB, *clock) store.Store) *env {
	return newEnvWith(t, open, "localhost", nil)
}

// newEnvWith is newEnv with the public URL's host named host (the
// listener stays on 127.0.0.1), and OIDC sign-in when o is set.
func newEnvWith(t testing.TB, open func(testing.TB, *clock) store.Store, host string, o *console.OIDC) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: demoNow.Add(time.Hour)}
	st := open(t, clk)
	if _, err := inboxdemo.Load(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://" + host + ":" + port
	proc := &fakeProcessor{repo: inbox.NewRepo(st)}
	ibx, p, err := inboxmcp.New(inboxmcp.Options{Store: st, PublicURL: base, Now: clk.Now, Processor: proc, HTTPClient: &http.Client{Transport: &outside{}}})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ibx}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(ctx, console.Options{Store: st, Tools: tools, PublicURL: base, Now: clk.Now, Messages: inbox.BlobMessages{Blobs: st}, OIDC: o})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, c.Handler())
	mux.Handle(inboxmcp.DownloadPath, p.DownloadHandler())
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	srv.URL = base
	return &env{t: t, st: st, clk: clk, srv: srv, tools: tools, proc: proc}
}

// authenticator is a software WebAuthn authenticator (a platform
// authenticator with user verification) holding discoverable credentials,
// for the tests that need no browser.
type authenticator struct {
	t      testing.TB
	origin string
	rpID   string
	creds  map[string]*swCred
}

type swCred struct {
	id      []byte
	key     *ecdsa.PrivateKey
	user    []byte
	counter uint32
}

func newAuthenticator(t testing.TB, origin string) *authenticator {
	u, _ := url.Parse(origin)
	return &authenticator{t: t, origin: origin, rpID: u.Hostname(), creds: map[string]*swCred{}}
}

var b64 = base64.RawURLEncoding

// cbor writes the few CBOR items an attestation object needs.
type cbor struct{ bytes.Buffer }

func (c *cbor) head(major byte, n uint64) {
	switch {
	case n < 24:
		c.WriteByte(major<<5 | byte(n))
	case n < 1<<8:
		c.WriteByte(major<<5 | 24)
		c.WriteByte(byte(n))
	default:
		c.WriteByte(major<<5 | 25)
		c.WriteByte(byte(n >> 8))
		c.WriteByte(byte(n))
	}
}
func (c *cbor) int(n int64) {
	if n < 0 {
		c.head(1, uint64(-1-n))
	} else {
		c.head(0, uint64(n))
	}
}
func (c *cbor) bytes(b []byte) { c.head(2, uint64(len(b))); c.Write(b) }
func (c *cbor) text(s string)  { c.head(3, uint64(len(s))); c.WriteString(s) }

const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

func (a *authenticator) clientData(typ, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return b
}

// create answers registration options with a new credential, as
// PublicKeyCredential.toJSON() would.
func (a *authenticator) create(options []byte) string {
	a.t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			RP        struct {
				ID string `json:"id"`
			} `json:"rp"`
			User struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		a.t.Fatalf("registration options %s: %v", options, err)
	}
	if o.PublicKey.RP.ID != a.rpID {
		a.t.Fatalf("the relying party is %q, the page is on %q", o.PublicKey.RP.ID, a.rpID)
	}
	user, err := b64.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		a.t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	id := make([]byte, 16)
	rand.Read(id)
	cr := &swCred{id: id, key: key, user: user}
	a.creds[string(id)] = cr
	rpHash := sha256.Sum256([]byte(a.rpID))
	var ad bytes.Buffer
	ad.Write(rpHash[:])
	ad.WriteByte(flagUP | flagUV | flagAT)
	binary.Write(&ad, binary.BigEndian, cr.counter)
	ad.Write(make([]byte, 16)) // AAGUID
	binary.Write(&ad, binary.BigEndian, uint16(len(id)))
	ad.Write(id)
	var cose cbor
	cose.head(5, 5)
	cose.int(1)
	cose.int(2) // kty EC2
	cose.int(3)
	cose.int(-7) // ES256
	cose.int(-1)
	cose.int(1) // P-256
	cose.int(-2)
	cose.bytes(key.X.FillBytes(make([]byte, 32)))
	cose.int(-3)
	cose.bytes(key.Y.FillBytes(make([]byte, 32)))
	ad.Write(cose.Bytes())
	var att cbor
	att.head(5, 3)
	att.text("fmt")
	att.text("none")
	att.text("attStmt")
	att.head(5, 0)
	att.text("authData")
	att.bytes(ad.Bytes())
	out, _ := json.Marshal(map[string]any{
		"id": b64.EncodeToString(id), "rawId": b64.EncodeToString(id), "type": "public-key", "authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(a.clientData("webauthn.create", o.PublicKey.Challenge)),
			"attestationObject": b64.EncodeToString(att.Bytes()),
			"transports":        []string{"internal"},
		},
		"clientExtensionResults": map[string]any{},
	})
	return string(out)
}

// get answers sign-in options with an assertion of the credential cr,
// its counter at counter and its user handle user.
func (a *authenticator) get(options []byte, cr *swCred, counter uint32, user []byte) string {
	a.t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			RPID      string `json:"rpId"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		a.t.Fatalf("sign-in options %s: %v", options, err)
	}
	rpHash := sha256.Sum256([]byte(o.PublicKey.RPID))
	var ad bytes.Buffer
	ad.Write(rpHash[:])
	ad.WriteByte(flagUP | flagUV)
	binary.Write(&ad, binary.BigEndian, counter)
	cd := a.clientData("webauthn.get", o.PublicKey.Challenge)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(ad.Bytes(), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, cr.key, digest[:])
	if err != nil {
		a.t.Fatal(err)
	}
	out, _ := json.Marshal(map[string]any{
		"id": b64.EncodeToString(cr.id), "rawId": b64.EncodeToString(cr.id), "type": "public-key", "authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(cd),
			"authenticatorData": b64.EncodeToString(ad.Bytes()),
			"signature":         b64.EncodeToString(sig),
			"userHandle":        b64.EncodeToString(user),
		},
		"clientExtensionResults": map[string]any{},
	})
	return string(out)
}

// only is the authenticator's one credential.
func (a *authenticator) only() *swCred {
	a.t.Helper()
	if len(a.creds) != 1 {
		a.t.Fatalf("the authenticator holds %d credentials", len(a.creds))
	}
	for _, c := range a.creds {
		return c
	}
	return nil
}

// postJSON posts a form and returns the JSON answer's bytes.
func (e *env) postJSON(c *http.Client, path string, form url.Values) (int, []byte) {
	e.t.Helper()
	p := e.post(c, path, form, nil)
	return p.code, []byte(p.body)
}

// addPasskey registers a passkey for the signed-in browser c.
func (e *env) addPasskey(c *http.Client, a *authenticator, name string) page {
	e.t.Helper()
	pk := e.get(c, "/console/passkeys")
	csrf := csrfOf(e.t, pk)
	code, opts := e.postJSON(c, "/console/passkeys/options", url.Values{"csrf": {csrf}, "name": {name}})
	if code != http.StatusOK {
		e.t.Fatalf("registration options: %d %s", code, opts)
	}
	return e.post(c, "/console/passkeys", url.Values{"csrf": {csrf}, "credential": {a.create(opts)}}, nil)
}

// passkeyOptions starts a sign-in with a passkey in a fresh browser.
func (e *env) passkeyOptions(c *http.Client) (csrf string, opts []byte) {
	e.t.Helper()
	form := e.get(c, "/console/signin")
	if !strings.Contains(form.body, `action="/console/signin/passkey"`) {
		e.t.Fatalf("the sign-in page offers no passkey:\n%s", form.body)
	}
	csrf = csrfOf(e.t, form)
	code, opts := e.postJSON(c, "/console/signin/passkey/options", url.Values{"csrf": {csrf}})
	if code != http.StatusOK {
		e.t.Fatalf("sign-in options: %d %s", code, opts)
	}
	return csrf, opts
}

func (e *env) passkeySignin(c *http.Client, csrf, credential string) page {
	e.t.Helper()
	return e.post(c, "/console/signin/passkey", url.Values{"csrf": {csrf}, "credential": {credential}, "next": {"/console/deliveries"}}, nil)
}

// A person signs in with a code, adds a passkey, signs out and signs in
// with the passkey alone; the passkey is listed with its last use, and
// removed it signs in no more.
func TestPasskeyRegisterThenSignIn(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newLocalhostEnv(t, open)
		a := newAuthenticator(t, e.srv.URL)
		b := e.browser()
		if p := e.signIn(b, demo.Owner, demo.Workspace); p.code != http.StatusOK || p.url != "/console/emails" {
			t.Fatalf("sign-in with a code: %d %s", p.code, p.url)
		}
		p := e.addPasskey(b, a, "laptop <script>")
		if p.code != http.StatusOK || p.url != "/console/passkeys" || !strings.Contains(p.body, "Your passkey was added") {
			t.Fatalf("adding a passkey: %d %s\n%s", p.code, p.url, p.body)
		}
		if !strings.Contains(p.body, "laptop &lt;script&gt;") || !strings.Contains(p.body, "never") {
			t.Errorf("the passkey is not listed by its (escaped) name, never used:\n%s", p.body)
		}
		keys, err := e.st.ListPasskeys(context.Background(), demo.Owner)
		if err != nil || len(keys) != 1 || keys[0].Workspace != demo.Workspace || keys[0].ID != b64.EncodeToString(a.only().id) {
			t.Fatalf("stored passkeys: %+v %v", keys, err)
		}
		// Sign out, then in with the passkey alone.
		emails := e.get(b, "/console/emails")
		e.post(b, "/console/signout", url.Values{"csrf": {csrfOf(t, emails)}}, nil)
		if p := e.get(b, "/console/emails"); p.url != "/console/signin" {
			t.Fatalf("still signed in after signing out: %s", p.url)
		}
		csrf, opts := e.passkeyOptions(b)
		cr := a.only()
		cr.counter++
		p = e.passkeySignin(b, csrf, a.get(opts, cr, cr.counter, cr.user))
		if p.code != http.StatusOK || p.url != "/console/deliveries" || !strings.Contains(p.body, "Ana Souza") {
			t.Fatalf("sign-in with the passkey: %d %s\n%s", p.code, p.url, p.body)
		}
		// The session is a console grant like a code's.
		acc, err := e.st.ListAccess(context.Background(), store.AccessQuery{Person: demo.Owner})
		if err != nil {
			t.Fatal(err)
		}
		grants := 0
		for _, x := range acc {
			if x.Client == console.ClientID {
				grants++
			}
		}
		if grants != 1 {
			t.Errorf("%d live console grants after signing out and in with a passkey, want 1: %+v", grants, acc)
		}
		p = e.get(b, "/console/passkeys")
		if strings.Contains(p.body, ">never<") {
			t.Errorf("the passkey's last use is not shown:\n%s", p.body)
		}
		k, err := e.st.GetPasskey(context.Background(), keys[0].ID)
		if err != nil || k.LastUsed.IsZero() || !strings.Contains(string(k.Credential), `"signCount":1`) {
			t.Errorf("after the sign-in the passkey is %+v (%v)", k, err)
		}
		// Removed, it signs in no more.
		rm := formOf(t, p, "/console/passkeys/"+keys[0].ID+"/remove")
		if p := e.post(b, "/console/passkeys/"+keys[0].ID+"/remove", rm, nil); p.code != http.StatusOK || strings.Contains(p.body, "laptop &lt;script&gt;") {
			t.Fatalf("removing: %d\n%s", p.code, p.body)
		}
		b2 := e.browser()
		csrf, opts = e.passkeyOptions(b2)
		cr.counter++
		p = e.passkeySignin(b2, csrf, a.get(opts, cr, cr.counter, cr.user))
		if p.code != http.StatusUnauthorized || !strings.Contains(p.body, "not registered here") {
			t.Fatalf("a removed passkey: %d\n%s", p.code, p.body)
		}
	})
}

// What a passkey sign-in refuses, each saying why: an assertion sent
// again, a challenge past its time, a user handle of another person, a
// sign counter that went back (a cloned authenticator), a form of another
// browser; and another person cannot remove one's passkey.
func TestPasskeySignInRefusals(t *testing.T) {
	e := newLocalhostEnv(t, openSQLite)
	ctx := context.Background()
	a := newAuthenticator(t, e.srv.URL)
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	if p := e.addPasskey(b, a, "laptop"); p.code != http.StatusOK {
		t.Fatalf("adding: %d\n%s", p.code, p.body)
	}
	cr := a.only()

	// Replayed: the same assertion twice.
	b1 := e.browser()
	csrf, opts := e.passkeyOptions(b1)
	cr.counter = 5
	assertion := a.get(opts, cr, cr.counter, cr.user)
	if p := e.passkeySignin(b1, csrf, assertion); p.url != "/console/deliveries" {
		t.Fatalf("the first sign-in: %d %s\n%s", p.code, p.url, p.body)
	}
	b2 := e.browser()
	csrf2, _ := e.passkeyOptions(b2)
	if p := e.passkeySignin(b2, csrf2, assertion); p.code != http.StatusUnauthorized || !strings.Contains(p.body, "already used") {
		t.Errorf("a replayed assertion: %d\n%s", p.code, p.body)
	}

	// Expired: the clock moves past the ceremony's time.
	b3 := e.browser()
	csrf, opts = e.passkeyOptions(b3)
	e.clk.Add(console.CeremonyTimeout + time.Second)
	cr.counter++
	if p := e.passkeySignin(b3, csrf, a.get(opts, cr, cr.counter, cr.user)); p.code != http.StatusUnauthorized || !strings.Contains(p.body, "expired") {
		t.Errorf("an expired challenge: %d\n%s", p.code, p.body)
	}

	// Another person's user handle on Ana's credential.
	b4 := e.browser()
	csrf, opts = e.passkeyOptions(b4)
	cr.counter++
	if p := e.passkeySignin(b4, csrf, a.get(opts, cr, cr.counter, []byte(demo.Viewer))); p.code != http.StatusUnauthorized || !strings.Contains(p.body, "another person") {
		t.Errorf("another person's user handle: %d\n%s", p.code, p.body)
	}

	// A counter that went back: refused, and the stored counter stays.
	b5 := e.browser()
	csrf, opts = e.passkeyOptions(b5)
	if p := e.passkeySignin(b5, csrf, a.get(opts, cr, 2, cr.user)); p.code != http.StatusUnauthorized || !strings.Contains(p.body, "copied") {
		t.Errorf("a counter that went back: %d\n%s", p.code, p.body)
	}
	k, err := e.st.GetPasskey(ctx, b64.EncodeToString(cr.id))
	if err != nil || !strings.Contains(string(k.Credential), `"signCount":5`) {
		t.Errorf("after the refused clone the credential is %s (%v)", k.Credential, err)
	}

	// Another browser's form token; an assertion signed by a key not the
	// credential's.
	b6 := e.browser()
	_, opts = e.passkeyOptions(b6)
	b7 := e.browser()
	csrf7, _ := e.passkeyOptions(b7)
	cr.counter++
	if p := e.passkeySignin(b6, csrf7, a.get(opts, cr, cr.counter, cr.user)); p.code != http.StatusForbidden {
		t.Errorf("another browser's token: %d\n%s", p.code, p.body)
	}
	csrf, opts = e.passkeyOptions(b6)
	forged := &swCred{id: cr.id, user: cr.user}
	forged.key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if p := e.passkeySignin(b6, csrf, a.get(opts, forged, 100, cr.user)); p.code != http.StatusUnauthorized || !strings.Contains(p.body, "did not sign you in") {
		t.Errorf("a forged signature: %d\n%s", p.code, p.body)
	}
	if code, body := e.postJSON(e.browser(), "/console/signin/passkey/options", url.Values{"csrf": {"x"}}); code != http.StatusForbidden {
		t.Errorf("options without the form's token: %d %s", code, body)
	}

	// Another person (the viewer) cannot remove Ana's passkey, and sees
	// only their own.
	v := e.browser()
	e.signIn(v, demo.Viewer, demo.Workspace)
	vp := e.get(v, "/console/passkeys")
	if strings.Contains(vp.body, `<td class="wrap">laptop</td>`) || !strings.Contains(vp.body, "no passkey yet") {
		t.Errorf("the viewer sees Ana's passkey:\n%s", vp.body)
	}
	if p := e.post(v, "/console/passkeys/"+k.ID+"/remove", url.Values{"csrf": {csrfOf(t, vp)}}, nil); p.code != http.StatusNotFound {
		t.Errorf("removing another person's passkey: %d", p.code)
	}
	if _, err := e.st.GetPasskey(ctx, k.ID); err != nil {
		t.Errorf("Ana's passkey is gone: %v", err)
	}
}

// Registering refuses a credential made for a challenge of another
// session, one sent twice, and a form without its token.
func TestPasskeyRegistrationRefusals(t *testing.T) {
	e := newLocalhostEnv(t, openSQLite)
	a := newAuthenticator(t, e.srv.URL)
	b1, b2 := e.browser(), e.browser()
	e.signIn(b1, demo.Owner, demo.Workspace)
	e.signIn(b2, demo.Owner, demo.Workspace)
	p1 := e.get(b1, "/console/passkeys")
	_, opts := e.postJSON(b1, "/console/passkeys/options", url.Values{"csrf": {csrfOf(t, p1)}, "name": {"one"}})
	cred := a.create(opts)
	p2 := e.get(b2, "/console/passkeys")
	if p := e.post(b2, "/console/passkeys", url.Values{"csrf": {csrfOf(t, p2)}, "credential": {cred}}, nil); p.code != http.StatusBadRequest || !strings.Contains(p.body, "unknown or was already used") {
		t.Errorf("another session's challenge: %d\n%s", p.code, p.body)
	}
	if p := e.post(b1, "/console/passkeys", url.Values{"csrf": {csrfOf(t, p1)}, "credential": {cred}}, nil); p.code != http.StatusOK {
		t.Fatalf("its own session's: %d\n%s", p.code, p.body)
	}
	if p := e.post(b1, "/console/passkeys", url.Values{"csrf": {csrfOf(t, p1)}, "credential": {cred}}, nil); p.code != http.StatusBadRequest {
		t.Errorf("the same credential again: %d\n%s", p.code, p.body)
	}
	if code, _ := e.postJSON(b1, "/console/passkeys/options", url.Values{"name": {"two"}}); code != http.StatusForbidden {
		t.Errorf("options without the CSRF token: %d", code)
	}
	if code, body := e.postJSON(b1, "/console/passkeys/options", url.Values{"csrf": {csrfOf(t, p1)}}); code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(string(body)), "Name the passkey") {
		t.Errorf("options without a name: %d %s", code, body)
	}
}

// On a public URL with a loopback IP address the passkeys are offered on
// localhost, the same port; on another IP address they are not offered.
func TestPasskeysNeedADomainName(t *testing.T) {
	e := newEnv(t, openSQLite) // http://127.0.0.1:PORT
	p := e.get(e.browser(), "/console/signin")
	port := e.srv.URL[strings.LastIndex(e.srv.URL, ":")+1:]
	if strings.Contains(p.body, `action="/console/signin/passkey"`) || !strings.Contains(p.body, "http://localhost:"+port+"/console/signin") {
		t.Errorf("the sign-in page on 127.0.0.1 does not send passkeys to localhost:\n%s", p.body)
	}
	ctx := context.Background()
	clk := &clock{t: demoNow}
	st := openSQLite(t, clk)
	if _, err := inboxdemo.Load(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	c, err := console.New(ctx, console.Options{Store: st, Tools: e.tools, PublicURL: "https://192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	c.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://192.0.2.1/console/signin", nil))
	if body := rec.Body.String(); rec.Code != http.StatusOK || strings.Contains(body, "passkey") {
		t.Errorf("passkeys offered on an IP address:\n%s", body)
	}
}
