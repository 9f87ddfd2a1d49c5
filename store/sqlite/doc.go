// Package sqlite is the embedded implementation of package store's
// interfaces: one SQLite file (modernc.org/sqlite, pure Go, no server to
// install), for one machine. It is the only package besides the commands
// that links the SQLite driver; everything else reaches it through store.
//
// Entry point: Open(ctx, path, store.Options) (*Store, error) creates the
// file if needed and brings its schema up to date; *Store implements
// store.Store.
//
// The file is opened in WAL mode with a busy timeout, so several handles and
// processes may share it; writers take the database's write lock when their
// transaction begins (BEGIN IMMEDIATE), so concurrent writers queue instead
// of failing. Semantics are package store's; package storetest checks them
// against the same suite as the PostgreSQL store.
package sqlite
