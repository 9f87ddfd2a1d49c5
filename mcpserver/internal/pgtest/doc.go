// Package pgtest gives tests a PostgreSQL database to work on: the server
// named by KOBANA_TEST_POSTGRES (tests skip, saying so, when it is unset;
// `source .ci/postgres` starts a throwaway cluster and sets it), a fresh
// schema per test (FreshSchema, SchemaDSN, SchemaURL), an administrative
// pool (Admin), connection strings (DSN) and a TCP Proxy a test can cut to
// play a network or server outage.
//
// It is for tests only: every test that needs PostgreSQL imports it (store/pg,
// the mail store, the queue, kobana serve, the cross-package tests in
// package integration), so that they skip and isolate themselves alike.
package pgtest
