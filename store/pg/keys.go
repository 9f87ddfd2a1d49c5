package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kobana/workflow/store"
)

// keysLockClass is the first half of the advisory-lock key that serialises
// rotations of one purpose ("kbnk"); the second half is hashtext(purpose).
const keysLockClass int32 = 0x6b626e6b

// quick bounds an operation on the confirmation path by Options.LedgerTimeout.
func (s *Store) quick(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.LedgerTimeout)
}

// SigningKey implements store.Keys. Replicas asking at once for the first
// key of a purpose all get the same key: a partial unique index allows one
// active key per purpose, the losers' inserts do nothing, and everyone reads
// the winner's.
func (s *Store) SigningKey(ctx context.Context, purpose string) (store.Key, error) {
	ctx, cancel := s.quick(ctx)
	defer cancel()
	k, err := s.activeKey(ctx, purpose)
	if !errors.Is(err, store.ErrNotFound) {
		return k, err
	}
	k = store.NewKey(purpose, s.now())
	if err := s.exec(ctx, true, `INSERT INTO signing_keys (id, purpose, secret, created_at, retired_at) VALUES ($1, $2, $3, $4, 0)
		ON CONFLICT (purpose) WHERE retired_at = 0 DO NOTHING`, k.ID, purpose, k.Secret, store.Millis(k.Created)); err != nil {
		return store.Key{}, fmt.Errorf("pg: signing key %s: %w", purpose, err)
	}
	return s.activeKey(ctx, purpose)
}

func (s *Store) activeKey(ctx context.Context, purpose string) (store.Key, error) {
	k := store.Key{Purpose: purpose}
	var created int64
	err := s.retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT id, secret, created_at FROM signing_keys WHERE purpose = $1 AND retired_at = 0`, purpose).
			Scan(&k.ID, &k.Secret, &created)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Key{}, store.ErrNotFound
	}
	if err != nil {
		return store.Key{}, fmt.Errorf("pg: signing key %s: %w", purpose, err)
	}
	k.Created = store.FromMillis(created)
	return k, nil
}

// VerifyingKey implements store.Keys.
func (s *Store) VerifyingKey(ctx context.Context, purpose, id string) (store.Key, error) {
	ctx, cancel := s.quick(ctx)
	defer cancel()
	k := store.Key{ID: id, Purpose: purpose}
	var created, retired int64
	err := s.retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT secret, created_at, retired_at FROM signing_keys WHERE purpose = $1 AND id = $2`, purpose, id).
			Scan(&k.Secret, &created, &retired)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Key{}, store.ErrNotFound
	}
	if err != nil {
		return store.Key{}, fmt.Errorf("pg: verifying key %s: %w", id, err)
	}
	k.Created, k.Retired = store.FromMillis(created), store.FromMillis(retired)
	return k, nil
}

// RotateKey implements store.Keys: in one transaction, under an advisory
// lock per purpose (concurrent rotations queue up), the active key is retired
// and a new one inserted.
func (s *Store) RotateKey(ctx context.Context, purpose string) (store.Key, error) {
	k := store.NewKey(purpose, s.now())
	err := s.retry(ctx, false, func() error { return s.rotate(ctx, purpose, k) })
	if err != nil {
		return store.Key{}, fmt.Errorf("pg: rotate key %s: %w", purpose, err)
	}
	return k, nil
}

func (s *Store) rotate(ctx context.Context, purpose string, k store.Key) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, keysLockClass, purpose); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE signing_keys SET retired_at = $1 WHERE purpose = $2 AND retired_at = 0`, store.Millis(k.Created), purpose); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO signing_keys (id, purpose, secret, created_at, retired_at) VALUES ($1, $2, $3, $4, 0)`,
			k.ID, purpose, k.Secret, store.Millis(k.Created))
		return err
	})
}

// PruneKeys implements store.Keys.
func (s *Store) PruneKeys(ctx context.Context, purpose string, retiredBefore time.Time) error {
	err := s.exec(ctx, true, `DELETE FROM signing_keys WHERE purpose = $1 AND retired_at <> 0 AND retired_at < $2`, purpose, store.Millis(retiredBefore))
	if err != nil {
		return fmt.Errorf("pg: prune keys %s: %w", purpose, err)
	}
	return nil
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

// ConsumedNonce implements store.Ledger.
func (s *Store) ConsumedNonce(ctx context.Context, nonce string) (bool, error) {
	var used bool
	err := s.retry(ctx, true, func() error {
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM confirmation_ledger WHERE nonce = $1)`, nonce).Scan(&used)
	})
	if err != nil {
		return false, fmt.Errorf("pg: ledger: %w", err)
	}
	return used, nil
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
		var tag pgconn.CommandTag
		err := s.retry(ctx, true, func() (err error) {
			tag, err = s.pool.Exec(ctx, `DELETE FROM confirmation_ledger WHERE nonce IN (
			SELECT nonce FROM confirmation_ledger WHERE consumed_at < `+dbNowMS+` - $1
			ORDER BY consumed_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, s.opts.LedgerRetention.Milliseconds(), purgeBatch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("pg: ledger purge: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < purgeBatch {
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
