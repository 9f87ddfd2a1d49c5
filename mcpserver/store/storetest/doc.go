// Package storetest is the conformance suite of package store: Run
// exercises every method of the store interfaces (Records, Blobs, Identity,
// Secrets, Keys, Ledger, Counters) against its documented contract,
// including what must hold when several handles share one database, as
// server replicas do, and that every error names the implementation.
// Benchmark measures the reads on the path of every request, by the same
// code for every implementation.
//
// Each implementation runs both from its own tests:
//
//	open := func(t testing.TB, name string, opts store.Options) store.Store {
//		… open a handle on the database called name (empty on first use) …
//	}
//	func TestConformance(t *testing.T) { storetest.Run(t, "sqlite", open) }
//	func BenchmarkStore(b *testing.B)  { storetest.Benchmark(b, open) }
//
// The embedded store runs it in package store/sqlite's tests, the PostgreSQL
// store in package store/pg's (when KOBANA_TEST_POSTGRES names a database).
package storetest
