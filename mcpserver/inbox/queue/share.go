package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// DefaultWorkspaceShare is Config.WorkspaceShare's default: one workspace
// may hold half of a queue's workers.
const DefaultWorkspaceShare = 0.5

// A job whose workspace is at its limit waits about as long as its
// workspace's youngest running job has run so far — short behind jobs that
// take milliseconds, long behind a receiver that hangs — within these
// bounds, varied by a fifth.
const (
	shareMinWait = shareHold
	shareMaxWait = 10 * time.Second
)

// shares keeps one workspace from holding more than its share of a queue's
// workers: a job whose workspace already runs its limit in that queue (on
// any replica) is snoozed — put back, its attempt not counted — and the
// worker takes the next job, of another workspace. A receiver that hangs or
// a model that crawls then holds up its own workspace's mail, not
// everyone's.
//
// The limit is counted where the jobs are: in the process on SQLite, whose
// one process works the queue; in River's table on PostgreSQL, across the
// replicas, by order of fetch — a job runs when fewer than the limit of its
// workspace's running jobs in the queue were fetched before it, so two
// replicas fetching at once never both take the last place.
type shares struct {
	limits map[string]int // queue → jobs of one workspace at once
	pool   *pgxpool.Pool  // PostgreSQL; nil counts in the process
	lite   *sql.DB        // SQLite: where others' waiting jobs are read

	mu      sync.Mutex
	running map[[2]string][]time.Time   // (queue, workspace) → when each job running here started (SQLite)
	ended   map[[2]string]chan struct{} // closed when a job of (queue, workspace) ends here
	// others is, by (queue, workspace), whether other workspaces' jobs
	// were waiting in the queue when last read.
	others map[[2]string]othersSeen
}

// othersSeen is whether other workspaces' jobs were waiting, and when that
// was read.
type othersSeen struct {
	at      time.Time
	waiting bool
}

// newShares limits the workspaces' jobs in the queues of workers, counted
// in River's table on pool (PostgreSQL) or in the process (pool nil; lite
// is then SQLite's handle).
func newShares(workers map[string]int, share float64, pool *pgxpool.Pool, lite *sql.DB) *shares {
	s := &shares{limits: map[string]int{}, pool: pool, lite: lite, running: map[[2]string][]time.Time{}, ended: map[[2]string]chan struct{}{},
		others: map[[2]string]othersSeen{}}
	if share <= 0 {
		share = DefaultWorkspaceShare
	}
	if share >= 1 {
		return s
	}
	for q, n := range workers {
		if q == QueueMaintenance || n < 2 {
			continue
		}
		s.limits[q] = max(1, int(math.Floor(share*float64(n))))
	}
	return s
}

// Limit is how many jobs of one workspace run at once in a queue, 0 for no
// limit.
func (s *shares) Limit(queue string) int { return s.limits[queue] }

// workspaceOf reads the workspace a job's arguments name.
func workspaceOf(job *rivertype.JobRow) string {
	var a struct {
		Workspace string `json:"workspace"`
	}
	json.Unmarshal(job.EncodedArgs, &a)
	return a.Workspace
}

// A job whose workspace is at its limit first holds its worker a moment
// (shareHold), trying again whenever one of its workspace's jobs ends here
// and every shareRecheck (one may end on another replica): behind jobs that
// take milliseconds it then runs without going back to the queue, and the
// workers kept from its workspace do not spin fetching its next jobs only
// to put them back. Only then, if jobs of other workspaces wait for a
// worker, is it snoozed; while none do (one workspace's burst), it keeps
// its worker for up to shareMaxHold — putting it back would only cost a
// write and a fetch, and the worker has nothing else to do.
const (
	shareHold    = 250 * time.Millisecond
	shareRecheck = 50 * time.Millisecond
	shareMaxHold = 5 * time.Second
)

// admit returns, for a job that may run now, what to call when it ends;
// for one that may not, how long it should wait.
func (s *shares) admit(ctx context.Context, job *rivertype.JobRow) (done func(), wait time.Duration, err error) {
	limit := s.limits[job.Queue]
	ws := workspaceOf(job)
	if limit == 0 || ws == "" {
		return func() {}, 0, nil
	}
	key := [2]string{job.Queue, ws}
	start := time.Now()
	deadline := start.Add(shareHold)
	for {
		ended := s.endedOf(key)
		done, wait, err := s.try(ctx, job, key, limit)
		if done != nil || err != nil {
			return done, wait, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			if time.Since(start) >= shareMaxHold {
				return nil, wait, nil
			}
			// Reading the queue failed: snooze, as under contention.
			if waiting, err := s.othersWaiting(ctx, key); err != nil || waiting {
				return nil, wait, nil
			}
			deadline = time.Now().Add(shareHold)
			continue
		}
		t := time.NewTimer(min(left, shareRecheck))
		select {
		case <-ended:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, wait, nil
		}
		t.Stop()
	}
}

// othersWaiting says whether jobs of workspaces other than key's are
// available in key's queue, read at most once every shareRecheck.
func (s *shares) othersWaiting(ctx context.Context, key [2]string) (bool, error) {
	s.mu.Lock()
	seen, ok := s.others[key]
	s.mu.Unlock()
	if ok && time.Since(seen.at) < shareRecheck {
		return seen.waiting, nil
	}
	var err error
	seen = othersSeen{at: time.Now()}
	if s.pool != nil {
		err = s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job
			WHERE state = 'available' AND queue = $1 AND scheduled_at <= now() AND args->>'workspace' <> $2)`, key[0], key[1]).Scan(&seen.waiting)
	} else {
		err = s.lite.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM river_job
			WHERE state = 'available' AND queue = ? AND scheduled_at <= datetime('now', 'subsec') AND json_extract(args, '$.workspace') <> ?)`, key[0], key[1]).Scan(&seen.waiting)
	}
	if err != nil {
		return false, fmt.Errorf("queue: looking for other workspaces' jobs in %s: %w", key[0], err)
	}
	s.mu.Lock()
	s.others[key] = seen
	s.mu.Unlock()
	return seen.waiting, nil
}

// endedOf returns a channel closed when the next job of key ends here.
func (s *shares) endedOf(key [2]string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.ended[key]
	if ch == nil {
		ch = make(chan struct{})
		s.ended[key] = ch
	}
	return ch
}

// end records that a job of key ended here.
func (s *shares) end(key [2]string) {
	if ch := s.ended[key]; ch != nil {
		close(ch)
		delete(s.ended, key)
	}
}

// try admits a job if its workspace runs fewer than limit jobs of its
// queue, counted here (SQLite) or in River's table (PostgreSQL).
func (s *shares) try(ctx context.Context, job *rivertype.JobRow, key [2]string, limit int) (func(), time.Duration, error) {
	now := time.Now()
	if s.pool == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if started := s.running[key]; len(started) >= limit {
			return nil, waitFor(now.Sub(slices.MaxFunc(started, time.Time.Compare))), nil
		}
		s.running[key] = append(s.running[key], now)
		return func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			started := s.running[key]
			if i := slices.Index(started, now); i >= 0 {
				started = slices.Delete(started, i, i+1)
			}
			if len(started) == 0 {
				delete(s.running, key)
			} else {
				s.running[key] = started
			}
			s.end(key)
		}, 0, nil
	}
	at := now
	if job.AttemptedAt != nil {
		at = *job.AttemptedAt
	}
	var (
		before int
		age    float64
	)
	err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM now() - max(attempted_at)), 0)::float8 FROM river_job
		WHERE state = 'running' AND queue = $1 AND args->>'workspace' = $2 AND (attempted_at, id) < ($3, $4)`,
		job.Queue, key[1], at, job.ID).Scan(&before, &age)
	if err != nil {
		return nil, 0, fmt.Errorf("queue: counting the running jobs of workspace %s in %s: %w", key[1], job.Queue, err)
	}
	if before >= limit {
		return nil, waitFor(time.Duration(age * float64(time.Second))), nil
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.end(key)
	}, 0, nil
}

// waitFor is how long a job waits behind running jobs whose youngest has
// run for age.
func waitFor(age time.Duration) time.Duration {
	d := min(max(age, shareMinWait), shareMaxWait)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// shareMiddleware snoozes a job whose workspace holds its share of the
// queue's workers.
type shareMiddleware struct {
	river.MiddlewareDefaults
	s *shares
}

// Work implements rivertype.WorkerMiddleware.
func (m *shareMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	done, wait, err := m.s.admit(ctx, job)
	if err != nil {
		return err
	}
	if done == nil {
		return river.JobSnooze(wait)
	}
	defer done()
	return doInner(ctx)
}
