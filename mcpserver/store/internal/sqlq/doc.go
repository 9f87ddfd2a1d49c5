// Package sqlq is what both stores (store/sqlite, store/pg) do, written
// once, so that each keeps only what is really its own:
//   - Ops implements store.Records, store.Blobs and store.Counters over a
//     Conn (a store's pools, or one transaction); a listing's SQL
//     (store.Query: the filters, the keyset after a cursor and the order) is
//     written by List.
//   - Store adds store.Identity, store.Secrets, store.Keys and the ledger's
//     read (ConsumedNonce), on a store's pools; AuthenticateHash lets a
//     store decide what an authentication's outcome means to it.
//
// A Dialect supplies the few expressions in which SQLite and PostgreSQL
// differ (reading a typed JSON field, prefix and substring matches, the
// greater of two values). A Conn says how a statement reaches the driver
// (database/sql or pgx), whether it is sent again after its connection
// failed (Mode), which statements are prepared (Fixed), and how a
// transaction holds a lock (Locked: SQLite's one write lock, PostgreSQL's
// advisory locks). What stays with each store: SQLite's two pools, prepared
// statements and BEGIN IMMEDIATE; PostgreSQL's retries on dead connections,
// advisory locks, the ledger's commit while the caller waits, the
// timeouts of the confirmation path and the authentication grace during
// outages; each one's schema, and how it records a nonce.
package sqlq
