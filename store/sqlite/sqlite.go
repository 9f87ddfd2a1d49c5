package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the embedded, pure-Go database driver

	"github.com/kobana/workflow/store"
)

// Store is the embedded implementation of store.Store: one SQLite file
// through database/sql and the pure-Go modernc driver.
//
// It keeps two pools on the file: a writer with one connection, which every
// write and transaction takes in turn (SQLite admits one writer at a time;
// queuing in the pool instead of on the file's lock is what keeps a River
// client on the same handle free of SQLITE_BUSY), and readers, which WAL
// lets run beside the writer.
type Store struct {
	ops
	write, read *sql.DB
	now         func() time.Time
	sealer      *store.Sealer
	// Statements on the hot path of every request, prepared once: the
	// token lookup, and the Ops' fixed reads.
	authStmt *sql.Stmt
	prepared map[string]*sql.Stmt
}

// readers is the number of connections of the reader pool.
const readers = 4

const (
	authQuery = `SELECT t.id, t.person_id, p.name, w.organization_id, t.workspace_id, m.role, t.scopes, t.expires_at, t.revoked_at
		FROM tokens t
		JOIN people p ON p.id = t.person_id
		JOIN workspaces w ON w.id = t.workspace_id
		JOIN memberships m ON m.workspace_id = t.workspace_id AND m.person_id = t.person_id
		WHERE t.hash = $1`
)

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store in the SQLite file at path and
// brings its schema up to date.
func Open(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	dsn := func(pragmas ...string) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "foreign_keys(1)")
		for _, p := range pragmas {
			q.Add("_pragma", p)
		}
		// BEGIN IMMEDIATE: a transaction takes the write lock when it
		// starts, so it waits for another writer (busy_timeout) instead of
		// failing when it first writes after reading.
		q.Set("_txlock", "immediate")
		return "file:" + path + "?" + q.Encode()
	}
	// synchronous(FULL): a commit is on disk when it returns (WAL mode with
	// NORMAL survives a crashed process but not a power cut), because a
	// commit is what the mail intake's "250 OK" promises.
	write, err := sql.Open("sqlite", dsn("journal_mode(WAL)", "synchronous(FULL)"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	// The connection stays open: a new one would re-read the schema.
	write.SetConnMaxIdleTime(0)
	write.SetMaxIdleConns(1)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: migrate %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	s := &Store{write: write, read: read, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	fail := func(err error) (*Store, error) {
		s.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if s.authStmt, err = read.PrepareContext(ctx, authQuery); err != nil {
		return fail(fmt.Errorf("prepare: %w", err))
	}
	if s.prepared, err = prepare(ctx, read); err != nil {
		return fail(fmt.Errorf("prepare: %w", err))
	}
	s.ops = newOps(conn{read: read, write: write, prepared: s.prepared}, s.now)
	if s.sealer, err = store.ResolveSecretKey(opts, func() (store.Key, error) { return s.SigningKey(ctx, store.SecretsKeyPurpose) }); err != nil {
		return fail(err)
	}
	return s, nil
}

// migrate brings the schema up to date in one write transaction. Several
// handles or processes opening a new file at once race to switch it to WAL
// and create the tables; SQLite answers the loser SQLITE_BUSY at once, without
// consulting busy_timeout, while the journal mode changes. Those answers are
// retried for as long as busy_timeout would have waited.
func migrate(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := migrateOnce(ctx, db)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

func migrateOnce(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return err
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code()&0xff == 5 // SQLITE_BUSY and its extended codes
	}
	return false
}

// Close closes the database.
func (s *Store) Close() error {
	if s.authStmt != nil {
		s.authStmt.Close()
	}
	closeAll(s.prepared)
	return errors.Join(s.read.Close(), s.write.Close())
}

// ---- Identity ----

// PutOrganization implements Identity.
func (s *Store) PutOrganization(ctx context.Context, o store.Organization) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO organizations (id, name) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name`, o.ID, o.Name)
	if err != nil {
		return fmt.Errorf("sqlite: put organization %s: %w", o.ID, err)
	}
	return nil
}

// PutPerson implements Identity.
func (s *Store) PutPerson(ctx context.Context, p store.Person) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO people (id, organization_id, name, email) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name, email = excluded.email`,
		p.ID, p.Organization, p.Name, p.Email)
	if err != nil {
		return fmt.Errorf("sqlite: put person %s: %w", p.ID, err)
	}
	return nil
}

// PutWorkspace implements Identity.
func (s *Store) PutWorkspace(ctx context.Context, w store.Workspace) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO workspaces (id, organization_id, name, slug) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name, slug = excluded.slug`,
		w.ID, w.Organization, w.Name, w.Slug)
	if err != nil {
		return fmt.Errorf("sqlite: put workspace %s: %w", w.ID, err)
	}
	return nil
}

// WorkspaceBySlug returns the workspace with a slug (the label of its
// inboxes' mail addresses); ErrNotFound when none has it, ErrConflict when
// more than one does (mail cannot be routed to either).
func (s *Store) WorkspaceBySlug(ctx context.Context, slug string) (store.Workspace, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, organization_id, name FROM workspaces WHERE slug = $1 AND slug <> '' ORDER BY id LIMIT 2`, slug)
	if err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: workspace by slug %q: %w", slug, err)
	}
	defer rows.Close()
	var found []store.Workspace
	for rows.Next() {
		w := store.Workspace{Slug: slug}
		if err := rows.Scan(&w.ID, &w.Organization, &w.Name); err != nil {
			return store.Workspace{}, fmt.Errorf("sqlite: workspace by slug %q: %w", slug, err)
		}
		found = append(found, w)
	}
	if err := rows.Err(); err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: workspace by slug %q: %w", slug, err)
	}
	switch len(found) {
	case 0:
		return store.Workspace{}, store.ErrNotFound
	case 1:
		return found[0], nil
	}
	return store.Workspace{}, fmt.Errorf("sqlite: workspaces %s and %s share the slug %q: %w", found[0].ID, found[1].ID, slug, store.ErrConflict)
}

// GetWorkspace implements Identity.
func (s *Store) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	w := store.Workspace{ID: id}
	err := s.read.QueryRowContext(ctx, `SELECT organization_id, name, slug FROM workspaces WHERE id = $1`, id).
		Scan(&w.Organization, &w.Name, &w.Slug)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Workspace{}, store.ErrNotFound
	}
	if err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: get workspace %s: %w", id, err)
	}
	return w, nil
}

// GetPerson implements Identity.
func (s *Store) GetPerson(ctx context.Context, id string) (store.Person, error) {
	p := store.Person{ID: id}
	err := s.read.QueryRowContext(ctx, `SELECT organization_id, name, email FROM people WHERE id = $1`, id).
		Scan(&p.Organization, &p.Name, &p.Email)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Person{}, store.ErrNotFound
	}
	if err != nil {
		return store.Person{}, fmt.Errorf("sqlite: get person %s: %w", id, err)
	}
	return p, nil
}

// SetMembership implements Identity.
func (s *Store) SetMembership(ctx context.Context, workspace, person string, role store.Role) error {
	if err := store.CheckMembership(ctx, s, workspace, person); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO memberships (workspace_id, person_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_id, person_id) DO UPDATE SET role = excluded.role`, workspace, person, string(role))
	if err != nil {
		return fmt.Errorf("sqlite: membership %s/%s: %w", workspace, person, err)
	}
	return nil
}

// CreateToken implements Identity.
func (s *Store) CreateToken(ctx context.Context, t store.NewToken) (string, error) {
	scopes, err := store.NormalizeScopes(t.Scopes)
	if err != nil {
		return "", fmt.Errorf("sqlite: create token: %w", err)
	}
	var role string
	err = s.read.QueryRowContext(ctx, `SELECT role FROM memberships WHERE workspace_id = $1 AND person_id = $2`, t.Workspace, t.Person).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("sqlite: create token: person %q is not a member of workspace %q", t.Person, t.Workspace)
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: create token: %w", err)
	}
	token, id := store.NewTokenValue()
	_, err = s.write.ExecContext(ctx, `INSERT INTO tokens (id, hash, person_id, workspace_id, scopes, label, created_at, expires_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0)`,
		id, store.HashToken(token), t.Person, t.Workspace, scopes, t.Label, store.Millis(s.now()), store.Millis(t.Expires))
	if err != nil {
		return "", fmt.Errorf("sqlite: create token: %w", err)
	}
	return token, nil
}

// Authenticate implements Identity.
func (s *Store) Authenticate(ctx context.Context, token string) (store.Principal, error) {
	var p store.Principal
	var scopes string
	var expires, revoked int64
	err := s.authStmt.QueryRowContext(ctx, store.HashToken(token)).
		Scan(&p.TokenID, &p.Person, &p.PersonName, &p.Organization, &p.Workspace, &p.Role, &scopes, &expires, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Principal{}, store.ErrNotFound
	}
	if err != nil {
		return store.Principal{}, fmt.Errorf("sqlite: authenticate: %w", err)
	}
	if revoked != 0 || (expires != 0 && s.now().UnixMilli() >= expires) {
		return store.Principal{}, store.ErrNotFound
	}
	p.Scopes = store.ParseScopes(scopes)
	p.Expires = store.FromMillis(expires)
	return p, nil
}

// RevokeToken implements Identity.
func (s *Store) RevokeToken(ctx context.Context, tokenID string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at = 0`, store.Millis(s.now()), tokenID)
	if err != nil {
		return fmt.Errorf("sqlite: revoke token %s: %w", tokenID, err)
	}
	return affected(res, "token "+tokenID)
}

// ---- Secrets ----

// SetSecret implements Secrets. The value is sealed with AES-256-GCM, the
// workspace and name bound as additional data.
func (s *Store) SetSecret(ctx context.Context, workspace, name, value string) error {
	sealed := s.sealer.Seal(workspace, name, value)
	_, err := s.write.ExecContext(ctx, `INSERT INTO secrets (workspace_id, name, sealed, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
		workspace, name, sealed, store.Millis(s.now()))
	if err != nil {
		return fmt.Errorf("sqlite: set secret %s: %w", name, err)
	}
	return nil
}

// ListSecrets implements Secrets.
func (s *Store) ListSecrets(ctx context.Context, workspace string) ([]store.SecretInfo, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT name, updated_at FROM secrets WHERE workspace_id = $1 ORDER BY name`, workspace)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list secrets: %w", err)
	}
	defer rows.Close()
	var out []store.SecretInfo
	for rows.Next() {
		var si store.SecretInfo
		var upd int64
		if err := rows.Scan(&si.Name, &upd); err != nil {
			return nil, fmt.Errorf("sqlite: list secrets: %w", err)
		}
		si.Updated = store.FromMillis(upd)
		out = append(out, si)
	}
	return out, rows.Err()
}

// DeleteSecret implements Secrets.
func (s *Store) DeleteSecret(ctx context.Context, workspace, name string) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM secrets WHERE workspace_id = $1 AND name = $2`, workspace, name)
	if err != nil {
		return fmt.Errorf("sqlite: delete secret %s: %w", name, err)
	}
	return affected(res, "secret "+name)
}

// RevealSecrets implements Secrets.
func (s *Store) RevealSecrets(ctx context.Context, workspace string) (map[string]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT name, sealed FROM secrets WHERE workspace_id = $1`, workspace)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reveal secrets: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name string
		var sealed []byte
		if err := rows.Scan(&name, &sealed); err != nil {
			return nil, fmt.Errorf("sqlite: reveal secrets: %w", err)
		}
		plain, err := s.sealer.Open(workspace, name, sealed)
		if err != nil {
			return nil, fmt.Errorf("sqlite: reveal secrets: %w", err)
		}
		out[name] = plain
	}
	return out, rows.Err()
}

// ---- Keys ----

// SigningKey implements Keys. The first key of a purpose is created in a
// transaction that takes the database's write lock before it looks again
// (BEGIN IMMEDIATE: Open sets _txlock), so handles and processes asking at
// once on one file all get the same key.
func (s *Store) SigningKey(ctx context.Context, purpose string) (store.Key, error) {
	k, err := activeKey(ctx, s.read, purpose)
	if !errors.Is(err, store.ErrNotFound) {
		return k, err
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return store.Key{}, fmt.Errorf("sqlite: signing key %s: %w", purpose, err)
	}
	defer tx.Rollback()
	k, err = activeKey(ctx, tx, purpose)
	if !errors.Is(err, store.ErrNotFound) {
		// Another handle created it while this one waited for the lock.
		return k, err
	}
	k = store.NewKey(purpose, s.now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO signing_keys (id, purpose, secret, created_at, retired_at) VALUES ($1, $2, $3, $4, 0)`,
		k.ID, purpose, k.Secret, store.Millis(k.Created)); err != nil {
		return store.Key{}, fmt.Errorf("sqlite: signing key %s: %w", purpose, err)
	}
	if err := tx.Commit(); err != nil {
		return store.Key{}, fmt.Errorf("sqlite: signing key %s: %w", purpose, err)
	}
	return k, nil
}

// queryRower is a *sql.DB or a *sql.Tx.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func activeKey(ctx context.Context, db queryRower, purpose string) (store.Key, error) {
	k := store.Key{Purpose: purpose}
	var created int64
	err := db.QueryRowContext(ctx, `SELECT id, secret, created_at FROM signing_keys WHERE purpose = $1 AND retired_at = 0
		ORDER BY created_at DESC, id DESC LIMIT 1`, purpose).Scan(&k.ID, &k.Secret, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Key{}, store.ErrNotFound
	}
	if err != nil {
		return store.Key{}, fmt.Errorf("sqlite: signing key %s: %w", purpose, err)
	}
	k.Created = store.FromMillis(created)
	return k, nil
}

// VerifyingKey implements Keys.
func (s *Store) VerifyingKey(ctx context.Context, purpose, id string) (store.Key, error) {
	k := store.Key{ID: id, Purpose: purpose}
	var created, retired int64
	err := s.read.QueryRowContext(ctx, `SELECT secret, created_at, retired_at FROM signing_keys WHERE purpose = $1 AND id = $2`, purpose, id).
		Scan(&k.Secret, &created, &retired)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Key{}, store.ErrNotFound
	}
	if err != nil {
		return store.Key{}, fmt.Errorf("sqlite: verifying key %s: %w", id, err)
	}
	k.Created, k.Retired = store.FromMillis(created), store.FromMillis(retired)
	return k, nil
}

// RotateKey implements Keys.
func (s *Store) RotateKey(ctx context.Context, purpose string) (store.Key, error) {
	k := store.NewKey(purpose, s.now())
	now := k.Created
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return store.Key{}, fmt.Errorf("sqlite: rotate key: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retired_at = $1 WHERE purpose = $2 AND retired_at = 0`, store.Millis(now), purpose); err != nil {
		return store.Key{}, fmt.Errorf("sqlite: rotate key: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO signing_keys (id, purpose, secret, created_at, retired_at) VALUES ($1, $2, $3, $4, 0)`,
		k.ID, purpose, k.Secret, store.Millis(now)); err != nil {
		return store.Key{}, fmt.Errorf("sqlite: rotate key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return store.Key{}, fmt.Errorf("sqlite: rotate key: %w", err)
	}
	return k, nil
}

// PruneKeys implements Keys.
func (s *Store) PruneKeys(ctx context.Context, purpose string, retiredBefore time.Time) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM signing_keys WHERE purpose = $1 AND retired_at <> 0 AND retired_at < $2`, purpose, store.Millis(retiredBefore))
	if err != nil {
		return fmt.Errorf("sqlite: prune keys: %w", err)
	}
	return nil
}

// ---- Ledger ----

// Consume implements Ledger: one INSERT whose uniqueness the database
// enforces, so two replicas sharing the database cannot both consume a nonce.
func (s *Store) Consume(ctx context.Context, nonce string, expires time.Time) error {
	now := s.now()
	res, err := s.write.ExecContext(ctx, `INSERT INTO confirmation_ledger (nonce, consumed_at, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (nonce) DO NOTHING`, nonce, store.Millis(now), store.Millis(expires))
	if err != nil {
		return fmt.Errorf("sqlite: ledger: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: ledger: %w", err)
	}
	if n == 0 {
		return store.ErrReplayed
	}
	// Entries are useless once their state has expired (an expired state is
	// refused before the ledger is consulted); keep the table small. States
	// live minutes, so an entry consumed more than a day ago (by this same
	// clock, whatever the callers' clocks say) can go.
	if _, err := s.write.ExecContext(ctx, `DELETE FROM confirmation_ledger WHERE consumed_at < $1`, store.Millis(now.Add(-24*time.Hour))); err != nil {
		return fmt.Errorf("sqlite: ledger cleanup: %w", err)
	}
	return nil
}

// ConsumedNonce implements Ledger.
func (s *Store) ConsumedNonce(ctx context.Context, nonce string) (bool, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM confirmation_ledger WHERE nonce = $1`, nonce).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("sqlite: ledger: %w", err)
	}
	return n > 0, nil
}
