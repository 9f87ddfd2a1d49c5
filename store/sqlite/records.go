package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/internal/sqlq"
)

// lowerFunc is the SQL function Contains filters lower-case text with: Go's
// strings.ToLower, the same on every machine (SQLite's own lower() folds
// ASCII only).
const lowerFunc = "kobana_lower"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(lowerFunc, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		}
		return nil, nil
	})
}

// querier is a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ops are the record, blob and counter operations, over the store's pools
// (reads on the reader pool, writes on the writer) or inside a transaction
// (both on it).
type ops struct {
	read, write querier
	now         func() time.Time
	// getRecord is GetRecord's statement prepared on the reader pool; nil
	// inside a transaction.
	getRecord *sql.Stmt
}

func affected(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: %s: %w", what, store.ErrNotFound)
	}
	return nil
}

const getRecordQuery = `SELECT parent_id, status, created_at, data FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`

// GetRecord implements store.Records.
func (o *ops) GetRecord(ctx context.Context, workspace, kind, id string) (store.Record, error) {
	r := store.Record{Workspace: workspace, Kind: kind, ID: id}
	var created int64
	var data string
	var row *sql.Row
	if o.getRecord != nil {
		row = o.getRecord.QueryRowContext(ctx, workspace, kind, id)
	} else {
		row = o.read.QueryRowContext(ctx, getRecordQuery, workspace, kind, id)
	}
	err := row.Scan(&r.Parent, &r.Status, &created, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Record{}, fmt.Errorf("sqlite: get %s %s: %w", kind, id, store.ErrNotFound)
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("sqlite: get %s %s: %w", kind, id, err)
	}
	r.Created = store.FromMillis(created)
	r.Data = []byte(data)
	return r, nil
}

// dialect writes SQLite's side of a listing.
type dialect struct{}

func (dialect) From(bool) string { return "records" }

func (dialect) Field(path string, typ store.FieldType) string {
	p := "'$." + path + "'" // path is checked: letters, digits, _ and dots
	switch typ {
	case store.Number:
		return "CASE WHEN json_type(records.data, " + p + ") IN ('integer', 'real') THEN json_extract(records.data, " + p + ") END"
	case store.Time:
		// unixepoch(…, 'subsec') is NULL for text that is not a date-time.
		return "CASE WHEN json_type(records.data, " + p + ") = 'text' THEN CAST(round(unixepoch(json_extract(records.data, " + p + "), 'subsec') * 1000) AS INTEGER) END"
	}
	return "CASE WHEN json_type(records.data, " + p + ") = 'text' THEN json_extract(records.data, " + p + ") END"
}

// Prefix matches bytes as a range, p <= expr < prefixEnd(p): TEXT compares
// with the BINARY collation (memcmp), as PostgreSQL's COLLATE "C" does
// (LIKE would ignore ASCII case), and on the id it is answered from the
// primary key.
func (dialect) Prefix(expr, p string, arg func(any) string) string {
	cond := expr + " >= " + arg(p)
	if end, ok := prefixEnd(p); ok {
		cond += " AND " + expr + " < " + arg(end)
	}
	return "(" + cond + ")"
}

func (dialect) Contains(expr, placeholder string) string {
	return "instr(" + lowerFunc + "(" + expr + "), " + placeholder + ") > 0"
}

// prefixEnd returns the smallest string above every string that starts with
// p (bytewise), and false when there is none (p is empty or all 0xff bytes).
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

func (o *ops) list(ctx context.Context, workspace, kind string, q store.Query, page bool) (store.Page, error) {
	plan, err := sqlq.NewPlan(dialect{}, workspace, kind, q, page)
	if err != nil {
		return store.Page{}, fmt.Errorf("sqlite: list %s: %w", kind, err)
	}
	rows, err := o.read.QueryContext(ctx, plan.SQL, plan.Args...)
	if err != nil {
		return store.Page{}, fmt.Errorf("sqlite: list %s: %w", kind, err)
	}
	defer rows.Close()
	var out []sqlq.Row
	for rows.Next() {
		r := sqlq.Row{Record: store.Record{Workspace: workspace, Kind: kind}}
		var created int64
		var data string
		dest := []any{&r.Record.ID, &r.Record.Parent, &r.Record.Status, &created, &data}
		if plan.Key {
			dest = append(dest, &r.Key)
		}
		if err := rows.Scan(dest...); err != nil {
			return store.Page{}, fmt.Errorf("sqlite: list %s: %w", kind, err)
		}
		r.Record.Created = store.FromMillis(created)
		r.Record.Data = []byte(data)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return store.Page{}, fmt.Errorf("sqlite: list %s: %w", kind, err)
	}
	p, err := plan.Page(out)
	if err != nil {
		return store.Page{}, fmt.Errorf("sqlite: list %s: %w", kind, err)
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
		return fmt.Errorf("sqlite: put: %w", err)
	}
	_, err = o.write.ExecContext(ctx,
		`INSERT INTO records (workspace_id, kind, id, parent_id, status, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (workspace_id, kind, id) DO UPDATE SET parent_id = excluded.parent_id, status = excluded.status, data = excluded.data`,
		r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(r.Created), string(r.Data))
	if err != nil {
		return fmt.Errorf("sqlite: put %s %s: %w", r.Kind, r.ID, err)
	}
	return nil
}

// CreateRecord implements store.Records.
func (o *ops) CreateRecord(ctx context.Context, r store.Record) error {
	r, err := r.Prepared(o.now)
	if err != nil {
		return fmt.Errorf("sqlite: create: %w", err)
	}
	res, err := o.write.ExecContext(ctx,
		`INSERT INTO records (workspace_id, kind, id, parent_id, status, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (workspace_id, kind, id) DO NOTHING`,
		r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(r.Created), string(r.Data))
	if err != nil {
		return fmt.Errorf("sqlite: create %s %s: %w", r.Kind, r.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: create %s %s: %w", r.Kind, r.ID, err)
	} else if n == 0 {
		return fmt.Errorf("sqlite: create %s %s: %w", r.Kind, r.ID, store.ErrConflict)
	}
	return nil
}

// DeleteRecord implements store.Records.
func (o *ops) DeleteRecord(ctx context.Context, workspace, kind, id string) error {
	res, err := o.write.ExecContext(ctx, `DELETE FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`, workspace, kind, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete %s %s: %w", kind, id, err)
	}
	return affected(res, "delete "+kind+" "+id)
}

// PutBlob implements store.Blobs.
func (o *ops) PutBlob(ctx context.Context, workspace, id string, content []byte) error {
	if content == nil {
		content = []byte{}
	}
	_, err := o.write.ExecContext(ctx,
		`INSERT INTO blobs (workspace_id, id, content) VALUES ($1, $2, $3)
		 ON CONFLICT (workspace_id, id) DO UPDATE SET content = excluded.content`, workspace, id, content)
	if err != nil {
		return fmt.Errorf("sqlite: put blob %s: %w", id, err)
	}
	return nil
}

// GetBlob implements store.Blobs.
func (o *ops) GetBlob(ctx context.Context, workspace, id string) ([]byte, error) {
	var b []byte
	err := o.read.QueryRowContext(ctx, `SELECT content FROM blobs WHERE workspace_id = $1 AND id = $2`, workspace, id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: get blob %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get blob %s: %w", id, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// DeleteBlob implements store.Blobs.
func (o *ops) DeleteBlob(ctx context.Context, workspace, id string) error {
	res, err := o.write.ExecContext(ctx, `DELETE FROM blobs WHERE workspace_id = $1 AND id = $2`, workspace, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete blob %s: %w", id, err)
	}
	return affected(res, "delete blob "+id)
}

// NextNumber implements store.Counters in one statement: SQLite runs it under
// the database's write lock, so numbers are unique across every handle (and
// process) sharing the file.
func (o *ops) NextNumber(ctx context.Context, workspace, name string, start int64) (int64, error) {
	var n int64
	err := o.write.QueryRowContext(ctx, `INSERT INTO counters (workspace_id, name, value) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_id, name) DO UPDATE SET value = MAX(counters.value + 1, excluded.value)
		RETURNING value`, workspace, name, start).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: counter %s: %w", name, err)
	}
	return n, nil
}

// Tx is a transaction of the SQLite store (see Store.WithTx). Besides
// store.Tx it offers the database/sql transaction itself (SQLTx), for work
// that must commit or roll back with the records, such as a River job
// inserted with riversqlite.
type Tx struct {
	ops
	tx *sql.Tx
}

// SQLTx returns the database/sql transaction (store.SQLTx).
func (t *Tx) SQLTx() *sql.Tx { return t.tx }

var (
	_ store.Tx    = (*Tx)(nil)
	_ store.SQLTx = (*Tx)(nil)
	_ store.SQLDB = (*Store)(nil)
)

// WithTx implements store.Transactor: fn runs in one IMMEDIATE transaction
// (it holds the database's write lock from its start, so it never fails
// half-way on a lock another writer took), on the writer connection. Inside
// fn, use tx only: the Store's own writes wait for the connection fn holds.
func (s *Store) WithTx(ctx context.Context, fn func(tx store.Tx) error) (err error) {
	sqlTx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	tx := &Tx{ops: ops{read: sqlTx, write: sqlTx, now: s.now}, tx: sqlTx}
	committed := false
	defer func() {
		if !committed {
			sqlTx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	committed = true
	return nil
}

// SQLDB returns the handle on the database file that every write of the
// store goes through (store.SQLDB): one connection, River's advice for
// SQLite, with WAL, a busy timeout and IMMEDIATE transactions. Build a River
// client on it (riversqlite.New) so that the store, the queue and their
// shared transactions take turns on one connection instead of failing with
// SQLITE_BUSY. Do not close it; Store.Close does.
func (s *Store) SQLDB() *sql.DB { return s.write }
