package store

import (
	"context"
	"database/sql"
)

// Tx is what a transaction offers: the records, blobs and counters of the
// store, read and written inside it. Everything written through a Tx is
// committed together or not at all.
type Tx interface {
	Records
	Blobs
	Counters
}

// Transactor runs work in one database transaction.
type Transactor interface {
	// WithTx runs fn in a new transaction and commits it when fn returns
	// nil; when fn returns an error or panics, the transaction is rolled
	// back and the error returned (or the panic continued). fn must do all
	// its database work through tx (and the driver transaction it offers,
	// below): on the embedded store, a write through the Store itself would
	// wait for the one connection fn's transaction holds. WithTx does not
	// retry: fn may have effects outside the database.
	//
	// Work of another library that must commit with the records, such as a
	// River job inserted with InsertTx, reaches the driver's transaction
	// through tx: on store/sqlite tx implements SQLTx (a *sql.Tx); on
	// store/pg it implements pg.PgxTx (a pgx.Tx).
	WithTx(ctx context.Context, fn func(tx Tx) error) error
}

// SQLDB is implemented by stores built on database/sql (store/sqlite): the
// handle every write goes through, for building a River client
// (riversqlite.New) that shares the store's database and transactions.
type SQLDB interface {
	SQLDB() *sql.DB
}

// SQLTx is implemented by the Tx of stores built on database/sql
// (store/sqlite): the transaction itself, for River's InsertTx and
// JobCompleteTx.
type SQLTx interface {
	SQLTx() *sql.Tx
}
