// Package sqlite is the embedded implementation of package store's
// interfaces: one SQLite file (modernc.org/sqlite, pure Go, no server to
// install), for one machine. It is the only package besides the commands
// that links the SQLite driver; everything else reaches it through store.
//
// Entry points: Open(ctx, path, store.Options) (*Store, error) creates the
// file if needed and brings its schema up to date; *Store implements
// store.Store. Store.WithTx runs work in one transaction whose *Tx offers
// the *sql.Tx (SQLTx); Store.SQLDB is the handle to build River's
// riversqlite driver on, so that records and jobs share transactions.
//
// Every write and transaction goes through one connection (the writer
// pool), which River's advice for SQLite asks for and which makes
// concurrent writers in the process queue instead of failing with
// SQLITE_BUSY; reads go through a small pool of read-only connections that
// WAL lets run beside the writer. Inside a WithTx function use only its
// Tx: a write through the Store would wait for the connection the
// transaction holds.
//
// The file is opened in WAL mode with a busy timeout, so several handles and
// processes may share it; writers take the database's write lock when their
// transaction begins (BEGIN IMMEDIATE), so concurrent writers queue instead
// of failing; that lock is also what serialises the creation and rotation
// of signing keys. Semantics are package store's: the statements are
// written once for both stores (package store/internal/sqlq, over this
// package's connection, which prepares the reads of every request), and
// package storetest checks them against the same suite as the PostgreSQL
// store.
//
// Every connection keeps the statements it has compiled (up to 256, least
// recently used out first), so a query run again — the store's, or River's
// on the shared writer — skips SQLite's compiler; the driver would otherwise
// compile every query database/sql hands it with arguments.
package sqlite
