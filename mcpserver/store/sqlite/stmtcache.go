package sqlite

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
)

// cachedStatements is how many prepared statements a connection keeps.
// The store and River together run about a hundred distinct statements.
const cachedStatements = 256

// connector opens connections to one SQLite file through the modernc driver
// and gives each a cache of prepared statements: database/sql hands a query
// with arguments straight to the driver, which would otherwise compile it
// again on every call (River's job insert spends more time being compiled
// than being run).
type connector struct {
	dsn    string
	driver driver.Driver
}

// Connect implements driver.Connector.
func (c connector) Connect(context.Context) (driver.Conn, error) {
	inner, err := c.driver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return newCachingConn(inner)
}

// Driver implements driver.Connector.
func (c connector) Driver() driver.Driver { return c.driver }

// sqliteConn is what the modernc driver's connections implement and a
// caching connection relies on.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a driver connection that keeps the statements of the
// queries and executions run on it, by their SQL text, least recently used
// out first. database/sql serialises every call on a connection, rows
// included, so it needs no lock of its own.
type cachingConn struct {
	sqliteConn
	limit int                      // statements kept at most
	stmts map[string]*list.Element // of *cachedStmt
	lru   list.List                // front: most recently used
}

// cachedStmt is one prepared statement of a cachingConn.
type cachedStmt struct {
	query string
	stmt  driver.Stmt
	// busy: rows of the statement are open, so it cannot run again until
	// they close; evicted: it left the cache while busy and is closed when
	// its rows are.
	busy, evicted bool
}

func newCachingConn(inner driver.Conn) (*cachingConn, error) {
	c, ok := inner.(sqliteConn)
	if !ok {
		inner.Close()
		return nil, fmt.Errorf("sqlite: the driver's connection %T lacks the context methods a statement cache needs", inner)
	}
	return &cachingConn{sqliteConn: c, limit: cachedStatements, stmts: map[string]*list.Element{}}, nil
}

var (
	_ driver.ExecerContext  = (*cachingConn)(nil)
	_ driver.QueryerContext = (*cachingConn)(nil)
	_ driver.Connector      = connector{}
)

// statement returns a prepared statement for query and whether it is the
// cache's (a busy cached statement gives way to one of the caller's own,
// which the caller closes).
func (c *cachingConn) statement(ctx context.Context, query string) (*cachedStmt, bool, error) {
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*cachedStmt)
		if !cs.busy {
			c.lru.MoveToFront(e)
			return cs, true, nil
		}
		st, err := c.PrepareContext(ctx, query)
		if err != nil {
			return nil, false, err
		}
		return &cachedStmt{query: query, stmt: st}, false, nil
	}
	st, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	cs := &cachedStmt{query: query, stmt: st}
	c.stmts[query] = c.lru.PushFront(cs)
	for c.lru.Len() > c.limit {
		c.evict(c.lru.Back())
	}
	return cs, true, nil
}

// evict takes a statement out of the cache, closing it unless its rows are
// still open (then their Close does).
func (c *cachingConn) evict(e *list.Element) error {
	cs := e.Value.(*cachedStmt)
	c.lru.Remove(e)
	delete(c.stmts, cs.query)
	if cs.busy {
		cs.evicted = true
		return nil
	}
	return cs.stmt.Close()
}

// forget drops a statement after it failed: SQLite resets a statement that
// failed, but a fresh one costs one compilation and rules out surprises.
func (c *cachingConn) forget(cs *cachedStmt) {
	if e, ok := c.stmts[cs.query]; ok && e.Value == cs {
		c.evict(e)
	}
}

// ExecContext implements driver.ExecerContext.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, cached, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := cs.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	switch {
	case !cached:
		cs.stmt.Close()
	case err != nil:
		c.forget(cs)
	}
	return res, err
}

// QueryContext implements driver.QueryerContext.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, cached, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := cs.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if cached {
			c.forget(cs)
		} else {
			cs.stmt.Close()
		}
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, conn: c, stmt: cs, own: !cached}, nil
}

// Close implements driver.Conn: the cached statements, then the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for c.lru.Len() > 0 {
		errs = append(errs, c.evict(c.lru.Front()))
	}
	errs = append(errs, c.sqliteConn.Close())
	return errors.Join(errs...)
}

// cachedRows are the rows of a statement run from the cache; closing them
// makes the statement free to run again (or closes it if it is the
// caller's own, or was evicted meanwhile).
type cachedRows struct {
	driver.Rows
	conn   *cachingConn
	stmt   *cachedStmt
	own    bool
	closed bool
}

// Close implements driver.Rows.
func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	r.stmt.busy = false
	switch {
	case r.own || r.stmt.evicted:
		return errors.Join(err, r.stmt.stmt.Close())
	case err != nil:
		r.conn.forget(r.stmt)
	}
	return err
}

// The column type methods of the driver's rows, passed through.

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *cachedRows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *cachedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
