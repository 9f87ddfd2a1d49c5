package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// DefaultWorkspaceShare is Config.WorkspaceShare's default: one workspace
// may hold half of a queue's workers.
const DefaultWorkspaceShare = 0.5

// Snoozes of a job whose workspace is at its limit: the first after
// shareFirstWait, doubling up to shareMaxWait, each varied by a fifth.
const (
	shareFirstWait = 500 * time.Millisecond
	shareMaxWait   = 10 * time.Second
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

	mu      sync.Mutex
	running map[[2]string]int // (queue, workspace) → running here
}

func newShares(workers map[string]int, share float64, pool *pgxpool.Pool) *shares {
	s := &shares{limits: map[string]int{}, pool: pool, running: map[[2]string]int{}}
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

// admit reports whether a job may run now, and what to call when it ends.
func (s *shares) admit(ctx context.Context, job *rivertype.JobRow) (bool, func(), error) {
	limit := s.limits[job.Queue]
	ws := workspaceOf(job)
	if limit == 0 || ws == "" {
		return true, func() {}, nil
	}
	if s.pool == nil {
		key := [2]string{job.Queue, ws}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.running[key] >= limit {
			return false, nil, nil
		}
		s.running[key]++
		return true, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.running[key]--; s.running[key] == 0 {
				delete(s.running, key)
			}
		}, nil
	}
	var before int
	at := time.Now()
	if job.AttemptedAt != nil {
		at = *job.AttemptedAt
	}
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM river_job
		WHERE state = 'running' AND queue = $1 AND args->>'workspace' = $2 AND (attempted_at, id) < ($3, $4)`,
		job.Queue, ws, at, job.ID).Scan(&before)
	if err != nil {
		return false, nil, fmt.Errorf("queue: counting the running jobs of workspace %s in %s: %w", ws, job.Queue, err)
	}
	return before < limit, func() {}, nil
}

// wait is how long a job at its workspace's limit waits before it is
// tried again: longer the more often it waited.
func wait(job *rivertype.JobRow) time.Duration {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	json.Unmarshal(job.Metadata, &m)
	d := shareFirstWait << min(max(m.Snoozes, 0), 8)
	d = min(d, shareMaxWait)
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
	ok, done, err := m.s.admit(ctx, job)
	if err != nil {
		return err
	}
	if !ok {
		return river.JobSnooze(wait(job))
	}
	defer done()
	return doInner(ctx)
}
