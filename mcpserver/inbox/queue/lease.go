package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// DefaultLease is Config.Lease's default: a replica that has not said for
// this long which jobs it works loses them to the others.
const DefaultLease = 30 * time.Second

// ErrNotHeld reports a job this worker no longer holds: its replica stopped
// answering the database for longer than the lease (or was cut off), and
// the job was given to another worker. Nothing the first worker writes for
// it from then on commits.
var ErrNotHeld = errors.New("queue: the job is no longer this worker's")

// leaseSchema is the table of the replicas working a PostgreSQL queue: each
// says, every lease/6, which jobs it is working. A job River has marked
// running that its replica does not list (the reply to its fetch was lost)
// or whose replica fell silent (it crashed, or its database connection is
// cut) is rescued once the lease has passed.
const leaseSchema = `CREATE TABLE IF NOT EXISTS inbox_queue_replicas (
	id text PRIMARY KEY,
	jobs bigint[] NOT NULL DEFAULT '{}',
	renewed_at timestamptz NOT NULL DEFAULT now()
)`

// rescueQuery gives the jobs that no live replica holds to the others: a
// running job attempted longer than a lease ago, whose replica (the last of
// attempted_by) is known (it renews leases: a replica of an earlier release
// is left to River's own rescue) and has not listed the job in a renewal
// within the lease. Each such job gets a new id — the job id is the fencing
// token: River completes a job by id without checking the attempt, so a
// worker that was cut off but still runs must not be able to complete (or
// fail, or snooze) the job another worker now runs — and becomes available
// again, its attempt counted, with the rescue among its errors; one that
// has had more than its attempts is discarded. $1 is the lease in seconds,
// $2 the error recorded.
const rescueQuery = `WITH stuck AS (
	SELECT j.id, j.kind, j.attempt, j.max_attempts, j.attempted_at, j.attempted_by[array_length(j.attempted_by, 1)] AS holder
	FROM river_job j
	JOIN inbox_queue_replicas r ON r.id = j.attempted_by[array_length(j.attempted_by, 1)]
	WHERE j.state = 'running'
		AND j.attempted_at < now() - make_interval(secs => $1)
		AND NOT (r.renewed_at > now() - make_interval(secs => $1) AND j.id = ANY (r.jobs))
	ORDER BY j.id
	LIMIT 500
	FOR UPDATE OF j SKIP LOCKED
)
UPDATE river_job j SET
	id = nextval(pg_get_serial_sequence('river_job', 'id')),
	state = CASE WHEN stuck.attempt > stuck.max_attempts THEN 'discarded'::river_job_state ELSE 'available'::river_job_state END,
	finalized_at = CASE WHEN stuck.attempt > stuck.max_attempts THEN now() END,
	scheduled_at = now(),
	errors = array_append(j.errors, jsonb_build_object('at', now(), 'attempt', stuck.attempt, 'error', $2::text, 'trace', '')),
	metadata = j.metadata || jsonb_build_object('kobana:rescued_from', stuck.id)
FROM stuck
WHERE j.id = stuck.id
RETURNING stuck.id, j.id, stuck.kind, stuck.holder, stuck.attempted_at, j.state::text`

// sweepQuery forgets the replicas that have been silent for ten leases and
// hold no running job.
const sweepQuery = `DELETE FROM inbox_queue_replicas r
WHERE r.renewed_at < now() - make_interval(secs => $1 * 10)
	AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.state = 'running' AND j.attempted_by[array_length(j.attempted_by, 1)] = r.id)`

// leases is a PostgreSQL replica's claim on the jobs it works: every
// lease/6 it renews the list of them; a replica that could not renew for
// half a lease stops its jobs (their contexts are cancelled with
// ErrNotHeld) before the others may take them, at a full lease. It also
// rescues the jobs no live replica holds (rescueQuery).
type leases struct {
	// pool is a small pool of the lease's own on the queue's database:
	// renewals and rescues never wait behind the workers for one of the
	// queue's connections (hundreds of agent runs reading at once made a
	// renewal miss its deadline, and the replica stop its own jobs).
	pool  *pgxpool.Pool
	id    string
	lease time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	running map[int64]context.CancelCauseFunc
	renewed time.Time // when the last successful renewal was sent
	stop    context.CancelFunc
	done    chan struct{}
	closing sync.Once
}

// leaseConns is the size of the leases' own pool: a renewal and a rescue
// at once.
const leaseConns = 2

// newLeases returns the leases of a replica working the queue on shared's
// database, with a pool of their own of the same configuration (it
// connects when first used).
func newLeases(shared *pgxpool.Pool, lease time.Duration, log *slog.Logger) (*leases, error) {
	cfg := shared.Config().Copy()
	cfg.MaxConns, cfg.MinConns = leaseConns, 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: a pool for the replicas' leases: %w", err)
	}
	return &leases{pool: pool, lease: lease, log: log, running: map[int64]context.CancelCauseFunc{}}, nil
}

// migrate creates the replicas' table (under a lock: replicas may start at
// once, and concurrent CREATE TABLE IF NOT EXISTS can collide).
func (l *leases) migrate(ctx context.Context) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('inbox_queue_replicas'))`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, leaseSchema); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// every is how often leases are renewed and rescues looked for.
func (l *leases) every() time.Duration { return max(l.lease/6, 100*time.Millisecond) }

// start renews this replica's lease once (so that the jobs it is about to
// fetch are covered), then keeps renewing and rescuing until stopped.
func (l *leases) start(id string) error {
	l.id = id
	ctx, cancel := context.WithCancel(context.Background())
	if err := l.renew(ctx); err != nil {
		cancel()
		return fmt.Errorf("queue: registering replica %s: %w", id, err)
	}
	l.stop, l.done = cancel, make(chan struct{})
	go l.loop(ctx)
	return nil
}

// close stops renewing and marks this replica's lease expired, so that a
// job it could not finish is rescued at once, and closes the leases' pool.
func (l *leases) close() {
	if l.stop == nil {
		l.pool.Close()
		return
	}
	l.closing.Do(func() {
		l.stop()
		<-l.done
		ctx, cancel := context.WithTimeout(context.Background(), l.every())
		defer cancel()
		l.pool.Exec(ctx, `UPDATE inbox_queue_replicas SET jobs = '{}', renewed_at = now() - make_interval(secs => $2) WHERE id = $1`, l.id, l.lease.Seconds())
		l.pool.Close()
	})
}

func (l *leases) loop(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.every())
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A panic of one round is reported and the next round runs on
		// time: the ticker is the backoff.
		panics.Do(panics.Background, "queue lease and rescue", func() {
			if err := l.renew(ctx); err != nil && ctx.Err() == nil {
				l.log.Warn("queue: could not renew this replica's lease on its jobs", "replica", l.id, "err", err)
			}
			l.fence()
			l.rescue(ctx)
			if n%60 == 59 {
				sctx, cancel := context.WithTimeout(ctx, l.every())
				l.pool.Exec(sctx, sweepQuery, l.lease.Seconds())
				cancel()
			}
		})
	}
}

// renew writes the jobs this replica works, with the database's time.
func (l *leases) renew(ctx context.Context) error {
	l.mu.Lock()
	ids := make([]int64, 0, len(l.running))
	for id := range l.running {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	sent := time.Now()
	ctx, cancel := context.WithTimeout(ctx, l.every())
	defer cancel()
	_, err := l.pool.Exec(ctx, `INSERT INTO inbox_queue_replicas (id, jobs, renewed_at) VALUES ($1, $2, now())
		ON CONFLICT (id) DO UPDATE SET jobs = EXCLUDED.jobs, renewed_at = now()`, l.id, ids)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.renewed = sent
	l.mu.Unlock()
	return nil
}

// held reports whether this replica's lease is fresh: renewed within half a
// lease, well before another replica may take its jobs.
func (l *leases) held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.renewed) < l.lease/2
}

// fence stops every job this replica works when its lease could not be
// renewed for half a lease: from a full lease on, another replica may run
// them. Their contexts are cancelled with ErrNotHeld, and they are no
// longer listed (should a late renewal get through).
func (l *leases) fence() {
	if l.held() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.running) == 0 {
		return
	}
	l.log.Error("queue: this replica could not renew its lease on its jobs for half a lease; stopping them before another replica takes them over",
		"replica", l.id, "jobs", len(l.running), "lease", l.lease)
	for id, cancel := range l.running {
		cancel(fmt.Errorf("%w: replica %s could not reach the database for %v", ErrNotHeld, l.id, l.lease/2))
		delete(l.running, id)
	}
}

// rescue gives the jobs no live replica holds to the others, and says so.
func (l *leases) rescue(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, l.every())
	defer cancel()
	why := fmt.Sprintf("the replica working this job stopped renewing its lease (or never received the job) for %v; rescued by replica %s", l.lease, l.id)
	rows, err := l.pool.Query(ctx, rescueQuery, l.lease.Seconds(), why)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("queue: could not look for jobs to rescue", "replica", l.id, "err", err)
		}
		return
	}
	defer rows.Close()
	for rows.Next() {
		var (
			old, id      int64
			kind, holder string
			attemptedAt  time.Time
			state        string
		)
		if err := rows.Scan(&old, &id, &kind, &holder, &attemptedAt, &state); err != nil {
			l.log.Warn("queue: reading a rescued job", "err", err)
			return
		}
		if state == string(rivertype.JobStateDiscarded) {
			l.log.Error("queue: a job no live replica held had used its attempts; discarded", "kind", kind, "job", old, "held_by", holder, "running_since", attemptedAt)
			continue
		}
		l.log.Warn("queue: rescued a job no live replica held; it runs again", "kind", kind, "job", old, "new_id", id,
			"held_by", holder, "running_since", attemptedAt, "rescued_by", l.id)
	}
}

// add records that this replica works a job, under a context that a lost
// lease cancels; the returned function forgets it.
func (l *leases) add(ctx context.Context, id int64) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	l.running[id] = cancel
	l.mu.Unlock()
	return ctx, func() {
		l.mu.Lock()
		delete(l.running, id)
		l.mu.Unlock()
		cancel(nil)
	}
}

// leaseMiddleware runs each job under its replica's lease: a job is not
// started while the lease is not fresh (it is snoozed, no attempt lost),
// and is listed in every renewal while it runs.
type leaseMiddleware struct {
	river.MiddlewareDefaults
	l *leases
}

// Work implements rivertype.WorkerMiddleware.
func (m *leaseMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !m.l.held() {
		return river.JobSnooze(m.l.every())
	}
	ctx, done := m.l.add(ctx, job.ID)
	defer done()
	return doInner(ctx)
}
