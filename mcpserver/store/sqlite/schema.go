package sqlite

// schema is the DDL of the embedded store, applied in order at every Open.
// Every statement is idempotent (IF NOT EXISTS), so a file created by an
// earlier version is brought up to date by the statements appended since:
// statements are only ever appended, never edited. Column types are chosen so
// that the PostgreSQL schema differs only in BLOB → BYTEA.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS organizations (
		id   TEXT PRIMARY KEY,
		name TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS people (
		id              TEXT PRIMARY KEY,
		organization_id TEXT NOT NULL REFERENCES organizations(id),
		name            TEXT NOT NULL,
		email           TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS workspaces (
		id              TEXT PRIMARY KEY,
		organization_id TEXT NOT NULL REFERENCES organizations(id),
		name            TEXT NOT NULL,
		slug            TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS memberships (
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		person_id    TEXT NOT NULL REFERENCES people(id),
		role         TEXT NOT NULL,
		PRIMARY KEY (workspace_id, person_id)
	)`,
	`CREATE TABLE IF NOT EXISTS tokens (
		id           TEXT PRIMARY KEY,
		hash         TEXT NOT NULL UNIQUE,
		person_id    TEXT NOT NULL REFERENCES people(id),
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		scopes       TEXT NOT NULL,
		label        TEXT NOT NULL,
		created_at   BIGINT NOT NULL,
		expires_at   BIGINT NOT NULL,
		revoked_at   BIGINT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS records (
		workspace_id TEXT NOT NULL,
		kind         TEXT NOT NULL,
		id           TEXT NOT NULL,
		parent_id    TEXT NOT NULL,
		status       TEXT NOT NULL,
		created_at   BIGINT NOT NULL,
		data         TEXT NOT NULL,
		PRIMARY KEY (workspace_id, kind, id)
	)`,
	`CREATE INDEX IF NOT EXISTS records_recent ON records (workspace_id, kind, created_at)`,
	`CREATE TABLE IF NOT EXISTS blobs (
		workspace_id TEXT NOT NULL,
		id           TEXT NOT NULL,
		content      BLOB NOT NULL,
		PRIMARY KEY (workspace_id, id)
	)`,
	`CREATE TABLE IF NOT EXISTS secrets (
		workspace_id TEXT NOT NULL,
		name         TEXT NOT NULL,
		sealed       BLOB NOT NULL,
		updated_at   BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, name)
	)`,
	`CREATE TABLE IF NOT EXISTS signing_keys (
		id         TEXT PRIMARY KEY,
		purpose    TEXT NOT NULL,
		secret     BLOB NOT NULL,
		created_at BIGINT NOT NULL,
		retired_at BIGINT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS confirmation_ledger (
		nonce       TEXT PRIMARY KEY,
		consumed_at BIGINT NOT NULL,
		expires_at  BIGINT NOT NULL
	)`,
	// Appended for Counters.NextNumber: a file created before it gets the
	// table at its next Open.
	`CREATE TABLE IF NOT EXISTS counters (
		workspace_id TEXT NOT NULL,
		name         TEXT NOT NULL,
		value        BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, name)
	)`,
	// Appended for keyset listings (store.Query): the default order, and
	// the parent and status filters with it, are answered from an index in
	// listing order (ties by id included), never by a sort of the kind.
	`CREATE INDEX IF NOT EXISTS records_recent_id ON records (workspace_id, kind, created_at, id)`,
	`CREATE INDEX IF NOT EXISTS records_parent ON records (workspace_id, kind, parent_id, created_at, id)`,
	`CREATE INDEX IF NOT EXISTS records_status ON records (workspace_id, kind, status, created_at, id)`,
	// Appended for the OAuth authorization server and the access list
	// (store.OAuth, store.AccessList): when each token or grant was last
	// used, the clients, grants, their codes and tokens (by the hash of
	// their signature, never the value) and the one-time sign-in codes.
	`CREATE TABLE IF NOT EXISTS access_use (
		id           TEXT PRIMARY KEY,
		last_used_at BIGINT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS oauth_clients (
		id         TEXT PRIMARY KEY,
		name       TEXT NOT NULL,
		kind       TEXT NOT NULL,
		metadata   TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		expires_at BIGINT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS oauth_clients_created ON oauth_clients (kind, created_at)`,
	`CREATE TABLE IF NOT EXISTS oauth_grants (
		id           TEXT PRIMARY KEY,
		client_id    TEXT NOT NULL,
		person_id    TEXT NOT NULL REFERENCES people(id),
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		scopes       TEXT NOT NULL,
		resource     TEXT NOT NULL,
		created_at   BIGINT NOT NULL,
		expires_at   BIGINT NOT NULL,
		revoked_at   BIGINT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS oauth_grants_person ON oauth_grants (person_id, workspace_id)`,
	`CREATE TABLE IF NOT EXISTS oauth_tokens (
		kind       TEXT NOT NULL,
		hash       TEXT NOT NULL,
		grant_id   TEXT NOT NULL,
		data       TEXT NOT NULL,
		expires_at BIGINT NOT NULL,
		used_at    BIGINT NOT NULL,
		PRIMARY KEY (kind, hash)
	)`,
	`CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens (grant_id, kind)`,
	`CREATE INDEX IF NOT EXISTS oauth_tokens_expiry ON oauth_tokens (expires_at)`,
	`CREATE TABLE IF NOT EXISTS signin_codes (
		hash         TEXT PRIMARY KEY,
		person_id    TEXT NOT NULL REFERENCES people(id),
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		created_at   BIGINT NOT NULL,
		expires_at   BIGINT NOT NULL,
		used_at      BIGINT NOT NULL
	)`,
	// Appended for the console's passkeys (store.Passkeys): each person's
	// WebAuthn credentials, by credential id.
	`CREATE TABLE IF NOT EXISTS passkeys (
		id           TEXT PRIMARY KEY,
		person_id    TEXT NOT NULL REFERENCES people(id),
		workspace_id TEXT NOT NULL,
		name         TEXT NOT NULL,
		credential   TEXT NOT NULL,
		created_at   BIGINT NOT NULL,
		last_used_at BIGINT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS passkeys_person ON passkeys (person_id, created_at)`,
}
