// Package console is the back office of kobana serve: server-rendered
// pages (html/template, with embedded CSS and a small ES module) under
// /console/ on the HTTP listener, for the people of a workspace to see the
// e-mails the Inbox received.
//
// The console is one more client of the products, never a new path to the
// data: every page reads through the Inbox product's tool handlers
// (mcpserver.Server.Call) with the signed-in person's principal, so the
// same roles, scopes and workspace rules apply as over MCP.
//
// People sign in with a one-time sign-in code (store.NewSignInCode;
// `kobana token signin` prints one). The console keeps the session on the
// server (backend-for-frontend): a session is an OAuth grant of the client
// "kobana-console" in the store, listed and revoked with the other grants
// (store.AccessList), and a token of kind "console" keyed by the hash of
// the cookie's value. The browser holds only that random value, in an
// HttpOnly, SameSite=Strict cookie (Secure and __Host- prefixed unless the
// console is served on plain-http loopback). Static tokens do not open it.
//
// Entry points: New (Options) and Console.Handler, mounted at Prefix.
package console
