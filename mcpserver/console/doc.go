// Package console is the back office of kobana serve: server-rendered
// pages (html/template, with embedded CSS and two small ES modules) under
// /console/ on the HTTP listener, where the people of a workspace see the
// e-mails the Inbox received, their agent and workflow runs and the
// webhook deliveries, and reprocess, resume or replay them.
//
// The console is one more client of the products, never a new path to the
// data: every page reads, and every action runs, through the Inbox
// product's tool handlers (mcpserver.Server.Call, Check, CallConfirmed)
// with the signed-in person's principal, so the same roles, scopes,
// workspace rules and checks apply as over MCP. A destructive action is
// asked first (what, with which arguments, how many), its answer is signed
// for the session and spent once in the store's ledger, and it is recorded
// as an EventConsoleAction system event naming the person and the console.
// One read goes beside the tools, after a tool allowed it: an e-mail's
// HTML body, read from the raw message (Options.Messages) once emails_get
// allowed the e-mail, and served only into a sandboxed frame under its own
// Content-Security-Policy; and one write, the console's own system event.
//
// People sign in with a one-time sign-in code (store.NewSignInCode;
// `kobana token signin` prints one). The console keeps the session on the
// server (backend-for-frontend): a session is an OAuth grant of the client
// ClientID in the store, listed and revoked with the other grants
// (store.AccessList), and a token of kind TokenKind keyed by the hash of
// the cookie's value. The browser holds only that random value, in an
// HttpOnly, SameSite=Strict cookie (Secure and __Host- prefixed unless the
// console is served on plain-http loopback). Static tokens do not open it.
//
// A person signed in may add passkeys (WebAuthn, discoverable credentials
// with user verification, the relying party the public URL's host; kept
// in store.Passkeys) and sign in with one alone; each ceremony's
// challenge is kept on the server and answered once. With Options.OIDC
// the console also signs people in at an external OpenID Connect
// provider, as a confidential client on the server (authorization code
// with PKCE, state and nonce); the provider's tokens never reach the
// browser.
//
// Entry points: New (Options) and Console.Handler, mounted at Prefix.
package console
