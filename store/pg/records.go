package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/internal/sqlq"
)

// dbtx is a *pgxpool.Pool or a pgx.Tx.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ops are the record, blob and counter operations, on the pool or inside a
// transaction.
type ops struct {
	db      dbtx
	inTx    bool
	conns   *conns
	now     func() time.Time
	dialect dialect
}

// retry is the pool's retry (see conns.retry); inside a transaction a
// statement is never sent again, since the transaction died with its
// connection.
func (o *ops) retry(ctx context.Context, idempotent bool, f func() error) error {
	if o.inTx {
		return f()
	}
	return o.conns.retry(ctx, idempotent, f)
}

// exec runs a statement that returns no rows (see retry for idempotent).
func (o *ops) exec(ctx context.Context, idempotent bool, sql string, args ...any) error {
	return o.retry(ctx, idempotent, func() error {
		_, err := o.db.Exec(ctx, sql, args...)
		return err
	})
}

// execTag runs a statement whose row count matters (a DELETE, an UPDATE):
// it is sent again only if the first attempt never reached the server.
func (o *ops) execTag(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := o.retry(ctx, false, func() (err error) {
		tag, err = o.db.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// affected turns a DELETE or UPDATE that touched nothing into ErrNotFound.
func affected(tag pgconn.CommandTag, what string) error {
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pg: %s: %w", what, store.ErrNotFound)
	}
	return nil
}

// GetRecord implements store.Records.
func (o *ops) GetRecord(ctx context.Context, workspace, kind, id string) (store.Record, error) {
	r := store.Record{Workspace: workspace, Kind: kind, ID: id}
	var created int64
	var data string
	err := o.retry(ctx, true, func() error {
		return o.db.QueryRow(ctx, `SELECT parent_id, status, created_at, data FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`,
			workspace, kind, id).Scan(&r.Parent, &r.Status, &created, &data)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Record{}, fmt.Errorf("pg: get %s %s: %w", kind, id, store.ErrNotFound)
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("pg: get %s %s: %w", kind, id, err)
	}
	r.Created = store.FromMillis(created)
	r.Data = []byte(data)
	return r, nil
}

// dialect writes PostgreSQL's side of a listing. Data is kept as TEXT (served
// byte for byte); a listing that reads its fields parses it once per row, as
// doc, and compares text under COLLATE "C" (bytewise, as SQLite does).
type dialect struct {
	// lower is the collation Contains lowers text under: one that folds
	// every letter, whatever the database's own locale (a database created
	// with the C locale folds ASCII only); empty for the database's.
	lower string
}

func (dialect) From(doc bool) string {
	if doc {
		return "records CROSS JOIN LATERAL (SELECT records.data::jsonb AS doc) AS parsed"
	}
	return "records"
}

// rfc3339 is the shape of the text a Time field converts; other text has no
// time value (a cast would fail the whole listing).
const rfc3339 = `'^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$'`

func (dialect) Field(path string, typ store.FieldType) string {
	p := "'{" + strings.ReplaceAll(path, ".", ",") + "}'" // path is checked: letters, digits, _ and dots
	v, text := "parsed.doc #> "+p, "(parsed.doc #>> "+p+")"
	switch typ {
	case store.Number:
		return "CASE WHEN jsonb_typeof(" + v + ") = 'number' THEN " + text + "::float8 END"
	case store.Time:
		return "CASE WHEN jsonb_typeof(" + v + ") = 'string' AND " + text + " ~ " + rfc3339 +
			" THEN floor(extract(epoch FROM " + text + "::timestamptz) * 1000)::bigint END"
	}
	return "CASE WHEN jsonb_typeof(" + v + ") = 'string' THEN " + text + " COLLATE \"C\" END"
}

// Prefix uses LIKE with its metacharacters escaped: under COLLATE "C" it
// compares bytes and, on the id, uses the primary key.
func (dialect) Prefix(expr, p string, arg func(any) string) string {
	escaped := strings.NewReplacer(`!`, `!!`, `%`, `!%`, `_`, `!_`).Replace(p) + "%"
	return "(" + expr + ") LIKE " + arg(escaped) + " ESCAPE '!'"
}

func (d dialect) Contains(expr, placeholder string) string {
	if d.lower != "" {
		expr = "(" + expr + `) COLLATE "` + d.lower + `"`
	}
	return "strpos(lower(" + expr + "), " + placeholder + ") > 0"
}

// unicodeCollations are collations whose lower() folds every letter as Go's
// strings.ToLower does, in order of preference: ICU's root locale, then
// glibc's C.UTF-8.
var unicodeCollations = []string{"und-x-icu", "C.utf8", "C.UTF-8"}

// lowerCollation returns the first of unicodeCollations the server has,
// empty when it has none (then the database's own lower() is used).
func lowerCollation(ctx context.Context, db dbtx) (string, error) {
	var name string
	err := db.QueryRow(ctx, `SELECT collname FROM pg_collation WHERE collname = ANY($1) AND collencoding IN (-1, pg_char_to_encoding('UTF8'))
		ORDER BY array_position($1, collname::text) LIMIT 1`, unicodeCollations).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return name, err
}

func (o *ops) list(ctx context.Context, workspace, kind string, q store.Query, page bool) (store.Page, error) {
	plan, err := sqlq.NewPlan(o.dialect, workspace, kind, q, page)
	if err != nil {
		return store.Page{}, fmt.Errorf("pg: list %s: %w", kind, err)
	}
	var out []sqlq.Row
	err = o.retry(ctx, true, func() error {
		out = nil
		rows, err := o.db.Query(ctx, plan.SQL, plan.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := sqlq.Row{Record: store.Record{Workspace: workspace, Kind: kind}}
			var created int64
			var data string
			dest := []any{&r.Record.ID, &r.Record.Parent, &r.Record.Status, &created, &data}
			if plan.Key {
				dest = append(dest, &r.Key)
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			r.Record.Created = store.FromMillis(created)
			r.Record.Data = []byte(data)
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return store.Page{}, fmt.Errorf("pg: list %s: %w", kind, err)
	}
	p, err := plan.Page(out)
	if err != nil {
		return store.Page{}, fmt.Errorf("pg: list %s: %w", kind, err)
	}
	return p, nil
}

// ListRecords implements store.Records.
func (o *ops) ListRecords(ctx context.Context, workspace, kind string, q store.Query) ([]store.Record, error) {
	p, err := o.list(ctx, workspace, kind, q, false)
	return p.Records, err
}

// ListPage implements store.Records.
func (o *ops) ListPage(ctx context.Context, workspace, kind string, q store.Query) (store.Page, error) {
	return o.list(ctx, workspace, kind, q, true)
}

// PutRecord implements store.Records.
func (o *ops) PutRecord(ctx context.Context, r store.Record) error {
	r, err := r.Prepared(o.now)
	if err != nil {
		return fmt.Errorf("pg: put: %w", err)
	}
	err = o.exec(ctx, true,
		`INSERT INTO records (workspace_id, kind, id, parent_id, status, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (workspace_id, kind, id) DO UPDATE SET parent_id = excluded.parent_id, status = excluded.status, data = excluded.data`,
		r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(r.Created), string(r.Data))
	if err != nil {
		return fmt.Errorf("pg: put %s %s: %w", r.Kind, r.ID, err)
	}
	return nil
}

// CreateRecord implements store.Records. It is not retried on a dead
// connection: a retry after an insert whose commit went unseen would report
// a false conflict.
func (o *ops) CreateRecord(ctx context.Context, r store.Record) error {
	r, err := r.Prepared(o.now)
	if err != nil {
		return fmt.Errorf("pg: create: %w", err)
	}
	tag, err := o.execTag(ctx,
		`INSERT INTO records (workspace_id, kind, id, parent_id, status, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (workspace_id, kind, id) DO NOTHING`,
		r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(r.Created), string(r.Data))
	if err != nil {
		return fmt.Errorf("pg: create %s %s: %w", r.Kind, r.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pg: create %s %s: %w", r.Kind, r.ID, store.ErrConflict)
	}
	return nil
}

// DeleteRecord implements store.Records.
func (o *ops) DeleteRecord(ctx context.Context, workspace, kind, id string) error {
	tag, err := o.execTag(ctx, `DELETE FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`, workspace, kind, id)
	if err != nil {
		return fmt.Errorf("pg: delete %s %s: %w", kind, id, err)
	}
	return affected(tag, "delete "+kind+" "+id)
}

// PutBlob implements store.Blobs.
func (o *ops) PutBlob(ctx context.Context, workspace, id string, content []byte) error {
	if content == nil {
		content = []byte{} // pgx sends a nil slice as NULL
	}
	err := o.exec(ctx, true,
		`INSERT INTO blobs (workspace_id, id, content) VALUES ($1, $2, $3)
		 ON CONFLICT (workspace_id, id) DO UPDATE SET content = excluded.content`, workspace, id, content)
	if err != nil {
		return fmt.Errorf("pg: put blob %s: %w", id, err)
	}
	return nil
}

// GetBlob implements store.Blobs.
func (o *ops) GetBlob(ctx context.Context, workspace, id string) ([]byte, error) {
	var b []byte
	err := o.retry(ctx, true, func() error {
		return o.db.QueryRow(ctx, `SELECT content FROM blobs WHERE workspace_id = $1 AND id = $2`, workspace, id).Scan(&b)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pg: get blob %s: %w", id, store.ErrNotFound)
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
func (o *ops) DeleteBlob(ctx context.Context, workspace, id string) error {
	tag, err := o.execTag(ctx, `DELETE FROM blobs WHERE workspace_id = $1 AND id = $2`, workspace, id)
	if err != nil {
		return fmt.Errorf("pg: delete blob %s: %w", id, err)
	}
	return affected(tag, "delete blob "+id)
}

// NextNumber implements store.Counters: the next number of a workspace's
// counter is start the first time (or whenever start is above the last
// number handed out), one more than the last number otherwise. It is one
// statement, so numbers are unique across every replica sharing the
// database, with no lock held by the caller (a product's in-process mutex
// does not span replicas). A statement that may have reached the server is
// not sent again, since a lost answer would skip a number.
func (o *ops) NextNumber(ctx context.Context, workspace, name string, start int64) (int64, error) {
	var n int64
	err := o.retry(ctx, false, func() error {
		return o.db.QueryRow(ctx, `INSERT INTO counters (workspace_id, name, value) VALUES ($1, $2, $3)
			ON CONFLICT (workspace_id, name) DO UPDATE SET value = GREATEST(counters.value + 1, excluded.value)
			RETURNING value`, workspace, name, start).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("pg: counter %s: %w", name, err)
	}
	return n, nil
}

// Tx is a transaction of the PostgreSQL store (see Store.WithTx). Besides
// store.Tx it offers the pgx transaction itself (PgxTx), for work that must
// commit or roll back with the records: a River job inserted with
// riverpgxv5, a large object written with LargeObjects.
type Tx struct {
	ops
	tx pgx.Tx
}

// PgxTx returns the pgx transaction.
func (t *Tx) PgxTx() pgx.Tx { return t.tx }

// PgxTxer is implemented by the transactions of this store: how code that
// holds a store.Tx reaches the pgx.Tx.
type PgxTxer interface {
	PgxTx() pgx.Tx
}

var (
	_ store.Tx = (*Tx)(nil)
	_ PgxTxer  = (*Tx)(nil)
)

// WithTx implements store.Transactor: fn runs in one transaction (READ
// COMMITTED, the database's default) on one pooled connection. Only its
// BEGIN is sent again when the connection turns out dead, as a read would
// be; once fn has run nothing is retried, and a transaction whose connection
// dies fails with the error.
func (s *Store) WithTx(ctx context.Context, fn func(tx store.Tx) error) error {
	var pgTx pgx.Tx
	err := s.retry(ctx, true, func() (err error) {
		pgTx, err = s.pool.Begin(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("pg: begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// Bounded, and done even when ctx is cancelled, so that the
			// connection goes back to the pool clean.
			rbCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			pgTx.Rollback(rbCtx)
			cancel()
		}
	}()
	if err := fn(&Tx{ops: ops{db: pgTx, inTx: true, conns: s.conns, now: s.now, dialect: s.ops.dialect}, tx: pgTx}); err != nil {
		return err
	}
	if err := pgTx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: commit: %w", err)
	}
	committed = true
	return nil
}

// PgxPool returns the store's connection pool, for building a River client
// (riverpgxv5.New) or reading large objects on the same database. Do not
// close it; Store.Close does.
func (s *Store) PgxPool() *pgxpool.Pool { return s.pool }
