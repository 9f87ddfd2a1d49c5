package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/server"
)

// With an external issuer and the console's client registered there,
// server.Run's console offers signing in at the issuer, and sends the
// browser to its authorization endpoint as a confidential client with
// PKCE, the redirect URI on the public URL. Without the issuer the
// console's client is a configuration error.
func TestConsoleOIDCFromTheConfig(t *testing.T) {
	mux := http.NewServeMux()
	idp := httptest.NewServer(mux)
	defer idp.Close()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": idp.URL, "jwks_uri": idp.URL + "/keys", "authorization_endpoint": idp.URL + "/auth",
			"token_endpoint": idp.URL + "/token", "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	st, path := openStore(t)
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, HTTP: &server.HTTP{Addr: "127.0.0.1:0",
		OAuth:   &server.OAuth{Issuer: idp.URL},
		Console: server.ConsoleOptions{OIDCClientID: "console-at-acme", OIDCClientSecret: "secret", OIDCName: "Acme"}}})
	defer stop()
	base := "http://" + addrs["http"].String()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/console/signin")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(body)
	if !strings.Contains(page, "Sign in with Acme") {
		t.Fatalf("the sign-in page offers no OIDC sign-in:\n%s", page)
	}
	csrf := regexp.MustCompile(`action="/console/signin/oidc"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no form token:\n%s", page)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/console/signin/oidc", strings.NewReader(url.Values{"csrf": {csrf[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), idp.URL+"/auth?") {
		t.Fatalf("the OIDC form answered %s, Location %q", res.Status, res.Header.Get("Location"))
	}
	q := loc.Query()
	if q.Get("client_id") != "console-at-acme" || q.Get("redirect_uri") != base+"/console/signin/oidc/callback" || q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" {
		t.Errorf("the authorization request: %v", q)
	}

	st2, path2 := openStore(t)
	err = server.Run(t.Context(), server.Config{Store: st2, StorePath: path2, HTTP: &server.HTTP{Addr: "127.0.0.1:0",
		Console: server.ConsoleOptions{OIDCClientID: "console-at-acme", OIDCClientSecret: "secret"}}})
	var ce *server.ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("the console's OIDC client without an issuer: %v, want a ConfigError", err)
	}
}
