// Package confirm holds the two pure pieces of the confirmation of
// destructive tools: the canonical form of a call's arguments (Canonical) and
// the requestState token (Claims, Seal, Open), an HMAC-SHA256-signed,
// expiring statement bound to a tool, a digest of its canonical arguments, a
// person, an organization, a workspace and a nonce. Keys are identified by an
// id carried in the token, so they can be rotated without invalidating states
// already handed out.
//
// The protocol flow (asking, the ledger, the error codes) lives in package
// mcpserver; this package has no I/O.
package confirm
