package queue_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
)

// syncLog is a slog text handler's output, safe to read while written.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The lease rescue takes exactly the running jobs no live replica holds:
// those of a replica that fell silent and those a live replica does not
// list (the reply to its fetch was lost), once they have run longer than
// the lease; not a job a live replica lists, not one just fetched, not one
// of a replica that renews no lease (an earlier release, left to River's
// own rescue). A rescued job has a new id (its old worker can no longer
// complete it), is available again and says why.
func TestLeaseRescueTakesTheJobsNoLiveReplicaHolds(t *testing.T) {
	ctx := context.Background()
	log := &syncLog{}
	d, q := openPG(t, queue.Config{Lease: 10 * time.Second, Workers: map[string]int{}, Logger: slog.New(slog.NewTextHandler(log, nil))})
	pool := d.(pgDB).Pool
	ids := map[string]int64{}
	for _, name := range []string{"silent", "unlisted", "listed", "fresh", "old-release"} {
		res, err := q.Insert(ctx, queue.AgentArgs{Workspace: "ws", EmailID: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = res.Job.ID
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	running := func(name, holder string, since time.Duration) {
		exec(`UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - make_interval(secs => $2), attempted_by = ARRAY[$3] WHERE id = $1`,
			ids[name], since.Seconds(), holder)
	}
	running("silent", "replica-dead", time.Minute)
	running("unlisted", "replica-live", time.Minute)
	running("listed", "replica-live", time.Minute)
	running("fresh", "replica-live", time.Second)
	running("old-release", "replica-old", time.Minute)
	exec(`INSERT INTO inbox_queue_replicas (id, jobs, renewed_at) VALUES ('replica-dead', ARRAY[$1::bigint], now() - interval '1 minute'), ('replica-live', ARRAY[$2::bigint], now())`,
		ids["silent"], ids["listed"])

	q.RescueOnce(ctx, "replica-rescuer")

	rows, err := pool.Query(ctx, `SELECT id, args->>'email_id', state::text, coalesce(metadata->>'kobana:rescued_from', ''), array_length(errors, 1) FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var (
			id          int64
			name, state string
			from        string
			errs        *int
		)
		if err := rows.Scan(&id, &name, &state, &from, &errs); err != nil {
			t.Fatal(err)
		}
		switch {
		case from != "":
			if id == ids[name] || from != strconv.FormatInt(ids[name], 10) || errs == nil || *errs != 1 {
				t.Errorf("%s: rescued as job %d from %s with %v errors", name, id, from, errs)
			}
			got[name] = "rescued, " + state
		default:
			got[name] = state
		}
	}
	want := map[string]string{"silent": "rescued, available", "unlisted": "rescued, available", "listed": "running", "fresh": "running", "old-release": "running"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
	if n := strings.Count(log.String(), "rescued a job no live replica held"); n != 2 {
		t.Errorf("%d rescue log lines, want 2:\n%s", n, log)
	}

	// The worker that was cut off can no longer write for its job; the
	// one whose job is listed still can.
	held := func(name string) error {
		job := &river.Job[queue.AgentArgs]{JobRow: &rivertype.JobRow{ID: ids[name], Attempt: 1, Kind: queue.KindAgent}}
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return queue.HeldTx(ctx, tx, job) })
	}
	if err := held("silent"); !errors.Is(err, queue.ErrNotHeld) {
		t.Errorf("HeldTx for the rescued job's old worker: %v, want ErrNotHeld", err)
	}
	if err := held("listed"); err != nil {
		t.Errorf("HeldTx for a job its replica holds: %v", err)
	}
}

// hangingWorker holds each job until its context ends and reports why it
// ended.
type hangingWorker struct {
	river.WorkerDefaults[queue.AgentArgs]
	started chan int64
	ended   chan error
}

func (w *hangingWorker) Work(ctx context.Context, job *river.Job[queue.AgentArgs]) error {
	w.started <- job.ID
	<-ctx.Done()
	w.ended <- context.Cause(ctx)
	return context.Cause(ctx)
}

// A replica that cannot reach the database stops its jobs after half a
// lease (their contexts are cancelled with ErrNotHeld): the other replicas
// may take them from a full lease on, and it must not be running them then.
func TestAReplicaCutOffStopsItsJobs(t *testing.T) {
	ctx := context.Background()
	proxy := pgtest.StartProxy(t)
	schema := pgtest.FreshSchema(t, "queue")
	pool, err := pgxpool.New(ctx, proxy.DSN(schema, "kobana-queue-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	log := &syncLog{}
	q, err := queue.OpenPostgres(ctx, pool, queue.Config{Lease: 3 * time.Second, PollInterval: 100 * time.Millisecond,
		Workers: map[string]int{queue.QueueAgent: 1}, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w := &hangingWorker{started: make(chan int64, 1), ended: make(chan error, 1)}
	river.AddWorker(q.Workers(), w)
	if _, err := q.Insert(ctx, queue.AgentArgs{Workspace: "ws", EmailID: "eml_1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		proxy.Set(pgtest.Up)
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		q.Stop(stop)
	}()
	select {
	case <-w.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the job never started")
	}
	proxy.Set(pgtest.Hang)
	select {
	case err := <-w.ended:
		if !errors.Is(err, queue.ErrNotHeld) {
			t.Fatalf("the job ended with %v, want ErrNotHeld", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the job still runs 30s after its replica was cut off; log:\n%s", log)
	}
	if err := testwait.Until(5*time.Second, func() error {
		if !strings.Contains(log.String(), "stopping them before another replica takes them over") {
			return errors.New("no log line says the jobs were stopped")
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}
