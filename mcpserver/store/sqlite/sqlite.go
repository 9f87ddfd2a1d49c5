package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	driver "modernc.org/sqlite" // the embedded, pure-Go database driver

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/internal/sqlq"
)

// Store is the embedded implementation of store.Store: one SQLite file
// through database/sql and the pure-Go modernc driver.
//
// It keeps two pools on the file: a writer with one connection, which every
// write and transaction takes in turn (SQLite admits one writer at a time;
// queuing in the pool instead of on the file's lock is what keeps a River
// client on the same handle free of SQLITE_BUSY), and readers, which WAL
// lets run beside the writer.
type Store struct {
	// The operations both stores share (records, blobs, counters,
	// identity, secrets, keys), over the two pools.
	shared
	write, read *sql.DB
	now         func() time.Time
	// prepared are the fixed reads on the path of every request (the token
	// lookup among them), prepared once on the reader pool.
	prepared map[string]*sql.Stmt
	// health follows whether the store's transactions commit.
	health store.WriteHealth
}

// readers is the number of connections of the reader pool.
const readers = 4

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store in the SQLite file at path and
// brings its schema up to date.
func Open(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	dsn := func(pragmas ...string) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "foreign_keys(1)")
		for _, p := range pragmas {
			q.Add("_pragma", p)
		}
		// BEGIN IMMEDIATE: a transaction takes the write lock when it
		// starts, so it waits for another writer (busy_timeout) instead of
		// failing when it first writes after reading.
		q.Set("_txlock", "immediate")
		return "file:" + path + "?" + q.Encode()
	}
	// synchronous(FULL): a commit is on disk when it returns (WAL mode with
	// NORMAL survives a crashed process but not a power cut), because a
	// commit is what the mail intake's "250 OK" promises.
	syncWithFdatasync()
	write, err := openDB(dsn("journal_mode(WAL)", "synchronous(FULL)"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	// The connection stays open: a new one would re-read the schema.
	write.SetConnMaxIdleTime(0)
	write.SetMaxIdleConns(1)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: migrate %s: %w", path, err)
	}
	read, err := openDB(dsn("query_only(1)"))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	s := &Store{write: write, read: read, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	fail := func(err error) (*Store, error) {
		s.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if s.prepared, err = prepare(ctx, read); err != nil {
		return fail(fmt.Errorf("prepare: %w", err))
	}
	ops := newOps(conn{read: read, write: write, writer: write, prepared: s.prepared}, s.now)
	s.shared = sqlq.NewStore(ops, nil) // SigningKey needs no sealer
	sealer, err := store.ResolveSecretKey(opts, func() (store.Key, error) { return s.SigningKey(ctx, store.SecretsKeyPurpose) })
	if err != nil {
		return fail(err)
	}
	s.shared = sqlq.NewStore(ops, sealer)
	return s, nil
}

// syncWithFdatasync makes SQLite commit with fdatasync(2) where the system
// has it, as SQLite's own builds for Linux do: it writes a file's data and
// the metadata needed to read it back (its size), which is all a commit's
// durability needs, without the timestamp update fsync(2) also forces
// through the file system's journal. The driver's default is fsync; the
// switch is process-wide, and where fdatasync is missing SQLite keeps fsync.
func syncWithFdatasync() {
	// ErrFdatasyncUnavailable (macOS, Windows): SQLite syncs as it did.
	driver.Fdatasync(true)
}

// openDB opens a handle on dsn through the registered modernc driver whose
// connections cache their prepared statements (see connector).
func openDB(dsn string) (*sql.DB, error) {
	h, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	drv := h.Driver()
	h.Close() // it opened no connection
	return sql.OpenDB(connector{dsn: dsn, driver: drv}), nil
}

// migrate brings the schema up to date in one write transaction. Several
// handles or processes opening a new file at once race to switch it to WAL
// and create the tables; SQLite answers the loser SQLITE_BUSY at once, without
// consulting busy_timeout, while the journal mode changes. Those answers are
// retried for as long as busy_timeout would have waited.
func migrate(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := migrateOnce(ctx, db)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

func migrateOnce(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return err
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code()&0xff == 5 // SQLITE_BUSY and its extended codes
	}
	return false
}

// Close closes the database.
func (s *Store) Close() error {
	closeAll(s.prepared)
	return errors.Join(s.read.Close(), s.write.Close())
}

// ---- Ledger ----

// Consume implements Ledger: one INSERT whose uniqueness the database
// enforces, so two replicas sharing the database cannot both consume a nonce.
func (s *Store) Consume(ctx context.Context, nonce string, expires time.Time) error {
	now := s.now()
	res, err := s.write.ExecContext(ctx, `INSERT INTO confirmation_ledger (nonce, consumed_at, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (nonce) DO NOTHING`, nonce, store.Millis(now), store.Millis(expires))
	if err != nil {
		return fmt.Errorf("sqlite: ledger: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: ledger: %w", err)
	}
	if n == 0 {
		return store.ErrReplayed
	}
	// Entries are useless once their state has expired (an expired state is
	// refused before the ledger is consulted); keep the table small. States
	// live minutes, so an entry consumed more than a day ago (by this same
	// clock, whatever the callers' clocks say) can go.
	if _, err := s.write.ExecContext(ctx, `DELETE FROM confirmation_ledger WHERE consumed_at < $1`, store.Millis(now.Add(-24*time.Hour))); err != nil {
		return fmt.Errorf("sqlite: ledger cleanup: %w", err)
	}
	return nil
}

var (
	_ store.Directory  = (*Store)(nil)
	_ store.SecretKeys = (*Store)(nil)
)
