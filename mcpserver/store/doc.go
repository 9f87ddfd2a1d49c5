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
// Listings (Query, Records.ListPage):
//   - Query.Where filters run in the database over every record of the
//     kind: Eq, In, HasPrefix, Contains (case-insensitive), Less/Greater(…
//     OrEqual), Exists, Missing, Any, Not, on typed fields of the JSON Data
//     (TextField, NumberField, TimeField, dotted paths) or on the columns
//     (IDField, ParentField, StatusField, CreatedField). A record lacking a
//     field, or holding another JSON type there, has no value for it.
//   - Query.Order sorts by any such field, descending unless Asc, ties by
//     creation time then id; records without a value come last. The
//     default is most recent first.
//   - ListPage returns Page{Records, Next}; Next is an opaque keyset cursor
//     for Query.After (no offsets: inserts and deletes between calls never
//     shift or repeat later pages, ties are never skipped). A cursor is
//     validated, not secret: anything but the Next of the same workspace,
//     kind, filters and order is an error wrapping ErrInvalidCursor; a
//     query that cannot run wraps ErrInvalidQuery. Clients should treat it
//     as an opaque string.
//   - Repo[T] is the typed repository over Records: Get, Put, Create,
//     Delete, List (a page of T), Each and All, with errors (*RecordError)
//     that name the kind and id and wrap ErrNotFound or ErrConflict; In
//     moves it into a transaction.
//
// Transactions (Transactor, Tx): Store.WithTx(ctx, fn) runs fn in one
// transaction, committed when fn returns nil and rolled back when it fails
// or panics; never retried. Tx offers Records, Blobs and Counters. Work of
// another library that must commit with the records reaches the driver's
// transaction through the Tx, and the driver's handle through the Store:
//   - store/sqlite: tx.(SQLTx).SQLTx() is the *sql.Tx, st.(SQLDB).SQLDB()
//     the *sql.DB every write goes through (one connection, WAL, busy
//     timeout, BEGIN IMMEDIATE) — build River's riversqlite driver on it, so
//     the store, River and their shared transactions queue for one
//     connection instead of failing with SQLITE_BUSY. Inside fn use tx only:
//     a write through the Store would wait for the connection fn holds.
//   - store/pg: tx.(pg.PgxTxer).PgxTx() is the pgx.Tx (River's riverpgxv5,
//     large objects), (*pg.Store).PgxPool() the pool.
//
// For a River job enqueued with its records:
//
//	err := st.WithTx(ctx, func(tx store.Tx) error {
//		if err := tx.CreateRecord(ctx, email); err != nil {
//			return err
//		}
//		_, err := client.InsertTx(ctx, tx.(store.SQLTx).SQLTx(), AgentArgs{Email: email.ID}, nil)
//		return err
//	})
//
// Shared semantics: listings are ordered most recent first with ties broken
// by id, both compared bytewise; id prefixes match bytewise (case matters);
// times are kept in Unix milliseconds (Millis, FromMillis); a listing
// returns DefaultLimit records unless asked, never more than MaxLimit.
// Errors wrap ErrNotFound, ErrConflict, ErrReplayed and ErrUnsealable, and
// start with the implementation's name ("sqlite: …", "pg: …") so that a log
// tells the databases apart.
package store
