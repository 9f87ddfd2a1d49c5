package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// cacheDB opens a one-connection handle through the caching connector and
// returns it with that connection's cache.
func cacheDB(t *testing.T, limit int) (*sql.DB, *sql.Conn, *cachingConn) {
	t.Helper()
	db, err := openDB("file:" + filepath.Join(t.TempDir(), "cache.db") + "?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var cc *cachingConn
	if err := conn.Raw(func(dc any) error { cc = dc.(*cachingConn); return nil }); err != nil {
		t.Fatal(err)
	}
	cc.limit = limit
	if _, err := conn.ExecContext(context.Background(), `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db, conn, cc
}

func values(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
		if len(out) > 100 {
			t.Fatalf("rows do not end: %q…", out[:10])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func cached(cc *cachingConn, query string) *cachedStmt {
	if e, ok := cc.stmts[query]; ok {
		return e.Value.(*cachedStmt)
	}
	return nil
}

func TestStatementsAreKeptAndReused(t *testing.T) {
	ctx := context.Background()
	_, conn, cc := cacheDB(t, 8)
	const insert = `INSERT INTO t (v) VALUES (?)`
	for _, v := range []string{"a", "b", "c"} {
		if _, err := conn.ExecContext(ctx, insert, v); err != nil {
			t.Fatal(err)
		}
	}
	first := cached(cc, insert)
	if first == nil {
		t.Fatal("the insert was not kept")
	}
	if _, err := conn.ExecContext(ctx, insert, "d"); err != nil {
		t.Fatal(err)
	}
	if cached(cc, insert) != first {
		t.Fatal("the insert was compiled again instead of reused")
	}
	const sel = `SELECT v FROM t WHERE v > ? ORDER BY v`
	for range 2 {
		rows, err := conn.QueryContext(ctx, sel, "b")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(values(t, rows), ","); got != "c,d" {
			t.Fatalf("query gave %q, want c,d (bindings of an earlier run must not leak)", got)
		}
		rows.Close()
	}
	if cs := cached(cc, sel); cs == nil || cs.busy {
		t.Fatalf("select after its rows closed: %+v, want kept and free", cs)
	}
}

// A query run again while its first rows are still open gets a statement of
// its own; both read their own results.
func TestBusyStatementGivesWay(t *testing.T) {
	ctx := context.Background()
	_, conn, cc := cacheDB(t, 8)
	for _, v := range []string{"a", "b", "c"} {
		if _, err := conn.ExecContext(ctx, `INSERT INTO t (v) VALUES (?)`, v); err != nil {
			t.Fatal(err)
		}
	}
	const sel = `SELECT v FROM t WHERE v >= ? ORDER BY v`
	outer, err := conn.QueryContext(ctx, sel, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Close() // a failing test releases the connection too
	var got []string
	for outer.Next() {
		var v string
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		inner, err := conn.QueryContext(ctx, sel, v)
		if err != nil {
			t.Fatal(err)
		}
		vs := values(t, inner)
		inner.Close()
		got = append(got, v+":"+strings.Join(vs, ""))
		if len(got) > 3 {
			t.Fatalf("the outer rows started over: %q", got)
		}
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	if want := "a:abc b:bc c:c"; strings.Join(got, " ") != want {
		t.Fatalf("nested queries gave %q, want %q", strings.Join(got, " "), want)
	}
	if cs := cached(cc, sel); cs == nil || cs.busy || len(cc.stmts) != 3 {
		t.Fatalf("after nesting: %+v, %d statements kept; want the select kept and free beside the create and the insert (its own statement not kept)", cs, len(cc.stmts))
	}
}

// The least recently used statement leaves first; one whose rows are open
// stays readable and is closed with them.
func TestEvictionWaitsForOpenRows(t *testing.T) {
	ctx := context.Background()
	_, conn, cc := cacheDB(t, 2)
	if _, err := conn.ExecContext(ctx, `INSERT INTO t (v) VALUES ('x'), ('y')`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, `SELECT v FROM t ORDER BY v`)
	if err != nil {
		t.Fatal(err)
	}
	held := cached(cc, `SELECT v FROM t ORDER BY v`)
	for i := range 3 {
		if _, err := conn.ExecContext(ctx, `UPDATE t SET v = v WHERE id = ?`+strings.Repeat(" ", i), 1); err != nil {
			t.Fatal(err)
		}
	}
	if len(cc.stmts) != 2 || cc.lru.Len() != 2 {
		t.Fatalf("%d statements kept (list %d), want the limit 2", len(cc.stmts), cc.lru.Len())
	}
	if !held.evicted || cached(cc, `SELECT v FROM t ORDER BY v`) != nil {
		t.Fatal("the open select should have left the cache, marked for closing")
	}
	if got := strings.Join(values(t, rows), ","); got != "x,y" {
		t.Fatalf("rows of an evicted statement read %q, want x,y", got)
	}
	if err := rows.Close(); err != nil {
		t.Fatalf("closing rows of an evicted statement: %v", err)
	}
}

// A statement that failed is dropped; the same SQL runs fine afterwards.
func TestFailedStatementIsRecompiled(t *testing.T) {
	ctx := context.Background()
	_, conn, cc := cacheDB(t, 8)
	const insert = `INSERT INTO t (id, v) VALUES (?, ?)`
	if _, err := conn.ExecContext(ctx, insert, 1, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, insert, 1, "again"); err == nil {
		t.Fatal("a duplicate primary key was accepted")
	}
	if cached(cc, insert) != nil {
		t.Fatal("a statement that failed stayed in the cache")
	}
	if _, err := conn.ExecContext(ctx, insert, 2, "b"); err != nil {
		t.Fatalf("the same insert after a failure: %v", err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("count %d (%v), want 2", n, err)
	}
}

// A kept statement sees a schema changed after it was compiled, and scripts
// of several statements run each time.
func TestSchemaChangesAndScripts(t *testing.T) {
	ctx := context.Background()
	_, conn, _ := cacheDB(t, 8)
	const script = `INSERT INTO t (v) VALUES ('s1'); INSERT INTO t (v) VALUES ('s2')`
	for range 2 {
		if _, err := conn.ExecContext(ctx, script); err != nil {
			t.Fatal(err)
		}
	}
	const sel = `SELECT * FROM t WHERE id = 1`
	cols := func() []string {
		rows, err := conn.QueryContext(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := strings.Join(cols(), ","); got != "id,v" {
		t.Fatalf("columns %q, want id,v", got)
	}
	if _, err := conn.ExecContext(ctx, `ALTER TABLE t ADD COLUMN w TEXT`); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cols(), ","); got != "id,v,w" {
		t.Fatalf("columns after ALTER TABLE %q, want id,v,w", got)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 4 {
		t.Fatalf("the script ran into %d rows (%v), want 4", n, err)
	}
}
