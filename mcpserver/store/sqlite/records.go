package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/internal/sqlq"
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

// conn is the way of the shared operations (sqlq.Store, sqlq.Ops) to the
// file: reads on the reader pool and writes on the writer, or both inside a
// transaction. Nothing is sent twice: a local file has no connection to
// lose.
type conn struct {
	read, write querier
	// writer is the writer pool, which Locked begins its transactions on;
	// nil inside a transaction.
	writer *sql.DB
	// prepared are statements prepared on the reader pool, by their SQL:
	// the fixed reads of every request. None inside a transaction.
	prepared map[string]*sql.Stmt
}

func (c conn) on(m sqlq.Mode) querier {
	if m == sqlq.Read {
		return c.read
	}
	return c.write
}

func (c conn) Exec(ctx context.Context, m sqlq.Mode, query string, args ...any) (int64, error) {
	res, err := c.on(m).ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c conn) QueryRow(ctx context.Context, m sqlq.Mode, query string, args []any, dest ...any) error {
	var row *sql.Row
	if st := c.prepared[query]; st != nil && m == sqlq.Read {
		row = st.QueryRowContext(ctx, args...)
	} else {
		row = c.on(m).QueryRowContext(ctx, query, args...)
	}
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

func (c conn) Query(ctx context.Context, query string, args []any, read func(sqlq.Rows) error) error {
	rows, err := c.read.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return read(rows)
}

// Locked implements sqlq.Conn: every transaction of the store is IMMEDIATE
// (it takes the database's one write lock when it begins: Open sets
// _txlock), which covers any lock. Inside a transaction fn runs in it.
func (c conn) Locked(ctx context.Context, _ sqlq.Mode, _ sqlq.Lock, fn func(sqlq.Conn) error) error {
	if c.writer == nil {
		return fn(c)
	}
	tx, err := c.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(conn{read: tx, write: tx}); err != nil {
		return err
	}
	return tx.Commit()
}

// prepare prepares the fixed reads of the shared operations (sqlq.Fixed)
// on the reader pool.
func prepare(ctx context.Context, read *sql.DB) (map[string]*sql.Stmt, error) {
	prepared := map[string]*sql.Stmt{}
	for _, q := range sqlq.Fixed {
		st, err := read.PrepareContext(ctx, q)
		if err != nil {
			closeAll(prepared)
			return nil, err
		}
		prepared[q] = st
	}
	return prepared, nil
}

func closeAll(prepared map[string]*sql.Stmt) {
	for _, st := range prepared {
		st.Close()
	}
}

// shared are the operations both stores share, over the Store's pools.
type shared = sqlq.Store

// ops are the record, blob and counter operations both stores share, of
// the Store and of each transaction.
type ops = sqlq.Ops

// newOps returns the operations over c.
func newOps(c conn, now func() time.Time) ops {
	return sqlq.NewOps("sqlite", c, dialect{}, now)
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

func (dialect) Greatest(a, b string) string { return "MAX(" + a + ", " + b + ")" }

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
//
// A transaction the database refuses — its disk full, read-only or
// failing — ends with a store.RefusedError, and the store's WriteHealth
// follows it.
func (s *Store) WithTx(ctx context.Context, fn func(tx store.Tx) error) (err error) {
	defer func() {
		err = store.Refused(refusal(err), err)
		s.health.Observe(err)
	}()
	sqlTx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	tx := &Tx{ops: newOps(conn{read: sqlTx, write: sqlTx}, s.now), tx: sqlTx}
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

// WriteHealth returns whether the store's transactions lately committed or
// were refused (store.WriteWatcher).
func (s *Store) WriteHealth() *store.WriteHealth { return &s.health }

// refusal says why err, a transaction's error, is the database refusing
// writes (a store.Refused… reason), or "" when it is not.
func refusal(err error) string {
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_FULL:
			return store.RefusedFull
		case sqlite3.SQLITE_READONLY:
			return store.RefusedReadOnly
		case sqlite3.SQLITE_IOERR:
			return store.RefusedIO
		}
		return ""
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return store.RefusedFull
	case errors.Is(err, syscall.EROFS):
		return store.RefusedReadOnly
	case errors.Is(err, syscall.EIO):
		return store.RefusedIO
	}
	return ""
}

// SQLDB returns the handle on the database file that every write of the
// store goes through (store.SQLDB): one connection, River's advice for
// SQLite, with WAL, a busy timeout and IMMEDIATE transactions. Build a River
// client on it (riversqlite.New) so that the store, the queue and their
// shared transactions take turns on one connection instead of failing with
// SQLITE_BUSY. Do not close it; Store.Close does.
func (s *Store) SQLDB() *sql.DB { return s.write }
