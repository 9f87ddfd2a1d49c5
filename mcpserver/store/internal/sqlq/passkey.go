package sqlq

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

const (
	createPasskeySQL = `INSERT INTO passkeys (id, person_id, workspace_id, name, credential, created_at, last_used_at)
		VALUES ($1, $2, $3, $4, $5, $6, 0) ON CONFLICT (id) DO NOTHING`
	listPasskeysSQL = `SELECT id, workspace_id, name, credential, created_at, last_used_at FROM passkeys
		WHERE person_id = $1 ORDER BY created_at, id`
	getPasskeySQL    = `SELECT person_id, workspace_id, name, credential, created_at, last_used_at FROM passkeys WHERE id = $1`
	usePasskeySQL    = `UPDATE passkeys SET credential = $1, last_used_at = $2 WHERE id = $3`
	deletePasskeySQL = `DELETE FROM passkeys WHERE person_id = $1 AND id = $2`
)

// CreatePasskey implements store.Passkeys.
func (s *Store) CreatePasskey(ctx context.Context, p store.Passkey) error {
	if p.ID == "" || p.Person == "" || len(p.Credential) == 0 {
		return s.errorf("create passkey: id, person and credential are required")
	}
	if _, err := s.GetPerson(ctx, p.Person); err != nil {
		return s.errorf("create passkey: person %s: %w", p.Person, err)
	}
	if p.Created.IsZero() {
		p.Created = s.now()
	}
	n, err := s.conn.Exec(ctx, Write, createPasskeySQL, p.ID, p.Person, p.Workspace, p.Name, string(p.Credential), store.Millis(p.Created))
	if err != nil {
		return s.errorf("create passkey: %w", err)
	}
	if n == 0 {
		return s.errorf("create passkey: %w", store.ErrConflict)
	}
	return nil
}

// ListPasskeys implements store.Passkeys.
func (s *Store) ListPasskeys(ctx context.Context, person string) ([]store.Passkey, error) {
	var out []store.Passkey
	err := s.conn.Query(ctx, listPasskeysSQL, []any{person}, func(rows Rows) error {
		out = out[:0]
		for rows.Next() {
			p := store.Passkey{Person: person}
			var cred string
			var created, used int64
			if err := rows.Scan(&p.ID, &p.Workspace, &p.Name, &cred, &created, &used); err != nil {
				return err
			}
			p.Credential = json.RawMessage(cred)
			p.Created, p.LastUsed = store.FromMillis(created), store.FromMillis(used)
			out = append(out, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("passkeys of %s: %w", person, err)
	}
	return out, nil
}

// GetPasskey implements store.Passkeys.
func (s *Store) GetPasskey(ctx context.Context, id string) (store.Passkey, error) {
	p := store.Passkey{ID: id}
	var cred string
	var created, used int64
	if err := s.conn.QueryRow(ctx, Read, getPasskeySQL, []any{id}, &p.Person, &p.Workspace, &p.Name, &cred, &created, &used); err != nil {
		return store.Passkey{}, s.found(err, "get passkey")
	}
	p.Credential = json.RawMessage(cred)
	p.Created, p.LastUsed = store.FromMillis(created), store.FromMillis(used)
	return p, nil
}

// UsePasskey implements store.Passkeys.
func (s *Store) UsePasskey(ctx context.Context, id string, credential json.RawMessage, used time.Time) error {
	if len(credential) == 0 {
		return s.errorf("use passkey: the credential is required")
	}
	return s.affect(ctx, "use passkey", usePasskeySQL, string(credential), store.Millis(used), id)
}

// DeletePasskey implements store.Passkeys.
func (s *Store) DeletePasskey(ctx context.Context, person, id string) error {
	return s.affect(ctx, fmt.Sprintf("delete passkey of %s", person), deletePasskeySQL, person, id)
}
