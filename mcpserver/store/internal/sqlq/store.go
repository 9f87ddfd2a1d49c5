package sqlq

import (
	"context"
	"errors"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// Store is what both stores do on their pools, written once: Ops (which a
// transaction offers too), and store.Identity, store.Secrets, store.Keys
// and the ledger's read (ConsumedNonce). What each store does its own way
// stays with it: recording a nonce (Consume), and anything bounded by, or
// falling back on, its driver (see store/pg's Authenticate and SigningKey).
type Store struct {
	Ops
	sealer *store.Sealer
	uses   *uses
}

// NewStore returns the operations over ops' Conn, sealing secrets with
// sealer. A store resolves its secret key with SigningKey, which needs no
// sealer: it may use NewStore(ops, nil) until it has one.
func NewStore(ops Ops, sealer *store.Sealer) Store {
	return Store{Ops: ops, sealer: sealer, uses: &uses{}}
}

const (
	authenticateSQL = `SELECT t.id, t.person_id, p.name, w.organization_id, t.workspace_id, m.role, t.scopes, t.expires_at, t.revoked_at
		FROM tokens t
		JOIN people p ON p.id = t.person_id
		JOIN workspaces w ON w.id = t.workspace_id
		JOIN memberships m ON m.workspace_id = t.workspace_id AND m.person_id = t.person_id
		WHERE t.hash = $1`
	getPersonSQL    = `SELECT organization_id, name, email FROM people WHERE id = $1`
	getWorkspaceSQL = `SELECT organization_id, name, slug FROM workspaces WHERE id = $1`
	verifyingKeySQL = `SELECT secret, created_at, retired_at FROM signing_keys WHERE purpose = $1 AND id = $2`
	// activeKeySQL reads the newest unretired key (PostgreSQL's schema
	// allows one; SQLite's relies on the keys lock).
	activeKeySQL = `SELECT id, secret, created_at FROM signing_keys WHERE purpose = $1 AND retired_at = 0
		ORDER BY created_at DESC, id DESC LIMIT 1`

	putOrganizationSQL = `INSERT INTO organizations (id, name) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name`
	putPersonSQL = `INSERT INTO people (id, organization_id, name, email) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name, email = excluded.email`
	putWorkspaceSQL = `INSERT INTO workspaces (id, organization_id, name, slug) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name, slug = excluded.slug`
	workspacesBySlugSQL = `SELECT id, organization_id, name FROM workspaces WHERE slug = $1 AND slug <> '' ORDER BY id LIMIT 2`
	setMembershipSQL    = `INSERT INTO memberships (workspace_id, person_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_id, person_id) DO UPDATE SET role = excluded.role`
	memberRoleSQL  = `SELECT role FROM memberships WHERE workspace_id = $1 AND person_id = $2`
	insertTokenSQL = `INSERT INTO tokens (id, hash, person_id, workspace_id, scopes, label, created_at, expires_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0)`
	revokeTokenSQL = `UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at = 0`

	setSecretSQL = `INSERT INTO secrets (workspace_id, name, sealed, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`
	listSecretsSQL   = `SELECT name, updated_at FROM secrets WHERE workspace_id = $1 ORDER BY name`
	deleteSecretSQL  = `DELETE FROM secrets WHERE workspace_id = $1 AND name = $2`
	revealSecretsSQL = `SELECT name, sealed FROM secrets WHERE workspace_id = $1`

	insertKeySQL  = `INSERT INTO signing_keys (id, purpose, secret, created_at, retired_at) VALUES ($1, $2, $3, $4, 0)`
	retireKeysSQL = `UPDATE signing_keys SET retired_at = $1 WHERE purpose = $2 AND retired_at = 0`
	pruneKeysSQL  = `DELETE FROM signing_keys WHERE purpose = $1 AND retired_at <> 0 AND retired_at < $2`

	consumedNonceSQL = `SELECT EXISTS (SELECT 1 FROM confirmation_ledger WHERE nonce = $1)`
)

// found returns store.ErrNotFound itself for a row that is not there (what
// Identity's and Keys' getters answer), and any other failure with what
// and the store's name.
func (o *Ops) found(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return store.ErrNotFound
	}
	return o.errorf("%s: %w", what, err)
}

// ---- Identity ----

// PutOrganization implements store.Identity.
func (s *Store) PutOrganization(ctx context.Context, o store.Organization) error {
	return s.exec(ctx, Upsert, "put organization "+o.ID, putOrganizationSQL, o.ID, o.Name)
}

// PutPerson implements store.Identity.
func (s *Store) PutPerson(ctx context.Context, p store.Person) error {
	return s.exec(ctx, Upsert, "put person "+p.ID, putPersonSQL, p.ID, p.Organization, p.Name, p.Email)
}

// PutWorkspace implements store.Identity.
func (s *Store) PutWorkspace(ctx context.Context, w store.Workspace) error {
	return s.exec(ctx, Upsert, "put workspace "+w.ID, putWorkspaceSQL, w.ID, w.Organization, w.Name, w.Slug)
}

// WorkspaceBySlug returns the workspace with a slug (the label of its
// inboxes' mail addresses); ErrNotFound when none has it, ErrConflict when
// more than one does (mail cannot be routed to either).
func (s *Store) WorkspaceBySlug(ctx context.Context, slug string) (store.Workspace, error) {
	var found []store.Workspace
	err := s.conn.Query(ctx, workspacesBySlugSQL, []any{slug}, func(rows Rows) error {
		found = found[:0]
		for rows.Next() {
			w := store.Workspace{Slug: slug}
			if err := rows.Scan(&w.ID, &w.Organization, &w.Name); err != nil {
				return err
			}
			found = append(found, w)
		}
		return rows.Err()
	})
	if err != nil {
		return store.Workspace{}, s.errorf("workspace by slug %q: %w", slug, err)
	}
	switch len(found) {
	case 0:
		return store.Workspace{}, store.ErrNotFound
	case 1:
		return found[0], nil
	}
	return store.Workspace{}, s.errorf("workspaces %s and %s share the slug %q: %w", found[0].ID, found[1].ID, slug, store.ErrConflict)
}

// GetWorkspace implements store.Identity.
func (s *Store) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	w := store.Workspace{ID: id}
	if err := s.conn.QueryRow(ctx, Read, getWorkspaceSQL, []any{id}, &w.Organization, &w.Name, &w.Slug); err != nil {
		return store.Workspace{}, s.found(err, "get workspace "+id)
	}
	return w, nil
}

// GetPerson implements store.Identity.
func (s *Store) GetPerson(ctx context.Context, id string) (store.Person, error) {
	p := store.Person{ID: id}
	if err := s.conn.QueryRow(ctx, Read, getPersonSQL, []any{id}, &p.Organization, &p.Name, &p.Email); err != nil {
		return store.Person{}, s.found(err, "get person "+id)
	}
	return p, nil
}

// SetMembership implements store.Identity.
func (s *Store) SetMembership(ctx context.Context, workspace, person string, role store.Role) error {
	if err := store.CheckMembership(ctx, s, workspace, person); err != nil {
		return s.errorf("%w", err)
	}
	return s.exec(ctx, Upsert, "membership "+workspace+"/"+person, setMembershipSQL, workspace, person, string(role))
}

// CreateToken implements store.Identity: only the token's SHA-256 is
// stored. The insert is sent again only when it never reached the server.
func (s *Store) CreateToken(ctx context.Context, t store.NewToken) (string, error) {
	scopes, err := store.NormalizeScopes(t.Scopes)
	if err != nil {
		return "", s.errorf("create token: %w", err)
	}
	var role string
	err = s.conn.QueryRow(ctx, Read, memberRoleSQL, []any{t.Workspace, t.Person}, &role)
	if errors.Is(err, store.ErrNotFound) {
		return "", s.errorf("create token: person %q is not a member of workspace %q", t.Person, t.Workspace)
	}
	if err != nil {
		return "", s.errorf("create token: %w", err)
	}
	token, id := store.NewTokenValue()
	err = s.exec(ctx, Write, "create token", insertTokenSQL,
		id, store.HashToken(token), t.Person, t.Workspace, scopes, t.Label, store.Millis(s.now()), store.Millis(t.Expires))
	if err != nil {
		return "", err
	}
	return token, nil
}

// Authenticate implements store.Identity.
func (s *Store) Authenticate(ctx context.Context, token string) (store.Principal, error) {
	return AuthenticateHash(ctx, s, store.HashToken(token))
}

// AuthenticateHash is s.Authenticate given the token's HashToken, for a
// store that decides what an outcome means to it (store/pg's grace during
// outages). An unknown, revoked or expired token, or a person no longer a
// member, is store.ErrNotFound itself (not wrapped); any other error is a
// failure to ask. It is a function, not a method, so that the stores
// embedding Store offer no way to authenticate with a hash.
func AuthenticateHash(ctx context.Context, s *Store, hash string) (store.Principal, error) {
	var p store.Principal
	var scopes string
	var expires, revoked int64
	err := s.conn.QueryRow(ctx, Read, authenticateSQL, []any{hash},
		&p.TokenID, &p.Person, &p.PersonName, &p.Organization, &p.Workspace, &p.Role, &scopes, &expires, &revoked)
	if err != nil {
		return store.Principal{}, s.found(err, "authenticate")
	}
	if revoked != 0 || (expires != 0 && s.now().UnixMilli() >= expires) {
		return store.Principal{}, store.ErrNotFound
	}
	p.Scopes = store.ParseScopes(scopes)
	p.Expires = store.FromMillis(expires)
	s.touch(ctx, p.TokenID)
	return p, nil
}

// RevokeToken implements store.Identity: a static token, or an OAuth grant
// with its codes and tokens.
func (s *Store) RevokeToken(ctx context.Context, tokenID string) error {
	return s.revokeAny(ctx, tokenID)
}

// ---- Secrets ----

// SetSecret implements store.Secrets: the value is sealed (see
// store.Sealer), bound to its workspace and name.
func (s *Store) SetSecret(ctx context.Context, workspace, name, value string) error {
	sealed := s.sealer.Seal(workspace, name, value)
	return s.exec(ctx, Upsert, "set secret "+name, setSecretSQL, workspace, name, sealed, store.Millis(s.now()))
}

// ListSecrets implements store.Secrets: names in bytewise order, no values.
func (s *Store) ListSecrets(ctx context.Context, workspace string) ([]store.SecretInfo, error) {
	var out []store.SecretInfo
	err := s.conn.Query(ctx, listSecretsSQL, []any{workspace}, func(rows Rows) error {
		out = nil
		for rows.Next() {
			var si store.SecretInfo
			var updated int64
			if err := rows.Scan(&si.Name, &updated); err != nil {
				return err
			}
			si.Updated = store.FromMillis(updated)
			out = append(out, si)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("list secrets: %w", err)
	}
	return out, nil
}

// DeleteSecret implements store.Secrets.
func (s *Store) DeleteSecret(ctx context.Context, workspace, name string) error {
	return s.affect(ctx, "delete secret "+name, deleteSecretSQL, workspace, name)
}

// RevealSecrets implements store.Secrets. The values are opened once the
// rows are read, so that a read sent again opens nothing twice.
func (s *Store) RevealSecrets(ctx context.Context, workspace string) (map[string]string, error) {
	sealed := map[string][]byte{}
	err := s.conn.Query(ctx, revealSecretsSQL, []any{workspace}, func(rows Rows) error {
		clear(sealed)
		for rows.Next() {
			var name string
			var b []byte
			if err := rows.Scan(&name, &b); err != nil {
				return err
			}
			sealed[name] = b
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("reveal secrets: %w", err)
	}
	out := make(map[string]string, len(sealed))
	for name, b := range sealed {
		plain, err := s.sealer.Open(workspace, name, b)
		if err != nil {
			return nil, s.errorf("reveal secrets: %w", err)
		}
		out[name] = plain
	}
	return out, nil
}

// ---- Keys ----

// keysLock is the lock under which a purpose's keys are created and
// rotated.
func keysLock(purpose string) Lock { return Lock{Class: KeysLock, Name: purpose} }

// SigningKey implements store.Keys. The first key of a purpose is created
// under the purpose's keys lock, after a second look: handles (and
// replicas) asking at once all get the same key.
func (s *Store) SigningKey(ctx context.Context, purpose string) (store.Key, error) {
	k, err := activeKey(ctx, s.conn, purpose)
	if errors.Is(err, store.ErrNotFound) {
		// A transaction sent again looks again: it finds the key an
		// earlier attempt committed.
		err = s.conn.Locked(ctx, Upsert, keysLock(purpose), func(c Conn) error {
			var err error
			if k, err = activeKey(ctx, c, purpose); !errors.Is(err, store.ErrNotFound) {
				return err // another handle created it while this one waited
			}
			k = store.NewKey(purpose, s.now())
			_, err = c.Exec(ctx, Write, insertKeySQL, k.ID, purpose, k.Secret, store.Millis(k.Created))
			return err
		})
	}
	if err != nil {
		return store.Key{}, s.errorf("signing key %s: %w", purpose, err)
	}
	return k, nil
}

func activeKey(ctx context.Context, c Conn, purpose string) (store.Key, error) {
	k := store.Key{Purpose: purpose}
	var created int64
	if err := c.QueryRow(ctx, Read, activeKeySQL, []any{purpose}, &k.ID, &k.Secret, &created); err != nil {
		return store.Key{}, err
	}
	k.Created = store.FromMillis(created)
	return k, nil
}

// VerifyingKey implements store.Keys.
func (s *Store) VerifyingKey(ctx context.Context, purpose, id string) (store.Key, error) {
	k := store.Key{ID: id, Purpose: purpose}
	var created, retired int64
	if err := s.conn.QueryRow(ctx, Read, verifyingKeySQL, []any{purpose, id}, &k.Secret, &created, &retired); err != nil {
		return store.Key{}, s.found(err, "verifying key "+id)
	}
	k.Created, k.Retired = store.FromMillis(created), store.FromMillis(retired)
	return k, nil
}

// RotateKey implements store.Keys: in one transaction under the purpose's
// keys lock (rotations queue up), the active key is retired and a new one
// inserted. It is sent again only when it never reached the server.
func (s *Store) RotateKey(ctx context.Context, purpose string) (store.Key, error) {
	k := store.NewKey(purpose, s.now())
	err := s.conn.Locked(ctx, Write, keysLock(purpose), func(c Conn) error {
		if _, err := c.Exec(ctx, Write, retireKeysSQL, store.Millis(k.Created), purpose); err != nil {
			return err
		}
		_, err := c.Exec(ctx, Write, insertKeySQL, k.ID, purpose, k.Secret, store.Millis(k.Created))
		return err
	})
	if err != nil {
		return store.Key{}, s.errorf("rotate key %s: %w", purpose, err)
	}
	return k, nil
}

// PruneKeys implements store.Keys.
func (s *Store) PruneKeys(ctx context.Context, purpose string, retiredBefore time.Time) error {
	return s.exec(ctx, Upsert, "prune keys "+purpose, pruneKeysSQL, purpose, store.Millis(retiredBefore))
}

// ---- Ledger ----

// ConsumedNonce implements store.Ledger.
func (s *Store) ConsumedNonce(ctx context.Context, nonce string) (bool, error) {
	var used bool
	if err := s.conn.QueryRow(ctx, Read, consumedNonceSQL, []any{nonce}, &used); err != nil {
		return false, s.errorf("ledger: %w", err)
	}
	return used, nil
}
