package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kobana/workflow/store"
)

// exec runs a statement that returns no rows (see retry for idempotent).
func (s *Store) exec(ctx context.Context, idempotent bool, sql string, args ...any) error {
	return retry(ctx, idempotent, func() error {
		_, err := s.pool.Exec(ctx, sql, args...)
		return err
	})
}

// execTag runs a statement whose row count matters (a DELETE, an UPDATE):
// it is sent again only if the first attempt never reached the server.
func (s *Store) execTag(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := retry(ctx, false, func() (err error) {
		tag, err = s.pool.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// affected turns a DELETE or UPDATE that touched nothing into ErrNotFound.
func affected(tag pgconn.CommandTag) error {
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// GetRecord implements store.Records.
func (s *Store) GetRecord(ctx context.Context, workspace, kind, id string) (store.Record, error) {
	r := store.Record{Workspace: workspace, Kind: kind, ID: id}
	var created int64
	var data string
	err := retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT parent_id, status, created_at, data FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`,
			workspace, kind, id).Scan(&r.Parent, &r.Status, &created, &data)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Record{}, store.ErrNotFound
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("pg: get %s %s: %w", kind, id, err)
	}
	r.Created = store.FromMillis(created)
	r.Data = []byte(data)
	return r, nil
}

// likePrefix escapes LIKE metacharacters (with ! as the escape character) so
// that a prefix matches literally.
func likePrefix(p string) string {
	return strings.NewReplacer(`!`, `!!`, `%`, `!%`, `_`, `!_`).Replace(p) + "%"
}

// ListRecords implements store.Records: most recent first, ties broken by id
// (descending, bytewise).
func (s *Store) ListRecords(ctx context.Context, workspace, kind string, q store.Query) ([]store.Record, error) {
	where := []string{"workspace_id = $1", "kind = $2"}
	args := []any{workspace, kind}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.Parent != "" {
		add("parent_id = $%d", q.Parent)
	}
	if q.Status != "" {
		add("status = $%d", q.Status)
	}
	if q.Prefix != "" {
		add("id LIKE $%d ESCAPE '!'", likePrefix(q.Prefix))
	}
	if !q.Since.IsZero() {
		add("created_at >= $%d", store.Millis(q.Since))
	}
	switch {
	case !q.Before.IsZero() && q.BeforeID != "":
		// Keyset pagination: after (Before, BeforeID) in listing order.
		args = append(args, store.Millis(q.Before), q.BeforeID)
		where = append(where, fmt.Sprintf("(created_at, id) < ($%d, $%d)", len(args)-1, len(args)))
	case !q.Before.IsZero():
		add("created_at < $%d", store.Millis(q.Before))
	}
	args = append(args, q.EffectiveLimit())
	query := fmt.Sprintf(`SELECT id, parent_id, status, created_at, data FROM records WHERE %s ORDER BY created_at DESC, id DESC LIMIT $%d`,
		strings.Join(where, " AND "), len(args))
	var out []store.Record
	err := retry(ctx, true, func() error {
		out = nil
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := store.Record{Workspace: workspace, Kind: kind}
			var created int64
			var data string
			if err := rows.Scan(&r.ID, &r.Parent, &r.Status, &created, &data); err != nil {
				return err
			}
			r.Created = store.FromMillis(created)
			r.Data = []byte(data)
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("pg: list %s: %w", kind, err)
	}
	return out, nil
}

// PutRecord implements store.Records.
func (s *Store) PutRecord(ctx context.Context, r store.Record) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("pg: put: %w", err)
	}
	created := r.Created
	if created.IsZero() {
		created = s.now()
	}
	err := s.exec(ctx, true,
		`INSERT INTO records (workspace_id, kind, id, parent_id, status, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (workspace_id, kind, id) DO UPDATE SET parent_id = excluded.parent_id, status = excluded.status, data = excluded.data`,
		r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(created), string(r.Data))
	if err != nil {
		return fmt.Errorf("pg: put %s %s: %w", r.Kind, r.ID, err)
	}
	return nil
}

// CreateRecord implements store.Records. It is not retried on a dead
// connection: a retry after an insert whose commit went unseen would report
// a false conflict.
func (s *Store) CreateRecord(ctx context.Context, r store.Record) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("pg: create: %w", err)
	}
	created := r.Created
	if created.IsZero() {
		created = s.now()
	}
	tag, err := s.execTag(ctx,
		`INSERT INTO records (workspace_id, kind, id, parent_id, status, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (workspace_id, kind, id) DO NOTHING`,
		r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(created), string(r.Data))
	if err != nil {
		return fmt.Errorf("pg: create %s %s: %w", r.Kind, r.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pg: create %s %s: %w", r.Kind, r.ID, store.ErrConflict)
	}
	return nil
}

// DeleteRecord implements store.Records.
func (s *Store) DeleteRecord(ctx context.Context, workspace, kind, id string) error {
	tag, err := s.execTag(ctx, `DELETE FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`, workspace, kind, id)
	if err != nil {
		return fmt.Errorf("pg: delete %s %s: %w", kind, id, err)
	}
	return affected(tag)
}

// PutBlob implements store.Blobs.
func (s *Store) PutBlob(ctx context.Context, workspace, id string, content []byte) error {
	if content == nil {
		content = []byte{} // pgx sends a nil slice as NULL
	}
	err := s.exec(ctx, true,
		`INSERT INTO blobs (workspace_id, id, content) VALUES ($1, $2, $3)
		 ON CONFLICT (workspace_id, id) DO UPDATE SET content = excluded.content`, workspace, id, content)
	if err != nil {
		return fmt.Errorf("pg: put blob %s: %w", id, err)
	}
	return nil
}

// GetBlob implements store.Blobs.
func (s *Store) GetBlob(ctx context.Context, workspace, id string) ([]byte, error) {
	var b []byte
	err := retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT content FROM blobs WHERE workspace_id = $1 AND id = $2`, workspace, id).Scan(&b)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("pg: get blob %s: %w", id, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// DeleteBlob implements store.Blobs.
func (s *Store) DeleteBlob(ctx context.Context, workspace, id string) error {
	tag, err := s.execTag(ctx, `DELETE FROM blobs WHERE workspace_id = $1 AND id = $2`, workspace, id)
	if err != nil {
		return fmt.Errorf("pg: delete blob %s: %w", id, err)
	}
	return affected(tag)
}
