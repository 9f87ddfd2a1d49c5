// Package issuer trusts an operator's own OAuth authorization server (the
// company's identity provider) instead of the embedded one: its metadata
// is found by OpenID Connect discovery from the issuer URL, its access
// tokens are JWTs verified against its published keys (JWKS, fetched and
// refreshed by go-oidc), bound to this resource by their audience, and
// mapped to a Kobana person by a claim (the e-mail address by default, or
// a claim holding the person's id) and to a workspace (a claim, or the
// person's only one). Scopes come from the scope or scp claim.
//
// Entry points: New (Options) and Verifier.Verify, for
// mcpserver.ResourceAuth.Verify.
package issuer
