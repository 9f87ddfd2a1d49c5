package sqlq

import (
	"context"
	"errors"
	"fmt"

	"github.com/kobana/workflow/mcpserver/store"
)

const (
	listOrganizationsSQL = `SELECT id, name FROM organizations ORDER BY id`
	listWorkspacesSQL    = `SELECT id, organization_id, name, slug FROM workspaces WHERE $1 = '' OR organization_id = $1 ORDER BY id`
	listPeopleSQL        = `SELECT id, organization_id, name, email FROM people WHERE $1 = '' OR organization_id = $1 ORDER BY id`
	listMembershipsSQL   = `SELECT workspace_id, person_id, role FROM memberships WHERE $1 = '' OR workspace_id = $1 ORDER BY workspace_id, person_id`
	removeMembershipSQL  = `DELETE FROM memberships WHERE workspace_id = $1 AND person_id = $2`
	firstSecretSQL       = `SELECT workspace_id, name, sealed FROM secrets ORDER BY workspace_id, name LIMIT 1`
	allSecretsSQL        = `SELECT workspace_id, name, sealed FROM secrets ORDER BY workspace_id, name`
	resealSecretSQL      = `UPDATE secrets SET sealed = $3 WHERE workspace_id = $1 AND name = $2`
)

// ListOrganizations implements store.Directory.
func (s *Store) ListOrganizations(ctx context.Context) ([]store.Organization, error) {
	var out []store.Organization
	err := s.conn.Query(ctx, listOrganizationsSQL, nil, func(rows Rows) error {
		out = nil
		for rows.Next() {
			var o store.Organization
			if err := rows.Scan(&o.ID, &o.Name); err != nil {
				return err
			}
			out = append(out, o)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("list organizations: %w", err)
	}
	return out, nil
}

// ListWorkspaces implements store.Directory.
func (s *Store) ListWorkspaces(ctx context.Context, org string) ([]store.Workspace, error) {
	var out []store.Workspace
	err := s.conn.Query(ctx, listWorkspacesSQL, []any{org}, func(rows Rows) error {
		out = nil
		for rows.Next() {
			var w store.Workspace
			if err := rows.Scan(&w.ID, &w.Organization, &w.Name, &w.Slug); err != nil {
				return err
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("list workspaces: %w", err)
	}
	return out, nil
}

// ListPeople implements store.Directory.
func (s *Store) ListPeople(ctx context.Context, org string) ([]store.Person, error) {
	var out []store.Person
	err := s.conn.Query(ctx, listPeopleSQL, []any{org}, func(rows Rows) error {
		out = nil
		for rows.Next() {
			var p store.Person
			if err := rows.Scan(&p.ID, &p.Organization, &p.Name, &p.Email); err != nil {
				return err
			}
			out = append(out, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("list people: %w", err)
	}
	return out, nil
}

// ListMemberships implements store.Directory.
func (s *Store) ListMemberships(ctx context.Context, workspace string) ([]store.Member, error) {
	var out []store.Member
	err := s.conn.Query(ctx, listMembershipsSQL, []any{workspace}, func(rows Rows) error {
		out = nil
		for rows.Next() {
			var m store.Member
			var role string
			if err := rows.Scan(&m.Workspace, &m.Person, &role); err != nil {
				return err
			}
			m.Role = store.Role(role)
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("list memberships: %w", err)
	}
	return out, nil
}

// RemoveMembership implements store.Directory.
func (s *Store) RemoveMembership(ctx context.Context, workspace, person string) error {
	return s.affect(ctx, "membership "+workspace+"/"+person, removeMembershipSQL, workspace, person)
}

// CheckSecretKey implements store.SecretKeys.
func (s *Store) CheckSecretKey(ctx context.Context) error {
	var ws, name string
	var sealed []byte
	err := s.conn.QueryRow(ctx, Read, firstSecretSQL, nil, &ws, &name, &sealed)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.errorf("check the secret key: %w", err)
	}
	if _, err := s.sealer.Open(ws, name, sealed); err != nil {
		return s.errorf("%w (secret %s of workspace %s: %w)", store.ErrNoSecretKey, name, ws, err)
	}
	return nil
}

// ResealSecrets implements store.SecretKeys.
func (s *Store) ResealSecrets(ctx context.Context, key []byte) (int, error) {
	next, err := store.NewSealer(key)
	if err != nil {
		return 0, s.errorf("reseal secrets: %w", err)
	}
	n := 0
	err = s.conn.Locked(ctx, Write, Lock{Class: KeysLock, Name: store.SecretsKeyPurpose}, func(c Conn) error {
		type sealedSecret struct {
			ws, name string
			sealed   []byte
		}
		var all []sealedSecret
		err := c.Query(ctx, allSecretsSQL, nil, func(rows Rows) error {
			all = all[:0]
			for rows.Next() {
				var v sealedSecret
				if err := rows.Scan(&v.ws, &v.name, &v.sealed); err != nil {
					return err
				}
				all = append(all, v)
			}
			return rows.Err()
		})
		if err != nil {
			return err
		}
		n = 0
		for _, v := range all {
			plain, err := s.sealer.Open(v.ws, v.name, v.sealed)
			if err != nil {
				return fmt.Errorf("%w (secret %s of workspace %s: %w)", store.ErrNoSecretKey, v.name, v.ws, err)
			}
			if _, err := c.Exec(ctx, Write, resealSecretSQL, v.ws, v.name, next.Seal(v.ws, v.name, plain)); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, s.errorf("reseal secrets: %w", err)
	}
	return n, nil
}
