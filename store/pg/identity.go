package pg

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kobana/workflow/store"
)

// PutOrganization implements store.Identity.
func (s *Store) PutOrganization(ctx context.Context, o store.Organization) error {
	err := s.exec(ctx, true, `INSERT INTO organizations (id, name) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name`, o.ID, o.Name)
	if err != nil {
		return fmt.Errorf("pg: put organization %s: %w", o.ID, err)
	}
	return nil
}

// PutPerson implements store.Identity.
func (s *Store) PutPerson(ctx context.Context, p store.Person) error {
	err := s.exec(ctx, true, `INSERT INTO people (id, organization_id, name, email) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name, email = excluded.email`,
		p.ID, p.Organization, p.Name, p.Email)
	if err != nil {
		return fmt.Errorf("pg: put person %s: %w", p.ID, err)
	}
	return nil
}

// PutWorkspace implements store.Identity.
func (s *Store) PutWorkspace(ctx context.Context, w store.Workspace) error {
	err := s.exec(ctx, true, `INSERT INTO workspaces (id, organization_id, name, slug) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name, slug = excluded.slug`,
		w.ID, w.Organization, w.Name, w.Slug)
	if err != nil {
		return fmt.Errorf("pg: put workspace %s: %w", w.ID, err)
	}
	return nil
}

// WorkspaceBySlug returns the workspace with a slug (the label of its
// inboxes' mail addresses); ErrNotFound when none has it, ErrConflict when
// more than one does (mail cannot be routed to either).
func (s *Store) WorkspaceBySlug(ctx context.Context, slug string) (store.Workspace, error) {
	var found []store.Workspace
	err := s.retry(ctx, true, func() error {
		found = found[:0]
		rows, err := s.pool.Query(ctx, `SELECT id, organization_id, name FROM workspaces WHERE slug = $1 AND slug <> '' ORDER BY id LIMIT 2`, slug)
		if err != nil {
			return err
		}
		defer rows.Close()
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
		return store.Workspace{}, fmt.Errorf("pg: workspace by slug %q: %w", slug, err)
	}
	switch len(found) {
	case 0:
		return store.Workspace{}, store.ErrNotFound
	case 1:
		return found[0], nil
	}
	return store.Workspace{}, fmt.Errorf("pg: workspaces %s and %s share the slug %q: %w", found[0].ID, found[1].ID, slug, store.ErrConflict)
}

// GetWorkspace implements store.Identity.
func (s *Store) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	w := store.Workspace{ID: id}
	err := s.retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT organization_id, name, slug FROM workspaces WHERE id = $1`, id).
			Scan(&w.Organization, &w.Name, &w.Slug)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Workspace{}, store.ErrNotFound
	}
	if err != nil {
		return store.Workspace{}, fmt.Errorf("pg: get workspace %s: %w", id, err)
	}
	return w, nil
}

// GetPerson implements store.Identity.
func (s *Store) GetPerson(ctx context.Context, id string) (store.Person, error) {
	p := store.Person{ID: id}
	err := s.retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT organization_id, name, email FROM people WHERE id = $1`, id).
			Scan(&p.Organization, &p.Name, &p.Email)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Person{}, store.ErrNotFound
	}
	if err != nil {
		return store.Person{}, fmt.Errorf("pg: get person %s: %w", id, err)
	}
	return p, nil
}

// SetMembership implements store.Identity.
func (s *Store) SetMembership(ctx context.Context, workspace, person string, role store.Role) error {
	if err := store.CheckMembership(ctx, s, workspace, person); err != nil {
		return fmt.Errorf("pg: %w", err)
	}
	err := s.exec(ctx, true, `INSERT INTO memberships (workspace_id, person_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_id, person_id) DO UPDATE SET role = excluded.role`, workspace, person, string(role))
	if err != nil {
		return fmt.Errorf("pg: membership %s/%s: %w", workspace, person, err)
	}
	return nil
}

// CreateToken implements store.Identity: only the token's SHA-256 is stored.
func (s *Store) CreateToken(ctx context.Context, t store.NewToken) (string, error) {
	scopes, err := store.NormalizeScopes(t.Scopes)
	if err != nil {
		return "", fmt.Errorf("pg: create token: %w", err)
	}
	var role string
	err = s.retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT role FROM memberships WHERE workspace_id = $1 AND person_id = $2`, t.Workspace, t.Person).Scan(&role)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("pg: create token: person %q is not a member of workspace %q", t.Person, t.Workspace)
	}
	if err != nil {
		return "", fmt.Errorf("pg: create token: %w", err)
	}
	token, id := store.NewTokenValue()
	err = s.exec(ctx, false, `INSERT INTO tokens (id, hash, person_id, workspace_id, scopes, label, created_at, expires_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0)`,
		id, store.HashToken(token), t.Person, t.Workspace, scopes, t.Label, store.Millis(s.now()), store.Millis(t.Expires))
	if err != nil {
		return "", fmt.Errorf("pg: create token: %w", err)
	}
	return token, nil
}

// Authenticate implements store.Identity. While the database is unreachable
// a token that the database accepted less than Options.AuthGrace ago is
// still accepted (see Options.AuthGrace); an unknown, revoked or expired
// token never is.
func (s *Store) Authenticate(ctx context.Context, token string) (store.Principal, error) {
	hash := store.HashToken(token)
	var p store.Principal
	var scopes string
	var expires, revoked int64
	err := s.retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT t.id, t.person_id, p.name, w.organization_id, t.workspace_id, m.role, t.scopes, t.expires_at, t.revoked_at
			FROM tokens t
			JOIN people p ON p.id = t.person_id
			JOIN workspaces w ON w.id = t.workspace_id
			JOIN memberships m ON m.workspace_id = t.workspace_id AND m.person_id = t.person_id
			WHERE t.hash = $1`, hash).
			Scan(&p.TokenID, &p.Person, &p.PersonName, &p.Organization, &p.Workspace, &p.Role, &scopes, &expires, &revoked)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		s.grace.forget(hash)
		return store.Principal{}, store.ErrNotFound
	case err != nil:
		if s.opts.AuthGrace > 0 && unavailable(err) {
			if p, ok := s.grace.get(hash, s.opts.AuthGrace); ok && (p.Expires.IsZero() || s.now().Before(p.Expires)) {
				return p, nil
			}
		}
		return store.Principal{}, fmt.Errorf("pg: authenticate: %w", err)
	}
	if revoked != 0 || (expires != 0 && s.now().UnixMilli() >= expires) {
		s.grace.forget(hash)
		return store.Principal{}, store.ErrNotFound
	}
	p.Scopes = store.ParseScopes(scopes)
	p.Expires = store.FromMillis(expires)
	if s.opts.AuthGrace > 0 {
		s.grace.put(hash, p)
	}
	return p, nil
}

// RevokeToken implements store.Identity.
func (s *Store) RevokeToken(ctx context.Context, tokenID string) error {
	tag, err := s.execTag(ctx, `UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at = 0`, store.Millis(s.now()), tokenID)
	if err != nil {
		return fmt.Errorf("pg: revoke token %s: %w", tokenID, err)
	}
	return affected(tag, "revoke token "+tokenID)
}

// graceCache remembers the principals of recently authenticated tokens, by
// token hash, for Options.AuthGrace.
type graceCache struct {
	mu sync.Mutex
	m  map[string]graceEntry
}

type graceEntry struct {
	p    store.Principal
	seen time.Time // monotonic: the process clock, not Options.Now
}

// graceMax bounds the cache; when full it starts over (entries are only
// needed during an outage, and any request refills them).
const graceMax = 10000

func (g *graceCache) put(hash string, p store.Principal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.m) >= graceMax {
		clear(g.m)
	}
	g.m[hash] = graceEntry{p: p, seen: time.Now()}
}

func (g *graceCache) get(hash string, grace time.Duration) (store.Principal, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.m[hash]
	if !ok || time.Since(e.seen) > grace {
		return store.Principal{}, false
	}
	return e.p, true
}

func (g *graceCache) forget(hash string) {
	g.mu.Lock()
	delete(g.m, hash)
	g.mu.Unlock()
}

// ---- Secrets ----

// SetSecret implements store.Secrets.
func (s *Store) SetSecret(ctx context.Context, workspace, name, value string) error {
	sealed := s.sealer.Seal(workspace, name, value)
	err := s.exec(ctx, true, `INSERT INTO secrets (workspace_id, name, sealed, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
		workspace, name, sealed, store.Millis(s.now()))
	if err != nil {
		return fmt.Errorf("pg: set secret %s: %w", name, err)
	}
	return nil
}

// ListSecrets implements store.Secrets: names in bytewise order, no values.
func (s *Store) ListSecrets(ctx context.Context, workspace string) ([]store.SecretInfo, error) {
	var out []store.SecretInfo
	err := s.retry(ctx, true, func() error {
		out = nil
		rows, err := s.pool.Query(ctx, `SELECT name, updated_at FROM secrets WHERE workspace_id = $1 ORDER BY name`, workspace)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var si store.SecretInfo
			var upd int64
			if err := rows.Scan(&si.Name, &upd); err != nil {
				return err
			}
			si.Updated = store.FromMillis(upd)
			out = append(out, si)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("pg: list secrets: %w", err)
	}
	return out, nil
}

// DeleteSecret implements store.Secrets.
func (s *Store) DeleteSecret(ctx context.Context, workspace, name string) error {
	tag, err := s.execTag(ctx, `DELETE FROM secrets WHERE workspace_id = $1 AND name = $2`, workspace, name)
	if err != nil {
		return fmt.Errorf("pg: delete secret %s: %w", name, err)
	}
	return affected(tag, "delete secret "+name)
}

// RevealSecrets implements store.Secrets.
func (s *Store) RevealSecrets(ctx context.Context, workspace string) (map[string]string, error) {
	sealed := map[string][]byte{}
	err := s.retry(ctx, true, func() error {
		clear(sealed)
		rows, err := s.pool.Query(ctx, `SELECT name, sealed FROM secrets WHERE workspace_id = $1`, workspace)
		if err != nil {
			return err
		}
		defer rows.Close()
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
		return nil, fmt.Errorf("pg: reveal secrets: %w", err)
	}
	out := make(map[string]string, len(sealed))
	for name, b := range sealed {
		plain, err := s.sealer.Open(workspace, name, b)
		if err != nil {
			return nil, fmt.Errorf("pg: reveal secrets: %w", err)
		}
		out[name] = plain
	}
	return out, nil
}
