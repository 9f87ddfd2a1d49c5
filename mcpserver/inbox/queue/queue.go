package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// Config tunes the queue. Zero fields take the defaults.
type Config struct {
	// Workers is how many jobs of each queue run at once in this process.
	// nil means DefaultWorkers (SQLite) or ReplicaWorkers (PostgreSQL); a
	// queue missing from a non-nil map is not worked here. An empty
	// (non-nil) map makes an insert-only queue.
	Workers map[string]int
	// JobTimeout bounds one job's run (default 10 minutes: a workflow of 20
	// steps each allowed 30 seconds fits).
	JobTimeout time.Duration
	// PollInterval is how often idle workers look for new jobs when the
	// database cannot notify them (SQLite; default 200 ms). On PostgreSQL
	// LISTEN/NOTIFY wakes them and polling is only the fallback (default 1 s).
	PollInterval time.Duration
	// FetchCooldown is the least time between two fetches of one queue
	// (River's FetchCooldown): on PostgreSQL, where inserts notify the
	// workers, it is how long a job inserted just after a fetch may wait
	// (default PostgresFetchCooldown); on SQLite River's default, 100 ms
	// (an insert in this process wakes its workers at once).
	FetchCooldown time.Duration
	// RescueAfter is how long a job may stay running before it is taken for
	// abandoned (its process died) and made available again (default: twice
	// JobTimeout).
	RescueAfter time.Duration
	// Lease bounds how long a job stays with a PostgreSQL replica that
	// stopped answering (it crashed, its database connection was cut or
	// stalled, or the reply to its fetch was lost): every replica says
	// which jobs it works every Lease/6; one that could not for Lease/2
	// stops its jobs, and after Lease the others take them over (default
	// DefaultLease; negative leaves it to River's rescue after
	// RescueAfter). SQLite's single process needs none (RescueAbandoned).
	Lease time.Duration
	// WorkspaceShare is the share of each queue's workers (this process's)
	// that the jobs of one workspace may hold at once, counted across the
	// replicas: a job beyond it waits (snoozed, its attempt not counted)
	// while other workspaces' jobs run. 0 means DefaultWorkspaceShare, 1 or
	// more no limit; the limit is at least one job.
	WorkspaceShare float64
	// ID names this process among the replicas (default: River's).
	ID string
	// Logger receives River's logs (default: discard below warnings).
	Logger *slog.Logger
	// Periodic are periodic jobs (e.g. retention) this process schedules;
	// River's leader election makes one replica run them.
	Periodic []*river.PeriodicJob
	// SoftStopTimeout is how long Stop lets running jobs finish before their
	// contexts are cancelled (River's soft stop; 0 waits for them as long as
	// Stop's own context allows). A job cut this way sees its context end
	// with context.Canceled, a job past JobTimeout with
	// context.DeadlineExceeded.
	SoftStopTimeout time.Duration
}

// DefaultWorkers is the per-queue concurrency of Config.Workers == nil on
// SQLite. Workers mostly wait (on the model, on receivers); more of them
// make larger shared commits for the one writer, and one workspace holds
// half of them (Config.WorkspaceShare).
var DefaultWorkers = map[string]int{
	QueueAgent:       16,
	QueueWorkflow:    32,
	QueueWebhook:     32,
	QueueMaintenance: 1,
}

// AgentWorkers is the agent queue's size kobana serve gives a process
// whose model endpoints set no ceiling on calls in flight (it sizes the
// queue from their max_in_flight otherwise): an agent run waits for its
// endpoint's budget and then its model, holding no database connection,
// so hundreds of them cost a goroutine and its request each. The library's
// defaults (DefaultWorkers, ReplicaWorkers) stay small for callers whose
// runners are not bounded by a budget.
const AgentWorkers = 512

// PostgresFetchCooldown is Config.FetchCooldown's default on PostgreSQL.
// With River's 100 ms, each stage's job waited for the cooldown of the
// fetch that had just run: BenchmarkThroughput's 250 → workflow run stored
// latency fell from 563 ms to 165 ms (p50) and 1.3 s to 0.5 s (p99) at
// 25 ms, for a few more fetches per second while busy.
const PostgresFetchCooldown = 25 * time.Millisecond

// ReplicaWorkers is the per-queue concurrency of Config.Workers == nil on
// PostgreSQL: each replica's agent and workflow runs hold pooled
// connections while their e-mail is open, so fewer per replica.
var ReplicaWorkers = map[string]int{
	QueueAgent:       8,
	QueueWorkflow:    16,
	QueueWebhook:     16,
	QueueMaintenance: 1,
}

// Queue is River on one database, SQLite or PostgreSQL.
type Queue struct {
	workers *river.Workers
	lite    *river.Client[*sql.Tx]
	pg      *river.Client[pgx.Tx]
	// exec is the driver's executor, for the operations River's client
	// does not offer (RescueAbandoned).
	exec riverdriver.Executor
	// working says this process works jobs (Config.Workers names a queue).
	working bool
	// leases is a PostgreSQL replica's claim on its jobs (nil on SQLite,
	// or with Config.Lease negative).
	leases *leases
	// shares limits what one workspace holds of each queue.
	shares *shares
	// concurrency is how many jobs of each queue run at once here.
	concurrency map[string]int
}

// ErrWrongTx reports a transaction of the other database than the queue's.
var ErrWrongTx = errors.New("queue: transaction of another database than the queue's")

// OpenSQLite opens River on a SQLite database through db, the store's
// write handle (store.SQLDB), migrating River's tables. db must be limited
// to one connection (SetMaxOpenConns(1)), as River's SQLite driver asks: with
// one connection River's parallel internal work and the store's writes take
// turns in the process instead of failing with SQLITE_BUSY, and a job
// inserted with InsertTx goes through the store's own transaction. The
// handle stays the caller's to close, after Stop.
func OpenSQLite(ctx context.Context, db *sql.DB, cfg Config) (*Queue, error) {
	if db == nil {
		return nil, errors.New("queue: nil SQLite handle")
	}
	if n := db.Stats().MaxOpenConnections; n != 1 {
		return nil, fmt.Errorf("queue: the SQLite handle allows %d connections; River's SQLite driver needs exactly one (SetMaxOpenConns(1))", n)
	}
	driver := riversqlite.New(db)
	if err := migrate(ctx, driver, cfg.Logger); err != nil {
		return nil, fmt.Errorf("queue: migrating River's tables: %w", err)
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 200 * time.Millisecond
	}
	q := &Queue{workers: river.NewWorkers(), exec: driver.GetExecutor()}
	q.shares = newShares(workersOf(cfg), cfg.WorkspaceShare, nil, db)
	var err error
	q.lite, err = river.NewClient(driver, q.riverConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("queue: starting River: %w", err)
	}
	return q, nil
}

// OpenPostgres opens River on a PostgreSQL pool (the store's database, in
// the pool's search_path), migrating River's tables. The pool stays the
// caller's to close, after Stop.
func OpenPostgres(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Queue, error) {
	if pool == nil {
		return nil, errors.New("queue: nil PostgreSQL pool")
	}
	driver := riverpgxv5.New(pool)
	if err := migrate(ctx, driver, cfg.Logger); err != nil {
		return nil, fmt.Errorf("queue: migrating River's tables: %w", err)
	}
	if cfg.Workers == nil {
		cfg.Workers = ReplicaWorkers
	}
	if cfg.FetchCooldown == 0 {
		cfg.FetchCooldown = PostgresFetchCooldown
	}
	q := &Queue{workers: river.NewWorkers(), exec: driver.GetExecutor()}
	q.shares = newShares(workersOf(cfg), cfg.WorkspaceShare, pool, nil)
	var err error
	if cfg.Lease >= 0 {
		if cfg.Lease == 0 {
			cfg.Lease = DefaultLease
		}
		if q.leases, err = newLeases(pool, cfg.Lease, quiet(cfg.Logger)); err != nil {
			return nil, err
		}
		if err := q.leases.migrate(ctx); err != nil {
			return nil, fmt.Errorf("queue: creating the replicas' lease table: %w", err)
		}
	}
	q.pg, err = river.NewClient(driver, q.riverConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("queue: starting River: %w", err)
	}
	return q, nil
}

func migrate[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], logger *slog.Logger) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet(logger)})
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// quiet returns logger, or one that drops everything below warnings.
func quiet(logger *slog.Logger) *slog.Logger {
	if logger != nil {
		return logger
	}
	return slog.New(slog.DiscardHandler)
}

// workersOf is the per-queue concurrency cfg asks for.
func workersOf(cfg Config) map[string]int {
	if cfg.Workers == nil {
		return DefaultWorkers
	}
	return cfg.Workers
}

func (q *Queue) riverConfig(cfg Config) *river.Config {
	workers := workersOf(cfg)
	q.concurrency = workers
	queues := map[string]river.QueueConfig{}
	for name, n := range workers {
		if n > 0 {
			queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	q.working = len(queues) > 0
	timeout := cfg.JobTimeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	rescue := cfg.RescueAfter
	if rescue == 0 {
		rescue = 2 * timeout
	}
	c := &river.Config{
		ID:                   cfg.ID,
		JobTimeout:           timeout,
		RescueStuckJobsAfter: rescue,
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        cfg.FetchCooldown,
		Logger:               quiet(cfg.Logger),
		PeriodicJobs:         cfg.Periodic,
		SoftStopTimeout:      cfg.SoftStopTimeout,
		Workers:              q.workers,
		// The intake inserts the agent stage's job whether or not this
		// process works that queue; a replica that works a queue registers
		// the worker of every kind on it (the rescuer discards jobs of kinds
		// its leader does not know).
		SkipUnknownJobCheck: true,
		ErrorHandler:        panicReporter{},
	}
	if len(queues) > 0 {
		c.Queues = queues
	}
	if q.leases != nil {
		c.Middleware = append(c.Middleware, &leaseMiddleware{l: q.leases})
	}
	c.Middleware = append(c.Middleware, &shareMiddleware{s: q.shares})
	return c
}

// Workers is the registry of the stages' workers: add each with
// river.AddWorker before Start.
func (q *Queue) Workers() *river.Workers { return q.workers }

// Start begins working the configured queues. It needs a worker registered
// for every job kind it may fetch. Cancelling ctx stops the queue as Stop
// does (softly, with Config.SoftStopTimeout), so pass a context that ends
// only when the queue should stop, and prefer Stop.
func (q *Queue) Start(ctx context.Context) error {
	if q.lite != nil {
		return q.lite.Start(ctx)
	}
	if q.leases != nil && q.working {
		if err := q.leases.start(q.pg.ID()); err != nil {
			return err
		}
	}
	if err := q.pg.Start(ctx); err != nil {
		if q.leases != nil {
			q.leases.close()
		}
		return err
	}
	if q.leases != nil {
		go func() {
			<-q.pg.Stopped()
			q.leases.close()
		}()
	}
	return nil
}

// Stop stops fetching and waits for the running jobs to finish: for
// Config.SoftStopTimeout, after which their contexts are cancelled and it
// waits for them to return, or until ctx ends.
func (q *Queue) Stop(ctx context.Context) error {
	if q.lite != nil {
		return q.lite.Stop(ctx)
	}
	err := q.pg.Stop(ctx)
	if q.leases != nil {
		q.leases.close()
	}
	return err
}

// StopAndCancel stops fetching and cancels the contexts of the running
// jobs at once, then waits for them to return (or ctx to end): a hard stop,
// which the stages record as a crash would leave them.
func (q *Queue) StopAndCancel(ctx context.Context) error {
	if q.lite != nil {
		return q.lite.StopAndCancel(ctx)
	}
	return q.pg.StopAndCancel(ctx)
}

// driverTx returns the driver transaction inside tx: tx itself when it is a
// *sql.Tx or a pgx.Tx, or what its SQLTx or PgxTx method returns (the
// store's transactions, store.SQLTx and pg.PgxTxer).
func driverTx(tx any) any {
	switch t := tx.(type) {
	case interface{ SQLTx() *sql.Tx }:
		return t.SQLTx()
	case interface{ PgxTx() pgx.Tx }:
		return t.PgxTx()
	}
	return tx
}

// InsertTx enqueues a job inside the caller's transaction: a *sql.Tx (or a
// store transaction offering one) for a SQLite queue, a pgx.Tx (likewise)
// for a PostgreSQL one. The job exists if and only if
// the transaction commits. A unique job already present is not inserted
// again (the result says UniqueSkippedAsDuplicate).
func (q *Queue) InsertTx(ctx context.Context, tx any, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	var (
		res *rivertype.JobInsertResult
		err error
	)
	switch t := driverTx(tx).(type) {
	case *sql.Tx:
		if q.lite == nil {
			return nil, fmt.Errorf("queue: inserting %s: %w (a *sql.Tx on PostgreSQL)", args.Kind(), ErrWrongTx)
		}
		res, err = q.lite.InsertTx(ctx, t, args, opts)
	case pgx.Tx:
		if q.pg == nil {
			return nil, fmt.Errorf("queue: inserting %s: %w (a pgx.Tx on SQLite)", args.Kind(), ErrWrongTx)
		}
		res, err = q.pg.InsertTx(ctx, t, args, opts)
	default:
		return nil, fmt.Errorf("queue: inserting %s: %w (%T)", args.Kind(), ErrWrongTx, tx)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: inserting %s: %w", args.Kind(), err)
	}
	return res, nil
}

// Insert enqueues a job in a transaction of its own.
func (q *Queue) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	var (
		res *rivertype.JobInsertResult
		err error
	)
	if q.lite != nil {
		res, err = q.lite.Insert(ctx, args, opts)
	} else {
		res, err = q.pg.Insert(ctx, args, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: inserting %s: %w", args.Kind(), err)
	}
	return res, nil
}

// CompleteTx marks a running job completed inside the worker's transaction
// (the one that writes the job's records), so a crash after the commit never
// runs the job again and a crash before it leaves neither. Call it only from
// inside the job's Work.
func CompleteTx[T river.JobArgs](ctx context.Context, tx any, job *river.Job[T]) error {
	var err error
	switch t := driverTx(tx).(type) {
	case *sql.Tx:
		_, err = river.JobCompleteTx[*riversqlite.Driver](ctx, t, job)
	case pgx.Tx:
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, t, job)
	default:
		return fmt.Errorf("queue: completing job %d: %w (%T)", job.ID, ErrWrongTx, tx)
	}
	if errors.Is(err, rivertype.ErrNotFound) {
		return fmt.Errorf("queue: completing job %d (%s): %w (it was rescued and runs again under a new id)", job.ID, job.Kind, ErrNotHeld)
	}
	if err != nil {
		return fmt.Errorf("queue: completing job %d (%s): %w", job.ID, job.Kind, err)
	}
	return nil
}

// HeldTx checks, inside the worker's transaction, that its job is still
// its own: running under this attempt, under this id (a rescue gives a job
// a new one, see Config.Lease). A worker that was cut off from the
// database while another took its job over gets ErrNotHeld, and its
// transaction rolls back: nothing it starts writing after the takeover
// commits, however late its statements arrive. (One whose statements were
// split by the takeover still commits before the new worker's record of the
// same run, which waits for its row lock, and that record says what may
// have been sent.) On SQLite, whose one process works the queue, there is
// nothing to check.
func HeldTx[T river.JobArgs](ctx context.Context, tx any, job *river.Job[T]) error {
	switch t := driverTx(tx).(type) {
	case *sql.Tx:
		return nil
	case pgx.Tx:
		var one int
		err := t.QueryRow(ctx, `SELECT 1 FROM river_job WHERE id = $1 AND state = 'running' AND attempt = $2`, job.ID, job.Attempt).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("queue: job %d (%s), attempt %d: %w (it was rescued and runs again under a new id)", job.ID, job.Kind, job.Attempt, ErrNotHeld)
		}
		if err != nil {
			return fmt.Errorf("queue: checking job %d (%s) is still held: %w", job.ID, job.Kind, err)
		}
		return nil
	}
	return fmt.Errorf("queue: checking job %d: %w (%T)", job.ID, ErrWrongTx, tx)
}

// Job returns a job by id (for tests and operators).
func (q *Queue) Job(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	if q.lite != nil {
		return q.lite.JobGet(ctx, id)
	}
	return q.pg.JobGet(ctx, id)
}

// Subscribe returns a channel of River events of the given kinds (job
// completed, failed, …) and a function that ends the subscription.
func (q *Queue) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	if q.lite != nil {
		return q.lite.Subscribe(kinds...)
	}
	return q.pg.Subscribe(kinds...)
}

// Concurrency is how many jobs of a queue run at once in this process (0:
// the queue is not worked here).
func (q *Queue) Concurrency(queue string) int { return q.concurrency[queue] }

// WorkspaceLimit is how many jobs of one workspace run at once in a queue
// (Config.WorkspaceShare), 0 for no limit.
func (q *Queue) WorkspaceLimit(queue string) int { return q.shares.Limit(queue) }

// OneWriter reports whether the queue's database takes one writer at a
// time (SQLite), so that writers gain nothing from running in parallel.
func (q *Queue) OneWriter() bool { return q.lite != nil }

// Working reports whether this process works jobs (Config.Workers names at
// least one queue); an insert-only queue only enqueues.
func (q *Queue) Working() bool { return q.working }

// PeriodicJobs is the bundle to add periodic jobs to after Open; only a
// Working queue has one (River refuses otherwise).
func (q *Queue) PeriodicJobs() *river.PeriodicJobBundle {
	if q.lite != nil {
		return q.lite.PeriodicJobs()
	}
	return q.pg.PeriodicJobs()
}

// RescueAbandoned makes every job left running in the database available
// again at once and returns how many it rescued. Only a process that knows
// no other process works the queue may call it, before Start: the embedded
// SQLite store at start, where a job still marked running was being worked
// by a process that is gone (killed, or its machine stopped). On a database
// replicas share, a running job may belong to a live replica, and River's
// own rescuer makes it available again only after Config.RescueAfter. The
// rescue is recorded among the job's errors, and its attempt counts: a job
// that has used its attempts is run once more (a worker that finds its work
// half done must get the chance to record it).
func (q *Queue) RescueAbandoned(ctx context.Context) (int, error) {
	now := time.Now().UTC()
	n := 0
	var after int64
	for {
		stuck, err := q.exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{AfterID: after, Max: 500, StuckHorizon: now.Add(time.Second)})
		if err != nil {
			return n, fmt.Errorf("queue: listing jobs left running: %w", err)
		}
		if len(stuck) == 0 {
			return n, nil
		}
		msg, err := json.Marshal(rivertype.AttemptError{At: now, Error: "the process working this job stopped before finishing it; rescued when the queue opened again"})
		if err != nil {
			return n, err
		}
		p := &riverdriver.JobRescueManyParams{StuckHorizon: now.Add(time.Second)}
		for _, j := range stuck {
			p.ID = append(p.ID, j.ID)
			p.Error = append(p.Error, msg)
			p.FinalizedAt = append(p.FinalizedAt, nil)
			p.ScheduledAt = append(p.ScheduledAt, now)
			p.State = append(p.State, string(rivertype.JobStateAvailable))
			after = j.ID
		}
		if _, err := q.exec.JobRescueMany(ctx, p); err != nil {
			return n, fmt.Errorf("queue: rescuing jobs left running: %w", err)
		}
		n += len(stuck)
	}
}

// Depth is the jobs of one queue waiting and being worked.
type Depth struct {
	Available, Running int64
}

// Queues are the pipeline's queue names, one per stage.
var Queues = []string{QueueAgent, QueueWorkflow, QueueWebhook, QueueMaintenance}

// Depths returns how many jobs each of the pipeline's queues has
// available (waiting to be worked now) and running, in every process
// working the database (metrics, readiness). It reads the database.
func (q *Queue) Depths(ctx context.Context) (map[string]Depth, error) {
	rows, err := q.exec.JobCountByQueueAndState(ctx, &riverdriver.JobCountByQueueAndStateParams{QueueNames: Queues})
	if err != nil {
		return nil, fmt.Errorf("queue: counting jobs: %w", err)
	}
	out := make(map[string]Depth, len(Queues))
	for _, r := range rows {
		out[r.Queue] = Depth{Available: r.CountAvailable, Running: r.CountRunning}
	}
	return out, nil
}

// Pending returns every job not finished — available, scheduled, pending,
// retryable, or running (in a process that is gone, when the caller knows
// none works the queue) — oldest first, for moving a queue to another
// database.
func (q *Queue) Pending(ctx context.Context) ([]*rivertype.JobRow, error) {
	params := river.NewJobListParams().States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStatePending,
		rivertype.JobStateRetryable, rivertype.JobStateRunning).OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(1000)
	var out []*rivertype.JobRow
	for {
		var res *river.JobListResult
		var err error
		if q.lite != nil {
			res, err = q.lite.JobList(ctx, params)
		} else {
			res, err = q.pg.JobList(ctx, params)
		}
		if err != nil {
			return nil, fmt.Errorf("queue: listing the jobs not finished: %w", err)
		}
		out = append(out, res.Jobs...)
		if len(res.Jobs) < 1000 {
			return out, nil
		}
		params = params.After(res.LastCursor)
	}
}

// Args decodes the arguments of a job of one of the pipeline's kinds.
func Args(kind string, encoded []byte) (river.JobArgs, error) {
	var args river.JobArgs
	switch kind {
	case KindAgent:
		args = &AgentArgs{}
	case KindWorkflow:
		args = &WorkflowArgs{}
	case KindWebhook:
		args = &WebhookArgs{}
	case KindRetention:
		args = &RetentionArgs{}
	default:
		return nil, fmt.Errorf("queue: a job of kind %q, which is none of the pipeline's", kind)
	}
	if err := json.Unmarshal(encoded, args); err != nil {
		return nil, fmt.Errorf("queue: the arguments of a %s job: %w", kind, err)
	}
	return derefArgs(args), nil
}

// derefArgs turns the pointer Args decoded into the value its kind's
// InsertOpts are declared on.
func derefArgs(a river.JobArgs) river.JobArgs {
	switch v := a.(type) {
	case *AgentArgs:
		return *v
	case *WorkflowArgs:
		return *v
	case *WebhookArgs:
		return *v
	case *RetentionArgs:
		return *v
	}
	return a
}
