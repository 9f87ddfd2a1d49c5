package server_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/kobana/workflow/mcpserver/internal/chromiumtest"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
)

// In Chromium, a person signs in to the console of a real server at the
// company's OpenID provider, on another site (localhost against the
// console's 127.0.0.1): the provider's answer is a navigation from that
// site, on which the browser sends no SameSite=Strict cookie, and the
// person still lands signed in on the page they asked for.
func TestConsoleOIDCInChromium(t *testing.T) {
	ctx := chromiumtest.Browser(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	nonces := map[string]string{}
	mux := http.NewServeMux()
	idp := httptest.NewServer(mux)
	defer idp.Close()
	_, idpPort, _ := net.SplitHostPort(idp.Listener.Addr().String())
	iss := "http://localhost:" + idpPort
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "jwks_uri": iss + "/keys", "authorization_endpoint": iss + "/auth",
			"token_endpoint": iss + "/token", "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /auth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		code := store.RandomHex(16)
		mu.Lock()
		nonces[code] = q.Get("nonce")
		mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		nonce, ok := nonces[r.PostFormValue("code")]
		delete(nonces, r.PostFormValue("code"))
		mu.Unlock()
		if id, secret, _ := r.BasicAuth(); !ok || id != "console" || secret != "s3cret" || r.PostFormValue("code_verifier") == "" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		sig, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
		idt, _ := jwt.Signed(sig).Claims(map[string]any{"iss": iss, "aud": "console", "sub": "ana", "email": "ana@demo.kobana.dev", "email_verified": true,
			"nonce": nonce, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "id_token": idt})
	})
	st, path := openStore(t)
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, HTTP: &server.HTTP{Addr: "127.0.0.1:0",
		OAuth:   &server.OAuth{Issuer: iss},
		Console: server.ConsoleOptions{OIDCClientID: "console", OIDCClientSecret: "s3cret", OIDCName: "Example ID"}}})
	defer stop()
	base := "http://" + addrs["http"].String()

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/deliveries")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.pathname === "/console/signin" && document.querySelector('form[action="/console/signin/oidc"] button')`)
	evalText(t, ctx, `(document.querySelector('form[action="/console/signin/oidc"] button').click(), "")`)
	waitFor(t, ctx, `location.pathname === "/console/deliveries" && document.querySelector("main h1")`)
	if text := evalText(t, ctx, `document.querySelector(".who").innerText`); !strings.Contains(text, "Ana Souza") {
		t.Errorf("signed in at the provider, the header shows %q", text)
	}
}
