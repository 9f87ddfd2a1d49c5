// Package pg is the PostgreSQL implementation of package store's
// interfaces, for running several `kobana serve` replicas
// behind a load balancer on one shared database: records, blobs, identities
// and hashed tokens, encrypted secrets, signing keys and the confirmation
// ledger all live in it, so a confirmation asked by one replica is answered
// by another, and is single-use across all of them.
//
// Entry points:
//   - Open(ctx, dsn, Options) (*Store, error) connects (pgx pool), migrates
//     the schema and starts the ledger purge; Store implements store.Store.
//   - Store.WithTx runs work in one transaction (store.Transactor); its
//     *Tx offers the pgx.Tx (PgxTx, interface PgxTxer) for River's
//     riverpgxv5 InsertTx and large objects, and Store.PgxPool the pool
//     for building a River client on the same database.
//   - Store.PurgeLedger deletes expired ledger entries on demand.
//   - Store.NextNumber (store.Counters) hands out per-workspace numbers
//     (invoice, NF-e) that are unique across replicas, where a product's
//     in-process lock would not span them.
//
// Semantics are package store's, shared with the embedded store: the
// statements are written once for both (package store/internal/sqlq, over
// this package's connection with its retries), and package storetest
// checks both against the same suite: listings most recent first
// with ties by id, bytewise; ErrNotFound, ErrConflict and ErrReplayed as
// documented; times in Unix milliseconds; secrets sealed by store.Sealer, so
// a value sealed by either store opens in the other under the same key;
// record data kept byte for byte. Errors start with "pg: ".
//
// Replicas:
//   - Listings (store.Query) parse a record's Data once per row
//     (data::jsonb) when they filter or order on its fields; text compares
//     under COLLATE "C", and Contains lowers under a collation that folds
//     every letter (und-x-icu, else C.utf8) when the server has one.
//   - Migrations are versioned (table schema_migrations) and run in one
//     transaction under an advisory lock, so replicas may start together.
//   - Consume is one INSERT … ON CONFLICT DO NOTHING: the row count says who
//     won. It is bounded by Options.LedgerTimeout, so an unreachable or stuck
//     database makes a destructive call answer confirmation_unavailable
//     quickly instead of hanging, and it commits only while the caller still
//     waits, so an abandoned insert is never recorded later; the pool
//     reconnects by itself.
//   - Consumed nonces are purged by a background loop in bounded batches that
//     skip locked rows (FOR UPDATE SKIP LOCKED), by the database's clock.
//   - One active signing key per purpose (a partial unique index): the first
//     key is created by whichever replica gets there first, and RotateKey
//     retires it (it still verifies until PruneKeys), both under an
//     advisory lock per purpose; SigningKey and VerifyingKey are bounded by
//     Options.LedgerTimeout.
//   - A statement whose connection turns out dead (backends terminated, a
//     server restart) is sent again when that cannot apply it twice, on a
//     connection that is not dead: once a death is seen, every connection
//     idle since before it is pinged before its next use, and retries are
//     bounded by the pool's size plus one.
//   - While the database is unreachable, tokens authenticated shortly before
//     are still recognised (Options.AuthGrace), so that callers get the
//     answer that matters instead of an authentication failure.
//
// The schema is created in the connection's current schema (the first of its
// search_path), so one database can hold several independent stores.
package pg
