// Package move moves an embedded store to PostgreSQL with its history:
// every row of every table of the store (records, identities, tokens as
// their hashes, sealed secrets as sealed, signing keys, the ledger,
// counters, OAuth), every raw message (into large objects) and every job
// not finished, in one transaction of the target; then it checks the copy:
// the rows counted on both sides, each message read back with its digest,
// the jobs counted, the secrets opened.
//
// Entry point: Move, with Options naming the source (a stopped embedded
// store and its messages) and the target (an empty PostgreSQL store).
// Report says what was moved. The tables are found in the source's schema
// and must all exist, with their columns, in the target's, so a table a
// later version adds is moved without a change here.
package move
