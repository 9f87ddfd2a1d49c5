// Package storetest is the behavioural conformance suite of store.Store:
// every implementation (the embedded SQLite store, the PostgreSQL store)
// runs Run against a fresh, empty store and must pass it unchanged.
//
// Entry point: Run(t, open), where open returns an empty store whose clock
// is the given function.
package storetest
