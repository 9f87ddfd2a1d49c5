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

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/internal/sqlq"
)

// dbtx is a *pgxpool.Pool or a pgx.Tx.
type dbtx interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// conn is the way to the database of the shared operations (a sqlq.Conn)
// and of the Store's own statements: the pool, or one transaction.
type conn struct {
	db    dbtx
	inTx  bool
	conns *conns
}

// shared are the operations both stores share, over the Store's pool.
type shared = sqlq.Store

// ops are the record, blob and counter operations both stores share, of
// the Store and of each transaction.
type ops = sqlq.Ops

// newOps returns the operations over c.
func newOps(c conn, now func() time.Time, d dialect) ops {
	return sqlq.NewOps("pg", c, d, now)
}

// retry is the pool's retry (see conns.retry); inside a transaction a
// statement is never sent again, since the transaction died with its
// connection.
func (c conn) retry(ctx context.Context, idempotent bool, f func() error) error {
	if c.inTx {
		return f()
	}
	return c.conns.retry(ctx, idempotent, f)
}

// Exec implements sqlq.Conn: a Write is sent again only if it never
// reached the server.
func (c conn) Exec(ctx context.Context, m sqlq.Mode, sql string, args ...any) (int64, error) {
	var tag pgconn.CommandTag
	err := c.retry(ctx, m != sqlq.Write, func() (err error) {
		tag, err = c.db.Exec(ctx, sql, args...)
		return err
	})
	return tag.RowsAffected(), err
}

// QueryRow implements sqlq.Conn.
func (c conn) QueryRow(ctx context.Context, m sqlq.Mode, sql string, args []any, dest ...any) error {
	err := c.retry(ctx, m != sqlq.Write, func() error {
		return c.db.QueryRow(ctx, sql, args...).Scan(dest...)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// Query implements sqlq.Conn.
func (c conn) Query(ctx context.Context, sql string, args []any, read func(sqlq.Rows) error) error {
	return c.retry(ctx, true, func() error {
		rows, err := c.db.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return read(rows)
	})
}

// Locked implements sqlq.Conn: the transaction takes the advisory lock
// (lock.Class, hashtext(lock.Name)) first, which it holds until it ends. On
// the pool the whole transaction is sent again after its connection died,
// as a statement of mode m would be.
func (c conn) Locked(ctx context.Context, m sqlq.Mode, lock sqlq.Lock, fn func(sqlq.Conn) error) error {
	locked := func(tx conn) error {
		if _, err := tx.db.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lock.Class, lock.Name); err != nil {
			return err
		}
		return fn(tx)
	}
	if c.inTx {
		return locked(c)
	}
	return c.retry(ctx, m != sqlq.Write, func() error {
		return pgx.BeginFunc(ctx, c.db, func(tx pgx.Tx) error {
			return locked(conn{db: tx, inTx: true, conns: c.conns})
		})
	})
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

func (dialect) Greatest(a, b string) string { return "GREATEST(" + a + ", " + b + ")" }

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
//
// A transaction the database refuses — cut, stalled, restarting, failing
// over, out of disk — ends with a store.RefusedError, and the store's
// WriteHealth follows it.
func (s *Store) WithTx(ctx context.Context, fn func(tx store.Tx) error) (err error) {
	defer func() {
		err = store.Refused(refusal(err), err)
		s.health.Observe(err)
	}()
	var pgTx pgx.Tx
	err = s.c.retry(ctx, true, func() (err error) {
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
	if err := fn(&Tx{ops: newOps(conn{db: pgTx, inTx: true, conns: s.c.conns}, s.now, s.dialect), tx: pgTx}); err != nil {
		return err
	}
	if err := pgTx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: commit: %w", err)
	}
	committed = true
	return nil
}

// WriteHealth returns whether the store's transactions lately committed or
// were refused (store.WriteWatcher).
func (s *Store) WriteHealth() *store.WriteHealth { return &s.health }

// PgxPool returns the store's connection pool, for building a River client
// (riverpgxv5.New) or reading large objects on the same database. Do not
// close it; Store.Close does.
func (s *Store) PgxPool() *pgxpool.Pool { return s.pool }
