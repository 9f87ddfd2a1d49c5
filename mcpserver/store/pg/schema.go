package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations is the versioned schema: migrations[i] brings the database from
// version i to version i+1. Versions are recorded in schema_migrations.
// Released migrations are never edited, only appended to.
//
// The tables mirror the embedded store's (same names, same columns, BIGINT
// Unix milliseconds for times, TEXT for record data so that it is served
// byte for byte as stored) with BYTEA for bytes, and:
//   - COLLATE "C" on text, so that ordering and LIKE prefixes compare bytes as
//     SQLite does (and prefix matches can use the primary key);
//   - a partial unique index allowing one active signing key per purpose
//     (the first key is created, and keys rotated, under an advisory lock;
//     the index guards what the lock serialises);
//   - an index on the ledger's consumption time for the purge.
var migrations = [][]string{
	// Version 1: the embedded store's tables.
	{
		`CREATE TABLE organizations (
			id   TEXT COLLATE "C" PRIMARY KEY,
			name TEXT COLLATE "C" NOT NULL
		)`,
		`CREATE TABLE people (
			id              TEXT COLLATE "C" PRIMARY KEY,
			organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations(id),
			name            TEXT COLLATE "C" NOT NULL,
			email           TEXT COLLATE "C" NOT NULL
		)`,
		`CREATE TABLE workspaces (
			id              TEXT COLLATE "C" PRIMARY KEY,
			organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations(id),
			name            TEXT COLLATE "C" NOT NULL,
			slug            TEXT COLLATE "C" NOT NULL
		)`,
		`CREATE TABLE memberships (
			workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
			person_id    TEXT COLLATE "C" NOT NULL REFERENCES people(id),
			role         TEXT COLLATE "C" NOT NULL,
			PRIMARY KEY (workspace_id, person_id)
		)`,
		`CREATE TABLE tokens (
			id           TEXT COLLATE "C" PRIMARY KEY,
			hash         TEXT COLLATE "C" NOT NULL UNIQUE,
			person_id    TEXT COLLATE "C" NOT NULL REFERENCES people(id),
			workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
			scopes       TEXT COLLATE "C" NOT NULL,
			label        TEXT COLLATE "C" NOT NULL,
			created_at   BIGINT NOT NULL,
			expires_at   BIGINT NOT NULL,
			revoked_at   BIGINT NOT NULL
		)`,
		`CREATE TABLE records (
			workspace_id TEXT COLLATE "C" NOT NULL,
			kind         TEXT COLLATE "C" NOT NULL,
			id           TEXT COLLATE "C" NOT NULL,
			parent_id    TEXT COLLATE "C" NOT NULL,
			status       TEXT COLLATE "C" NOT NULL,
			created_at   BIGINT NOT NULL,
			data         TEXT NOT NULL,
			PRIMARY KEY (workspace_id, kind, id)
		)`,
		`CREATE INDEX records_recent ON records (workspace_id, kind, created_at, id)`,
		`CREATE TABLE blobs (
			workspace_id TEXT COLLATE "C" NOT NULL,
			id           TEXT COLLATE "C" NOT NULL,
			content      BYTEA NOT NULL,
			PRIMARY KEY (workspace_id, id)
		)`,
		`CREATE TABLE secrets (
			workspace_id TEXT COLLATE "C" NOT NULL,
			name         TEXT COLLATE "C" NOT NULL,
			sealed       BYTEA NOT NULL,
			updated_at   BIGINT NOT NULL,
			PRIMARY KEY (workspace_id, name)
		)`,
		`CREATE TABLE signing_keys (
			id         TEXT COLLATE "C" PRIMARY KEY,
			purpose    TEXT COLLATE "C" NOT NULL,
			secret     BYTEA NOT NULL,
			created_at BIGINT NOT NULL,
			retired_at BIGINT NOT NULL
		)`,
		`CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (purpose) WHERE retired_at = 0`,
		`CREATE TABLE confirmation_ledger (
			nonce       TEXT COLLATE "C" PRIMARY KEY,
			consumed_at BIGINT NOT NULL,
			expires_at  BIGINT NOT NULL
		)`,
		`CREATE INDEX confirmation_ledger_consumed ON confirmation_ledger (consumed_at)`,
	},
	// Version 2: counters that hand out unique numbers across replicas
	// (Store.NextNumber).
	{
		`CREATE TABLE counters (
			workspace_id TEXT COLLATE "C" NOT NULL,
			name         TEXT COLLATE "C" NOT NULL,
			value        BIGINT NOT NULL,
			PRIMARY KEY (workspace_id, name)
		)`,
	},
	// Version 3: the parent and status filters of a listing, answered from
	// an index in listing order (ties by id included).
	{
		`CREATE INDEX records_parent ON records (workspace_id, kind, parent_id, created_at, id)`,
		`CREATE INDEX records_status ON records (workspace_id, kind, status, created_at, id)`,
	},
	// Version 4: the OAuth authorization server and the access list
	// (store.OAuth, store.AccessList): when each token or grant was last
	// used, the clients, grants, their codes and tokens (by the hash of
	// their signature, never the value) and the one-time sign-in codes.
	{
		`CREATE TABLE access_use (
			id           TEXT COLLATE "C" PRIMARY KEY,
			last_used_at BIGINT NOT NULL
		)`,
		`CREATE TABLE oauth_clients (
			id         TEXT COLLATE "C" PRIMARY KEY,
			name       TEXT COLLATE "C" NOT NULL,
			kind       TEXT COLLATE "C" NOT NULL,
			metadata   TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			expires_at BIGINT NOT NULL
		)`,
		`CREATE INDEX oauth_clients_created ON oauth_clients (kind, created_at)`,
		`CREATE TABLE oauth_grants (
			id           TEXT COLLATE "C" PRIMARY KEY,
			client_id    TEXT COLLATE "C" NOT NULL,
			person_id    TEXT COLLATE "C" NOT NULL REFERENCES people(id),
			workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
			scopes       TEXT COLLATE "C" NOT NULL,
			resource     TEXT COLLATE "C" NOT NULL,
			created_at   BIGINT NOT NULL,
			expires_at   BIGINT NOT NULL,
			revoked_at   BIGINT NOT NULL
		)`,
		`CREATE INDEX oauth_grants_person ON oauth_grants (person_id, workspace_id)`,
		`CREATE TABLE oauth_tokens (
			kind       TEXT COLLATE "C" NOT NULL,
			hash       TEXT COLLATE "C" NOT NULL,
			grant_id   TEXT COLLATE "C" NOT NULL,
			data       TEXT NOT NULL,
			expires_at BIGINT NOT NULL,
			used_at    BIGINT NOT NULL,
			PRIMARY KEY (kind, hash)
		)`,
		`CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id, kind)`,
		`CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at)`,
		`CREATE TABLE signin_codes (
			hash         TEXT COLLATE "C" PRIMARY KEY,
			person_id    TEXT COLLATE "C" NOT NULL REFERENCES people(id),
			workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id),
			created_at   BIGINT NOT NULL,
			expires_at   BIGINT NOT NULL,
			used_at      BIGINT NOT NULL
		)`,
	},
	// Version 5: the console's passkeys (store.Passkeys): each person's
	// WebAuthn credentials, by credential id.
	{
		`CREATE TABLE passkeys (
			id           TEXT COLLATE "C" PRIMARY KEY,
			person_id    TEXT COLLATE "C" NOT NULL REFERENCES people(id),
			workspace_id TEXT COLLATE "C" NOT NULL,
			name         TEXT NOT NULL,
			credential   TEXT NOT NULL,
			created_at   BIGINT NOT NULL,
			last_used_at BIGINT NOT NULL
		)`,
		`CREATE INDEX passkeys_person ON passkeys (person_id, created_at)`,
	},
}

// migrationLock is the advisory-lock key that serialises migrations of one
// database ("kobana-m" as a 64-bit integer), so that replicas starting at
// once apply each migration exactly once.
const migrationLock int64 = 0x6b6f62616e612d6d

// migrate brings the schema of the pool's database (its search_path's first
// schema) up to len(steps), in one transaction under the advisory lock. A
// database already at a later version (a newer replica migrated it during a
// rolling upgrade) is accepted as is: migrations only ever add.
func migrate(ctx context.Context, pool *pgxpool.Pool, steps [][]string) (int, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return 0, fmt.Errorf("pg: migrate: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return 0, fmt.Errorf("pg: migrate: taking the migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`); err != nil {
		return 0, fmt.Errorf("pg: migrate: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return 0, fmt.Errorf("pg: migrate: reading the schema version: %w", err)
	}
	applied := 0
	for v := current; v < len(steps); v++ {
		for _, stmt := range steps[v] {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return 0, fmt.Errorf("pg: migrate to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, v+1); err != nil {
			return 0, fmt.Errorf("pg: migrate to version %d: %w", v+1, err)
		}
		applied++
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("pg: migrate: %w", err)
	}
	return applied, nil
}
