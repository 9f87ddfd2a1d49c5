package sqlq

import (
	"context"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// Mode says what a statement does, so that a Conn knows where to run it and
// whether it may send it again after its connection failed.
type Mode uint8

const (
	// Read reads; it may run on a reader and be sent again.
	Read Mode = iota
	// Upsert writes, and may be sent again: a second run changes nothing
	// more.
	Upsert
	// Write writes, and is sent again only when it never reached the
	// server: a lost answer would otherwise report a false conflict, a
	// false not-found or skip a number.
	Write
)

// Rows are the rows a query returns (*sql.Rows and pgx.Rows are).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Conn is a store's way to its database — its pools, or one transaction —
// for Ops.
type Conn interface {
	// Exec runs a statement that returns no rows and reports how many rows
	// it touched.
	Exec(ctx context.Context, m Mode, sql string, args ...any) (int64, error)
	// QueryRow runs a statement that returns at most one row and scans it
	// into dest; no row is store.ErrNotFound.
	QueryRow(ctx context.Context, m Mode, sql string, args []any, dest ...any) error
	// Query runs a read and hands its rows to read, once per time the
	// statement is sent (read starts over on a retry).
	Query(ctx context.Context, sql string, args []any, read func(Rows) error) error
	// Locked runs fn in one transaction that holds lock until it ends, and
	// commits when fn returns nil: no two transactions holding the same
	// lock overlap, on any handle of the database. fn works through the
	// transaction's Conn. The whole transaction is sent again after its
	// connection failed as a statement of mode m would be. On a Conn that
	// is itself a transaction, fn runs in it once the lock is held.
	Locked(ctx context.Context, m Mode, lock Lock, fn func(Conn) error) error
}

// Lock names what Conn.Locked serialises: a class of locks and one lock
// within it. A database whose transactions all take one write lock
// (SQLite) needs neither; PostgreSQL takes the advisory lock (Class,
// hashtext(Name)).
type Lock struct {
	Class int32
	Name  string
}

// KeysLock is the class of the locks under which the signing keys of a
// purpose (the lock's Name) are created and rotated ("kbnk").
const KeysLock int32 = 0x6b626e6b

// Fixed are the statements of Ops and Store that a store may prepare (see
// Conn.QueryRow): the fixed reads on the path of every request.
var Fixed = []string{getRecordSQL, getBlobSQL, authenticateSQL, getPersonSQL, getWorkspaceSQL, verifyingKeySQL, activeKeySQL}

const (
	getRecordSQL    = `SELECT parent_id, status, created_at, data FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`
	getBlobSQL      = `SELECT content FROM blobs WHERE workspace_id = $1 AND id = $2`
	insertRecordSQL = `INSERT INTO records (workspace_id, kind, id, parent_id, status, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)`
	putRecordSQL    = insertRecordSQL + `
		 ON CONFLICT (workspace_id, kind, id) DO UPDATE SET parent_id = excluded.parent_id, status = excluded.status, data = excluded.data`
	createRecordSQL = insertRecordSQL + `
		 ON CONFLICT (workspace_id, kind, id) DO NOTHING`
	deleteRecordSQL = `DELETE FROM records WHERE workspace_id = $1 AND kind = $2 AND id = $3`
	putBlobSQL      = `INSERT INTO blobs (workspace_id, id, content) VALUES ($1, $2, $3)
		 ON CONFLICT (workspace_id, id) DO UPDATE SET content = excluded.content`
	deleteBlobSQL = `DELETE FROM blobs WHERE workspace_id = $1 AND id = $2`
)

// Ops are the operations on records, blobs and counters (store.Records,
// store.Blobs, store.Counters) written once for both stores over a Conn. A
// store embeds them in each transaction, and in a Store on its pools.
type Ops struct {
	name    string
	conn    Conn
	dialect Dialect
	now     func() time.Time
}

// NewOps returns the operations over c. name starts every error ("sqlite",
// "pg"), so that a log tells the databases apart; d writes the listings;
// now is the store's clock (a record written without a creation time, a
// token's, a key's, a secret's times).
func NewOps(name string, c Conn, d Dialect, now func() time.Time) Ops {
	return Ops{name: name, conn: c, dialect: d, now: now}
}

func (o *Ops) errorf(format string, args ...any) error {
	return fmt.Errorf(o.name+": "+format, args...)
}

// GetRecord implements store.Records.
func (o *Ops) GetRecord(ctx context.Context, workspace, kind, id string) (store.Record, error) {
	r := store.Record{Workspace: workspace, Kind: kind, ID: id}
	var created int64
	var data string
	if err := o.conn.QueryRow(ctx, Read, getRecordSQL, []any{workspace, kind, id}, &r.Parent, &r.Status, &created, &data); err != nil {
		return store.Record{}, o.errorf("get %s %s: %w", kind, id, err)
	}
	r.Created = store.FromMillis(created)
	r.Data = []byte(data)
	return r, nil
}

// ListRecords implements store.Records.
func (o *Ops) ListRecords(ctx context.Context, workspace, kind string, q store.Query) ([]store.Record, error) {
	p, err := o.list(ctx, workspace, kind, q, false)
	return p.Records, err
}

// ListPage implements store.Records.
func (o *Ops) ListPage(ctx context.Context, workspace, kind string, q store.Query) (store.Page, error) {
	return o.list(ctx, workspace, kind, q, true)
}

// CountByStatus implements store.Records.
func (o *Ops) CountByStatus(ctx context.Context, workspace, kind string, q store.Query) (map[string]int, error) {
	q.After, q.Before, q.BeforeID, q.Order = "", time.Time{}, "", store.Order{}
	q, err := q.Check()
	if err != nil {
		return nil, o.errorf("count %s: %w", kind, err)
	}
	st := CountByStatus(o.dialect, workspace, kind, q)
	out := map[string]int{}
	err = o.conn.Query(ctx, st.SQL, st.Args, func(rows Rows) error {
		clear(out)
		for rows.Next() {
			var status string
			var n int64
			if err := rows.Scan(&status, &n); err != nil {
				return err
			}
			out[status] = int(n)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, o.errorf("count %s: %w", kind, err)
	}
	return out, nil
}

func (o *Ops) list(ctx context.Context, workspace, kind string, q store.Query, page bool) (store.Page, error) {
	plan, err := NewPlan(o.dialect, workspace, kind, q, page)
	if err != nil {
		return store.Page{}, o.errorf("list %s: %w", kind, err)
	}
	var out []Row
	err = o.conn.Query(ctx, plan.SQL, plan.Args, func(rows Rows) error {
		out = out[:0]
		for rows.Next() {
			r := Row{Record: store.Record{Workspace: workspace, Kind: kind}}
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
		return store.Page{}, o.errorf("list %s: %w", kind, err)
	}
	p, err := plan.Page(out)
	if err != nil {
		return store.Page{}, o.errorf("list %s: %w", kind, err)
	}
	return p, nil
}

// PutRecord implements store.Records.
func (o *Ops) PutRecord(ctx context.Context, r store.Record) error {
	r, err := r.Prepared(o.now)
	if err != nil {
		return o.errorf("put: %w", err)
	}
	return o.exec(ctx, Upsert, "put "+r.Kind+" "+r.ID, putRecordSQL, r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(r.Created), string(r.Data))
}

// exec runs a statement that returns no rows; what names it in the error.
func (o *Ops) exec(ctx context.Context, m Mode, what, sql string, args ...any) error {
	if _, err := o.conn.Exec(ctx, m, sql, args...); err != nil {
		return o.errorf("%s: %w", what, err)
	}
	return nil
}

// CreateRecord implements store.Records. It is sent again only when it
// never reached the server: a retry after an insert whose commit went
// unseen would report a false conflict.
func (o *Ops) CreateRecord(ctx context.Context, r store.Record) error {
	r, err := r.Prepared(o.now)
	if err != nil {
		return o.errorf("create: %w", err)
	}
	n, err := o.conn.Exec(ctx, Write, createRecordSQL, r.Workspace, r.Kind, r.ID, r.Parent, r.Status, store.Millis(r.Created), string(r.Data))
	if err != nil {
		return o.errorf("create %s %s: %w", r.Kind, r.ID, err)
	}
	if n == 0 {
		return o.errorf("create %s %s: %w", r.Kind, r.ID, store.ErrConflict)
	}
	return nil
}

// DeleteRecord implements store.Records.
func (o *Ops) DeleteRecord(ctx context.Context, workspace, kind, id string) error {
	return o.affect(ctx, "delete "+kind+" "+id, deleteRecordSQL, workspace, kind, id)
}

// affect runs a DELETE or an UPDATE (a Write); one that touched no row is
// store.ErrNotFound.
func (o *Ops) affect(ctx context.Context, what, sql string, args ...any) error {
	n, err := o.conn.Exec(ctx, Write, sql, args...)
	if err != nil {
		return o.errorf("%s: %w", what, err)
	}
	if n == 0 {
		return o.errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// PutBlob implements store.Blobs.
func (o *Ops) PutBlob(ctx context.Context, workspace, id string, content []byte) error {
	if content == nil {
		content = []byte{} // a nil slice is sent as NULL
	}
	return o.exec(ctx, Upsert, "put blob "+id, putBlobSQL, workspace, id, content)
}

// GetBlob implements store.Blobs.
func (o *Ops) GetBlob(ctx context.Context, workspace, id string) ([]byte, error) {
	var b []byte
	if err := o.conn.QueryRow(ctx, Read, getBlobSQL, []any{workspace, id}, &b); err != nil {
		return nil, o.errorf("get blob %s: %w", id, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// DeleteBlob implements store.Blobs.
func (o *Ops) DeleteBlob(ctx context.Context, workspace, id string) error {
	return o.affect(ctx, "delete blob "+id, deleteBlobSQL, workspace, id)
}

// NextNumber implements store.Counters: the next number of a workspace's
// counter is start the first time (or whenever start is above the last
// number handed out), one more than the last number otherwise. It is one
// statement, so numbers are unique across every handle (and replica)
// sharing the database, with no lock held by the caller. It is sent again
// only when it never reached the server, since a lost answer would skip a
// number.
func (o *Ops) NextNumber(ctx context.Context, workspace, name string, start int64) (int64, error) {
	sql := `INSERT INTO counters (workspace_id, name, value) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_id, name) DO UPDATE SET value = ` + o.dialect.Greatest("counters.value + 1", "excluded.value") + `
		RETURNING value`
	var n int64
	if err := o.conn.QueryRow(ctx, Write, sql, []any{workspace, name, start}, &n); err != nil {
		return 0, o.errorf("counter %s: %w", name, err)
	}
	return n, nil
}
