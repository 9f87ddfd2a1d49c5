// Package authserver is the embedded OAuth 2.1 authorization server of
// `kobana serve`, so that one process is enough for remote MCP hosts that
// connect with OAuth only: metadata (RFC 8414), the authorization code
// grant with PKCE (S256 only), refresh tokens rotated at every use (the
// reuse of a rotated one revokes its whole grant), revocation (RFC 7009),
// Dynamic Client Registration (RFC 7591, rate-limited and bounded, public
// clients only) and Client ID Metadata Documents (read through the caller's
// guarded HTTP client, kept by their Cache-Control), resource indicators
// (RFC 8707: tokens are for the one MCP resource), and the issuer in the
// authorization response (RFC 9207). It is built on fosite, which runs the
// grants; this package keeps their state in a store.Store (codes and
// tokens by the hash of their signature, never the value) and serves the
// sign-in and consent page.
//
// A person signs in on the page with a one-time sign-in code (see
// store.NewSignInCode; `kobana token signin` prints one), which names the
// person and one workspace; the consent page then shows who is signed in,
// the client, its redirect URI, the workspace and the scopes (a viewer's
// grant holds read only), and POSTs carry a CSRF token bound to a cookie
// and to the exact request.
//
// Entry points: New (Options), Server.OpenRoutes and Server.PageRoutes (by
// ServeMux pattern, for mcpserver.HTTPOptions.OpenRoutes and Extra),
// Server.Verify (for mcpserver.ResourceAuth.Verify), Server.Issuer.
package authserver
