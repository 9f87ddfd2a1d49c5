// Package store is the persistence layer of the MCP server and the Inbox
// pipeline: the interfaces they read and write through, the errors callers
// branch on, and every piece of logic the implementations share, so that
// they differ only in SQL. It imports no database driver: the embedded
// default is package store/sqlite (one SQLite file, pure Go), the shared one
// for replicas is package store/pg (PostgreSQL), and package store/storetest
// is the conformance suite both pass.
//
// Entry points:
//   - Store, the union of every interface below, returned by sqlite.Open and
//     pg.Open with the same Options.
//   - Records and Blobs: the products' documents (typed by the product, kept
//     as JSON, byte for byte) and raw bytes such as .eml files.
//   - Identity: organizations, people, workspaces, memberships (roles) and
//     hashed access tokens (CreateToken, Authenticate).
//   - Secrets: workspace secrets, sealed at rest by Sealer (AES-256-GCM with
//     "workspace\x00name" as additional data); a value sealed by one
//     implementation opens in the other under the same key.
//   - Keys: HMAC signing keys with rotation (confirmations, download URLs).
//   - Ledger: single-use nonces (Consume), the confirmation ledger.
//   - Counters: per-workspace numbers (invoice, NF-e) unique across every
//     handle on the database (NextNumber).
//
// Shared semantics: listings are ordered most recent first with ties broken
// by id, both compared bytewise; id prefixes match bytewise (case matters);
// times are kept in Unix milliseconds (Millis, FromMillis); a listing
// returns DefaultLimit records unless asked, never more than MaxLimit.
// Errors wrap ErrNotFound, ErrConflict, ErrReplayed and ErrUnsealable, and
// start with the implementation's name ("sqlite: …", "pg: …") so that a log
// tells the databases apart.
package store
