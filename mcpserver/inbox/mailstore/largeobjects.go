package mailstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// LargeObjects stores raw messages as PostgreSQL large objects, with one row
// per message in the table inbox_messages (workspace, id → object, size,
// digest). Every replica on the database reads every message, and a message
// is written in the same transaction as its records.
type LargeObjects struct {
	pool     *pgxpool.Pool
	spoolDir string
	// snapshots bounds the snapshots open at once (each holds a pooled
	// connection): at most half the pool, so the work their holders do
	// meanwhile (recording a run's progress) always finds a connection.
	snapshots chan struct{}
}

// largeObjectsSchema is created by Migrate (in the pool's search_path).
const largeObjectsSchema = `CREATE TABLE IF NOT EXISTS inbox_messages (
	workspace_id text NOT NULL,
	id text NOT NULL,
	object oid NOT NULL,
	size bigint NOT NULL,
	sha256 bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (workspace_id, id)
)`

// readChunk caps the bytes one lo_get returns.
const readChunk = 1 << 20

// NewLargeObjects returns the store over a pool. spoolDir holds incoming
// spools on the local disk ("" means the system's temporary directory).
func NewLargeObjects(pool *pgxpool.Pool, spoolDir string) *LargeObjects {
	if spoolDir == "" {
		spoolDir = os.TempDir()
	}
	return &LargeObjects{pool: pool, spoolDir: spoolDir, snapshots: make(chan struct{}, max(1, pool.Config().MaxConns/2))}
}

// Migrate creates the message table if it does not exist.
func (o *LargeObjects) Migrate(ctx context.Context) error {
	if _, err := o.pool.Exec(ctx, largeObjectsSchema); err != nil {
		return fmt.Errorf("mailstore: creating inbox_messages: %w", err)
	}
	return nil
}

// NewSpool creates a spool on the local disk.
func (o *LargeObjects) NewSpool(limit int64) (*Spool, error) {
	return NewSpool(o.spoolDir, limit)
}

// KeepTx implements Store: the message is written as (workspace, id)
// inside tx, a store/pg transaction: a new large object with the bytes, and
// its row. Nothing is visible, and nothing stays, unless tx commits; once it
// has, the message is durable (PostgreSQL's commit is). The spool is left to
// the caller to Remove.
func (o *LargeObjects) KeepTx(ctx context.Context, tx store.Tx, m *Incoming, workspace, id string) error {
	ptx, ok := tx.(interface{ PgxTx() pgx.Tx })
	if !ok {
		return fmt.Errorf("mailstore: large objects are written in a PostgreSQL transaction, not %T", tx)
	}
	return o.keep(ctx, ptx.PgxTx(), m, workspace, id)
}

// oneStatement is the size up to which a message is written with its row
// in one statement (lo_from_bytea); larger ones are streamed in parts.
const oneStatement = 1 << 20

// statementBuffers hold a message on its way into one statement (pgx has
// sent it when Exec returns, so the buffer is free again).
var statementBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (o *LargeObjects) keep(ctx context.Context, tx pgx.Tx, m *Incoming, workspace, id string) error {
	if err := checkName("workspace", workspace); err != nil {
		return err
	}
	if err := checkName("message id", id); err != nil {
		return err
	}
	size := m.Size()
	if size <= oneStatement {
		pooled := statementBuffers.Get().(*[]byte)
		defer statementBuffers.Put(pooled)
		if int64(cap(*pooled)) < size {
			*pooled = make([]byte, size)
		}
		b := (*pooled)[:size]
		if _, err := m.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && len(b) == int(size)) {
			return fmt.Errorf("mailstore: reading message %s/%s: %w", workspace, id, err)
		}
		sum := sha256.Sum256(b)
		_, err := tx.Exec(ctx, `INSERT INTO inbox_messages (workspace_id, id, object, size, sha256) VALUES ($1, $2, lo_from_bytea(0, $3), $4, $5)`,
			workspace, id, b, size, sum[:])
		return recordError(workspace, id, err)
	}
	los := tx.LargeObjects()
	oid, err := los.Create(ctx, 0)
	if err != nil {
		return fmt.Errorf("mailstore: creating large object for %s/%s: %w", workspace, id, err)
	}
	lo, err := los.Open(ctx, oid, pgx.LargeObjectModeWrite)
	if err != nil {
		return fmt.Errorf("mailstore: opening large object for %s/%s: %w", workspace, id, err)
	}
	buf := make([]byte, 256<<10)
	sum := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(lo, sum), io.NewSectionReader(m, 0, size), buf); err != nil {
		lo.Close()
		return fmt.Errorf("mailstore: writing message %s/%s: %w", workspace, id, err)
	}
	if err := lo.Close(); err != nil {
		return fmt.Errorf("mailstore: closing large object for %s/%s: %w", workspace, id, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO inbox_messages (workspace_id, id, object, size, sha256) VALUES ($1, $2, $3, $4, $5)`,
		workspace, id, oid, size, sum.Sum(nil))
	return recordError(workspace, id, err)
}

// recordError says why a message's row could not be written.
func recordError(workspace, id string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("mailstore: message %s/%s already stored", workspace, id)
	}
	if err != nil {
		return fmt.Errorf("mailstore: recording message %s/%s: %w", workspace, id, err)
	}
	return nil
}

// Prepare implements Store: nothing happens before the transaction.
func (*LargeObjects) Prepare(context.Context, *Incoming, string, string) (func(context.Context) error, error) {
	return nil, nil
}

// PurgeTx implements Store: the object and its row are deleted in tx, a
// store/pg transaction, with the e-mail's record.
func (o *LargeObjects) PurgeTx(ctx context.Context, tx store.Tx, workspace, id string) (func(context.Context) error, error) {
	ptx, ok := tx.(interface{ PgxTx() pgx.Tx })
	if !ok {
		return nil, fmt.Errorf("mailstore: large objects are purged in a PostgreSQL transaction, not %T", tx)
	}
	return nil, o.DeleteTx(ctx, ptx.PgxTx(), workspace, id)
}

// Sweep implements Store: spool files of cut-off receipts (a message and
// its records commit together, so no message is left without a record).
func (o *LargeObjects) Sweep(_ context.Context, _ func(context.Context, string, string) (bool, error), _, before time.Time) (int, error) {
	return sweepSpools(o.spoolDir, before)
}

// Open returns a ranged reader over a stored message: each ReadAt fetches
// the range it needs (lo_get), so nothing is held in memory but the caller's
// buffer. The reader is one consistent snapshot: it reads inside a
// read-only REPEATABLE READ transaction begun by Open, so a purge committed
// meanwhile does not reach it (PostgreSQL keeps the bytes for the snapshot).
// It holds one pooled connection until Close; at most half the pool's
// connections are held by snapshots at once (Open waits, under ctx, for
// one to close), so a holder that needs another connection meanwhile — to
// record what it does with the message — never waits for ever on a pool
// that snapshots exhausted. Reads run under ctx: cancelling it fails them.
func (o *LargeObjects) Open(ctx context.Context, workspace, id string) (Message, error) {
	if err := checkName("workspace", workspace); err != nil {
		return nil, err
	}
	if err := checkName("message id", id); err != nil {
		return nil, err
	}
	select {
	case o.snapshots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("mailstore: opening message %s/%s: waiting for a snapshot: %w", workspace, id, ctx.Err())
	}
	release := func() { <-o.snapshots }
	tx, err := o.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		release()
		return nil, fmt.Errorf("mailstore: opening message %s/%s: %w", workspace, id, err)
	}
	m := &largeMessage{ctx: ctx, pool: o.pool, tx: tx, name: workspace + "/" + id, release: release}
	err = tx.QueryRow(ctx, `SELECT object, size FROM inbox_messages WHERE workspace_id = $1 AND id = $2`, workspace, id).Scan(&m.oid, &m.size)
	if err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		release()
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, gone(workspace + "/" + id)
		}
		return nil, fmt.Errorf("mailstore: opening message %s/%s: %w", workspace, id, err)
	}
	return m, nil
}

// OpenMessage implements inbox.Messages: the raw message of an e-mail.
func (o *LargeObjects) OpenMessage(ctx context.Context, workspace, emailID string) (inbox.Message, error) {
	return o.Open(ctx, workspace, emailID)
}

// DeleteMessage implements inbox.Messages (Delete).
func (o *LargeObjects) DeleteMessage(ctx context.Context, workspace, emailID string) error {
	return o.Delete(ctx, workspace, emailID)
}

// Delete removes a stored message and its large object in one transaction.
// Deleting a message that is not there is not an error.
func (o *LargeObjects) Delete(ctx context.Context, workspace, id string) error {
	return pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error { return o.DeleteTx(ctx, tx, workspace, id) })
}

// DeleteTx removes a stored message inside tx (so a purge can mark its record
// in the same transaction).
func (o *LargeObjects) DeleteTx(ctx context.Context, tx pgx.Tx, workspace, id string) error {
	var oid uint32
	err := tx.QueryRow(ctx, `DELETE FROM inbox_messages WHERE workspace_id = $1 AND id = $2 RETURNING object`, workspace, id).Scan(&oid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mailstore: deleting message %s/%s: %w", workspace, id, err)
	}
	los := tx.LargeObjects()
	if err := los.Unlink(ctx, oid); err != nil {
		return fmt.Errorf("mailstore: unlinking large object of %s/%s: %w", workspace, id, err)
	}
	return nil
}

// Stored implements Store.
func (o *LargeObjects) Stored(ctx context.Context, before time.Time, fn func(Stored) error) error {
	rows, err := o.pool.Query(ctx, `SELECT workspace_id, id, size, created_at FROM inbox_messages WHERE created_at < $1 ORDER BY created_at`, before)
	if err != nil {
		return fmt.Errorf("mailstore: listing messages: %w", err)
	}
	var all []Stored
	for rows.Next() {
		var s Stored
		if err := rows.Scan(&s.Workspace, &s.ID, &s.Size, &s.Modified); err != nil {
			rows.Close()
			return fmt.Errorf("mailstore: listing messages: %w", err)
		}
		all = append(all, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mailstore: listing messages: %w", err)
	}
	for _, s := range all {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

// largeMessage reads a large object in ranges inside its snapshot
// transaction (one connection: reads take turns). When that connection is
// lost (cut, the server restarted or failed over), the snapshot is begun
// again on another and the read goes on: a stored message's bytes never
// change, and one purged meanwhile reads as gone.
type largeMessage struct {
	ctx  context.Context
	pool *pgxpool.Pool
	mu   sync.Mutex
	tx   pgx.Tx
	oid  uint32
	size int64
	name string
	// release gives the snapshot's place back (LargeObjects.snapshots).
	release func()
}

func (m *largeMessage) Size() int64 { return m.size }

func (m *largeMessage) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tx == nil {
		return nil
	}
	err := m.tx.Rollback(context.WithoutCancel(m.ctx))
	m.tx = nil
	m.release()
	if err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return fmt.Errorf("mailstore: closing message %s: %w", m.name, err)
	}
	return nil
}

func (m *largeMessage) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("mailstore: negative offset %d reading %s", off, m.name)
	}
	if off >= m.size {
		return 0, io.EOF
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tx == nil {
		return 0, fmt.Errorf("mailstore: reading %s after Close", m.name)
	}
	n := 0
	pause := reopenFirstPause
	for n < len(p) && off < m.size {
		want := min(len(p)-n, readChunk, int(m.size-off))
		var chunk []byte
		err := m.tx.QueryRow(m.ctx, `SELECT lo_get($1, $2, $3)`, m.oid, off, want).Scan(&chunk)
		if err != nil && m.tx.Conn().IsClosed() && m.ctx.Err() == nil {
			if rerr := m.reopen(pause); rerr != nil {
				return n, fmt.Errorf("mailstore: reading %s at %d: %w; beginning its snapshot again: %w", m.name, off, err, rerr)
			}
			pause = min(2*pause, reopenLongestPause)
			continue
		}
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42704" { // undefined_object: purged
				return n, gone(m.name)
			}
			return n, fmt.Errorf("mailstore: reading %s at %d: %w", m.name, off, err)
		}
		if len(chunk) == 0 {
			return n, fmt.Errorf("mailstore: reading %s at %d: %w", m.name, off, io.ErrUnexpectedEOF)
		}
		copy(p[n:], chunk)
		n += len(chunk)
		off += int64(len(chunk))
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Pauses before beginning a lost snapshot again: the first, which doubles
// up to the longest while the database cannot be reached.
const (
	reopenFirstPause   = 50 * time.Millisecond
	reopenLongestPause = 2 * time.Second
)

// reopen begins the message's snapshot again on another connection, after
// pause and then as often as the database refuses, until it succeeds or
// the message's context ends.
func (m *largeMessage) reopen(pause time.Duration) error {
	m.tx.Rollback(context.WithoutCancel(m.ctx)) // its connection is gone already
	for {
		t := time.NewTimer(pause)
		select {
		case <-m.ctx.Done():
			t.Stop()
			return m.ctx.Err()
		case <-t.C:
		}
		tx, err := m.pool.BeginTx(m.ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err == nil {
			m.tx = tx
			return nil
		}
		if m.ctx.Err() != nil {
			return err
		}
		pause = min(2*pause, reopenLongestPause)
	}
}
