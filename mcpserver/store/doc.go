// Package store is the persistence layer of the MCP server: the interfaces the
// framework and the products read and write through, and Open, the embedded
// default implementation (one SQLite file, pure Go, no server to install).
//
// Entry points:
//   - Store, the union of every interface below, returned by Open.
//   - Records and Blobs: the products' documents (typed by the product, kept as
//     JSON) and raw bytes such as .eml files.
//   - Identity: organizations, people, workspaces, memberships (roles) and
//     hashed access tokens (CreateToken, Authenticate).
//   - Secrets: workspace secrets, encrypted at rest; listing returns names only.
//   - Keys: HMAC signing keys with rotation (confirmations, download URLs).
//   - Ledger: single-use nonces (Consume), the confirmation ledger.
//   - Counters: per-workspace numbers (invoice, NF-e) unique across every
//     handle on the database (NextNumber).
//
// The PostgreSQL implementation (package store/pg) has statements and a
// schema of its own with the same semantics: listings ordered bytewise, id
// prefixes matched bytewise (here as a byte range, which also uses the
// primary key). Package mcpserver/storetest is the conformance
// suite every implementation runs.
package store
