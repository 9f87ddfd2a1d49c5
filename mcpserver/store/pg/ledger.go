package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/internal/sqlq"
)

// quick bounds an operation on the confirmation path by Options.LedgerTimeout.
func (s *Store) quick(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.LedgerTimeout)
}

// SigningKey implements store.Keys, bounded by Options.LedgerTimeout (it is
// on the confirmation path). Replicas asking at once for the first key of a
// purpose all get the same key: it is created under an advisory lock (see
// sqlq.Conn.Locked), and a partial unique index allows one active key per
// purpose.
func (s *Store) SigningKey(ctx context.Context, purpose string) (store.Key, error) {
	ctx, cancel := s.quick(ctx)
	defer cancel()
	return s.shared.SigningKey(ctx, purpose)
}

// VerifyingKey implements store.Keys, bounded by Options.LedgerTimeout (it
// is on the confirmation path).
func (s *Store) VerifyingKey(ctx context.Context, purpose, id string) (store.Key, error) {
	ctx, cancel := s.quick(ctx)
	defer cancel()
	return s.shared.VerifyingKey(ctx, purpose, id)
}

// ---- Ledger ----

// dbNowMS is the database's clock in Unix milliseconds: the ledger's times
// are the database's, so that no replica's clock can shorten another's
// entries.
const dbNowMS = `floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`

// Consume implements store.Ledger with one statement whose uniqueness the
// database enforces: of any number of replicas recording the same nonce at
// once, exactly one inserts the row. It is bounded by Options.LedgerTimeout;
// any error other than ErrReplayed means nothing may run.
//
// The insert runs in an explicit transaction whose COMMIT is sent only while
// the caller is still waiting. A bare INSERT would commit on the server
// whenever it got there, even after Consume had given up on it (a statement
// queued behind a lock, a slow server): the caller would have answered
// confirmation_unavailable, and the user's retry would then be refused as a
// replay. Abandoned before COMMIT, the transaction is rolled back when its
// connection closes. Once COMMIT is sent its answer is awaited a little past
// the deadline (commitGrace), so that only a server dying at that very moment
// leaves the outcome unknown (reported as an error: nothing runs).
//
// An attempt that failed because its connection had died (a restarted
// server, terminated backends) is made again on another connection, never a
// dead one (see conns). That can never run a confirmed call twice: if an
// earlier attempt did commit before its answer was lost, the next finds the
// row and reports ErrReplayed, and nothing runs.
func (s *Store) Consume(ctx context.Context, nonce string, expires time.Time) error {
	ctx, cancel := s.quick(ctx)
	defer cancel()
	var inserted bool
	err := s.c.conns.retryWhen(ctx, retryable, func() (err error) {
		inserted, err = s.consume(ctx, nonce, expires)
		return err
	})
	if err != nil {
		return fmt.Errorf("pg: ledger: %w", err)
	}
	if !inserted {
		return store.ErrReplayed
	}
	return nil
}

// commitGrace is how long the answer to a ledger COMMIT already sent is
// awaited after the caller's deadline.
const commitGrace = time.Second

func (s *Store) consume(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, uncommitted{err}
	}
	defer func() {
		// A no-op after COMMIT; bounded, for a connection that hangs.
		rbCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitGrace)
		tx.Rollback(rbCtx)
		cancel()
	}()
	tag, err := tx.Exec(ctx, `INSERT INTO confirmation_ledger (nonce, consumed_at, expires_at) VALUES ($1, `+dbNowMS+`, $2)
		ON CONFLICT (nonce) DO NOTHING`, nonce, store.Millis(expires))
	if err != nil {
		return false, uncommitted{err}
	}
	if err := ctx.Err(); err != nil {
		return false, uncommitted{err}
	}
	commitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitGrace)
	defer cancel()
	if err := tx.Commit(commitCtx); err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// uncommitted is a ledger attempt that failed before its COMMIT was sent:
// whatever it did was rolled back, on the server or with the connection.
type uncommitted struct{ err error }

func (e uncommitted) Error() string { return e.err.Error() }
func (e uncommitted) Unwrap() error { return e.err }

// retryable reports a ledger attempt that died with its connection (a
// failure to connect or a timeout is not: see died): before COMMIT, any
// connection loss (nothing was recorded); at COMMIT, only when it was never
// sent or the server answered that it was shutting the session down.
func retryable(err error) bool {
	if errors.As(err, new(uncommitted)) {
		return died(err, true)
	}
	if unreachable(err) {
		return false
	}
	var pgErr *pgconn.PgError
	return pgconn.SafeToRetry(err) ||
		errors.As(err, &pgErr) && (pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03")
}

// purgeBatch is how many ledger rows one purge statement deletes at most.
const purgeBatch = 1000

// PurgeLedger deletes nonces consumed more than Options.LedgerRetention ago
// (by the database's clock) and returns how many. It deletes in batches of
// purgeBatch rows, skipping rows another transaction holds, so that it never
// waits on callers, and callers (whose new nonces it never touches) never wait
// on it for long. The background loop calls it every Options.PurgeInterval.
func (s *Store) PurgeLedger(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := s.c.Exec(ctx, sqlq.Upsert, `DELETE FROM confirmation_ledger WHERE nonce IN (
			SELECT nonce FROM confirmation_ledger WHERE consumed_at < `+dbNowMS+` - $1
			ORDER BY consumed_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, s.opts.LedgerRetention.Milliseconds(), purgeBatch)
		if err != nil {
			return total, fmt.Errorf("pg: ledger purge: %w", err)
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
	}
}

func (s *Store) purgeLoop(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.PurgeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := s.PurgeLedger(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("confirmation ledger purge failed", "error", err)
			} else if n > 0 {
				s.log.Debug("confirmation ledger purged", "deleted", n)
			}
		}
	}
}
