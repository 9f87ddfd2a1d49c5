// Package integration holds tests that cross packages: the MCP server with
// both products on several replicas sharing one PostgreSQL database, the
// store with a River queue in one transaction, and the benchmarks that put
// the embedded store and PostgreSQL side by side behind the whole server.
// They live here so that no library package depends upward, not even in its
// tests. The package has no code of its own.
//
// PostgreSQL tests skip, saying so, unless KOBANA_TEST_POSTGRES names a
// database (`source .ci/postgres` starts a throwaway cluster and sets it).
package integration
