package server_test

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/kobana/workflow/mcpserver/internal/chromiumtest"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
)

// A person signs in to the console of a real server in Chromium with a
// one-time code, adds a passkey (Chromium's virtual authenticator: CTAP2,
// internal, resident keys, user verification), signs out, and signs in
// again with the passkey alone. The server's public URL is on 127.0.0.1;
// passkeys work on localhost, the same port.
func TestConsolePasskeyInChromium(t *testing.T) {
	ctx := chromiumtest.Browser(t)
	st, path := openStore(t)
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, HTTP: &server.HTTP{Addr: "127.0.0.1:0"}})
	defer stop()
	_, port, _ := net.SplitHostPort(addrs["http"].String())
	base := "http://localhost:" + port

	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	auth, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.String(), "Content Security Policy") {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()

	code := store.NewSignInCode()
	if err := st.CreateSignInCode(t.Context(), store.SignInCode{Hash: store.HashToken(code), Person: demo.Owner, Workspace: demo.Workspace, Expires: time.Now().Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/emails")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.pathname === "/console/signin" && document.getElementById("code")`)
	evalText(t, ctx, `(document.getElementById("code").value = `+jsString(code)+`, document.querySelector("form.signin button").click(), "")`)
	waitFor(t, ctx, `location.pathname === "/console/emails" && document.querySelector("h1")`)

	// Add a passkey.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/passkeys")); err != nil {
		t.Fatal(err)
	}
	// The button is enabled once the module runs.
	waitFor(t, ctx, `document.getElementById("passkey-name") && !document.querySelector('form[data-passkey="create"] button').disabled`)
	evalText(t, ctx, `(document.getElementById("passkey-name").value = "Chromium", document.querySelector('form[data-passkey="create"] button').click(), "")`)
	waitFor(t, ctx, `location.search === "?added=1" && document.body.innerText.includes("Your passkey was added")`)
	creds, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams(auth))
	if err != nil {
		t.Fatal(err)
	}
	if len(creds.Credentials) != 1 || !creds.Credentials[0].IsResidentCredential || creds.Credentials[0].RpID != "localhost" || string(creds.Credentials[0].UserHandle) != demo.Owner {
		t.Fatalf("the authenticator holds %+v", creds.Credentials)
	}
	keys, err := st.ListPasskeys(t.Context(), demo.Owner)
	if err != nil || len(keys) != 1 || keys[0].Name != "Chromium" {
		t.Fatalf("the store keeps %+v (%v)", keys, err)
	}

	// Sign out, and in with the passkey alone.
	evalText(t, ctx, `(document.querySelector('form[action="/console/signout"] button').click(), "")`)
	waitFor(t, ctx, `location.pathname === "/console/signin" && !document.querySelector("#passkey-signin button").disabled`)
	evalText(t, ctx, `(document.querySelector("#passkey-signin button").click(), "")`)
	waitFor(t, ctx, `location.pathname === "/console/emails" && document.querySelector("h1")`)
	if text := evalText(t, ctx, "document.body.innerText"); !strings.Contains(text, "Ana Souza") || !strings.Contains(text, demo.Workspace) {
		t.Errorf("signed in with the passkey, the page shows:\n%s", text)
	}
	k, err := st.GetPasskey(t.Context(), keys[0].ID)
	if err != nil || k.LastUsed.IsZero() {
		t.Errorf("the passkey's use is not recorded: %+v %v", k, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("in the browser:\n%s", strings.Join(problems, "\n"))
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
