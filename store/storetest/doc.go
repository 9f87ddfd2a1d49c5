// Package storetest is the conformance suite of package store: Run
// exercises every method of the store interfaces (Records, Blobs, Identity,
// Secrets, Keys, Ledger, Counters) against its documented contract,
// including what must hold when several handles share one database, as
// server replicas do.
//
// Each implementation runs it from its own tests:
//
//	storetest.Run(t, func(t *testing.T, name string, opts store.Options) store.Store {
//		… open a handle on the database called name (empty on first use) …
//	})
//
// The embedded store runs it in package store/sqlite's tests, the PostgreSQL
// store in package store/pg's (when KOBANA_TEST_POSTGRES names a database).
package storetest
