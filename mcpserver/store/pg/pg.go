package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/internal/sqlq"
)

// Options configures Open.
type Options struct {
	// SecretKey and Now mean what they mean for the embedded store. Every
	// replica must be given the same SecretKey (or none: then the first
	// replica to start generates one and keeps it in the database, where the
	// others find it, which protects a secrets export but not a database dump).
	store.Options
	// LedgerTimeout bounds each operation on the confirmation path (Consume,
	// SigningKey, VerifyingKey), connection included, so that a destructive
	// call answers confirmation_unavailable quickly when the database is
	// unreachable or stuck. Zero means 2 seconds.
	LedgerTimeout time.Duration
	// LedgerRetention is how long a consumed nonce is kept, by the database's
	// clock. It must exceed the confirmation lifetime (5 minutes) plus the
	// clock skew between replicas. Zero means 24 hours.
	LedgerRetention time.Duration
	// PurgeInterval is how often a background loop deletes nonces older than
	// LedgerRetention. Zero means one minute; negative disables the loop
	// (PurgeLedger can still be called).
	PurgeInterval time.Duration
	// AuthGrace is how long after a token was last authenticated against the
	// database its principal is still accepted while the database is
	// unreachable (never when the database answers that the token is unknown,
	// revoked or expired). It lets a request get as far as the answer that
	// matters (confirmation_unavailable for a destructive call, a store error
	// for any other) instead of failing authentication during an outage.
	// Zero means 2 minutes; negative disables it.
	AuthGrace time.Duration
	// Logger receives the background purge's failures; nil discards them.
	Logger *slog.Logger
}

// Store implements store.Store on PostgreSQL. One Store per process; several
// processes (replicas) share one database.
type Store struct {
	// The operations both stores share (records, blobs, counters,
	// identity, secrets, keys), over the pool.
	shared
	// c is the pool, for the store's own statements.
	c       conn
	dialect dialect
	pool    *pgxpool.Pool
	now     func() time.Time
	opts    Options
	log     *slog.Logger
	grace   graceCache
	// health follows whether the store's transactions commit.
	health store.WriteHealth

	stop context.CancelFunc
	wg   sync.WaitGroup
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.Directory  = (*Store)(nil)
	_ store.SecretKeys = (*Store)(nil)
)

const (
	defaultConnectTimeout  = 5 * time.Second
	defaultLedgerTimeout   = 2 * time.Second
	defaultLedgerRetention = 24 * time.Hour
	defaultPurgeInterval   = time.Minute
	defaultAuthGrace       = 2 * time.Minute
)

// Open connects to the database named by dsn (a postgres:// URL or a
// keyword/value string, with pgx's pool_* parameters), brings its schema up
// to date (safe when several replicas start at once) and starts the ledger's
// purge loop. The connection is checked before Open returns. A dsn without
// connect_timeout gets 5 seconds; one without application_name is named
// "kobana".
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors quote the connection string, password included.
		return nil, errors.New("pg: invalid PostgreSQL connection string (want postgres://user@host:port/database?…)")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "kobana"
	}
	if opts.SecretKey != nil {
		if _, err := store.NewSealer(opts.SecretKey); err != nil {
			return nil, fmt.Errorf("pg: %w", err)
		}
	}
	if opts.LedgerTimeout <= 0 {
		opts.LedgerTimeout = defaultLedgerTimeout
	}
	if opts.LedgerRetention <= 0 {
		opts.LedgerRetention = defaultLedgerRetention
	}
	if opts.PurgeInterval == 0 {
		opts.PurgeInterval = defaultPurgeInterval
	}
	if opts.AuthGrace == 0 {
		opts.AuthGrace = defaultAuthGrace
	}
	cs := newConns(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pg: connect: %w", err)
	}
	s := &Store{c: conn{db: pool, conns: cs}, pool: pool, now: opts.Now, opts: opts, log: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	lower, err := lowerCollation(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pg: reading collations: %w", err)
	}
	s.dialect = dialect{lower: lower}
	ops := newOps(s.c, s.now, s.dialect)
	s.shared = sqlq.NewStore(ops, nil) // SigningKey needs no sealer
	s.grace.m = map[string]graceEntry{}
	if _, err := migrate(ctx, pool, migrations); err != nil {
		pool.Close()
		return nil, err
	}
	sealer, err := store.ResolveSecretKey(opts.Options, func() (store.Key, error) { return s.SigningKey(ctx, store.SecretsKeyPurpose) })
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pg: %w", err)
	}
	s.shared = sqlq.NewStore(ops, sealer)
	loopCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	if opts.PurgeInterval > 0 {
		s.wg.Add(1)
		go s.purgeLoop(loopCtx)
	}
	return s, nil
}

// Close stops the purge loop and closes every connection.
func (s *Store) Close() error {
	s.stop()
	s.wg.Wait()
	s.pool.Close()
	return nil
}

// refusal says why err, a transaction's error, is the database refusing
// writes (a store.Refused… reason), or "" when it is not: an answer about
// what was written (a constraint, a conflict) or the caller giving up.
func refusal(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "53100": // disk_full
			return store.RefusedFull
		case pgErr.Code == "25006": // read_only_sql_transaction
			return store.RefusedReadOnly
		case pgErr.Code == "58030": // io_error
			return store.RefusedIO
		}
	}
	if errors.Is(err, syscall.ENOSPC) {
		return store.RefusedFull
	}
	if unavailable(err) {
		return store.RefusedUnreachable
	}
	return ""
}

// unavailable reports whether err means the database could not be reached or
// could not serve, as opposed to an answer (no rows, a constraint, a syntax
// error) or the caller giving up.
func unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if len(pgErr.Code) < 2 {
			return false
		}
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"53", // insufficient resources (too many connections, …)
			"57": // operator intervention (admin shutdown, cannot connect now, …)
			return true
		}
		return false
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	return errors.As(err, &netErr) || errors.As(err, &connectErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, pgconn.ErrConnClosed)
}
