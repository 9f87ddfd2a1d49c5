package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/server/metrics"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/resolve/eml"
)

// inboxStorage is where the Inbox keeps what arrives, shared by the intake,
// the pipeline and the MCP product: the queue (River on the store's
// database) and the raw messages (files beside the SQLite file, or large
// objects in PostgreSQL).
type inboxStorage struct {
	queue *queue.Queue
	// raw is the raw messages, for the intake, the pipeline and the
	// product alike; the demo's seeded e-mails are read from the store's
	// blobs.
	raw mailstore.Store
	// dir is the message directory (embedded store only).
	dir string
	// embedded says the store is the SQLite file: one process works its
	// queue.
	embedded bool
}

// openInboxStorage opens the Inbox's storage once; later calls return it.
// With -process (the default) the queue works every stage in this process;
// without, it only takes the jobs this process inserts.
func (a *assembly) openInboxStorage() (*inboxStorage, error) {
	if a.inbox != nil {
		return a.inbox, nil
	}
	s := &inboxStorage{}
	_, replicas := a.store.(interface{ PgxPool() *pgxpool.Pool })
	qcfg := a.queueConfig(replicas)
	var err error
	switch st := a.store.(type) {
	case interface{ SQLDB() *sql.DB }:
		s.embedded = true
		s.dir = a.cfg.Messages
		if s.dir == "" {
			s.dir = filepath.Join(filepath.Dir(a.cfg.StorePath), "kobana-messages")
		}
		d, err := mailstore.OpenDir(s.dir)
		if err != nil {
			return nil, err
		}
		s.raw = d
		if s.queue, err = queue.OpenSQLite(a.ctx, st.SQLDB(), qcfg); err != nil {
			return nil, err
		}
	case interface{ PgxPool() *pgxpool.Pool }:
		a.checkPool(st.PgxPool())
		lo := mailstore.NewLargeObjects(st.PgxPool(), a.cfg.Messages)
		if err := lo.Migrate(a.ctx); err != nil {
			return nil, err
		}
		s.raw = lo
		if s.queue, err = queue.OpenPostgres(a.ctx, st.PgxPool(), qcfg); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("the Inbox needs the embedded or the PostgreSQL store, not %T", a.store)
	}
	s.raw = mailstore.WithBlobs(s.raw, a.store)
	a.inbox = s
	return s, nil
}

// atLeast passes on the records of next from level up: River's own
// information (every few seconds, its job counts) stays out of the
// server's log; its warnings and errors do not.
type atLeast struct {
	slog.Handler
	level slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(attrs []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(attrs), h.level}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.level}
}

// newPipeline builds the Inbox's processing stages on the shared storage,
// with agents running the agents: the one place the model plugs in.
func (a *assembly) newPipeline(agents inbox.AgentRunner) (*pipeline.Pipeline, error) {
	s, err := a.openInboxStorage()
	if err != nil {
		return nil, err
	}
	p, err := pipeline.New(pipeline.Config{
		Store:  a.store,
		Queue:  s.queue,
		Raw:    s.raw,
		Agents: agents,
		Index: func(ctx context.Context, workspace, emailID string) (*eml.Index, error) {
			return intake.LoadIndex(ctx, a.store, workspace, emailID)
		},
		Executor:           executor.Options{Guard: a.guard, Network: a.cfg.Outbound},
		AgentRetrySchedule: a.cfg.AgentRetrySchedule,
		AppURL:             a.publicURL,
		Logger:             a.log,
		Observer:           pipelineObserver{a},
	})
	if err != nil {
		return nil, err
	}
	a.pipeline = p
	return p, nil
}

// modelBudget is the process's one budget for the model endpoints of
// Config.Agents (their rpm, tpm and max_in_flight), shared by every agent
// and workspace: the agent stage's calls wait there, not for workers. The
// pipeline service closes it when the server stops.
func (a *assembly) modelBudget() *budget.Budget {
	if a.budget == nil {
		a.budget = a.cfg.Agents.Budget(budget.Options{})
	}
	return a.budget
}

// notify gives the intake's events (email.received) their webhook
// deliveries, once the Inbox product has built the pipeline.
func (a *assembly) notify(ctx context.Context, tx store.Tx, workspace string, ev inbox.SystemEvent) error {
	if a.pipeline == nil {
		return nil
	}
	return a.pipeline.Notify(ctx, tx, workspace, ev)
}

// pipelineService works the Inbox's queue in this process: agent runs,
// workflows, webhook deliveries and retention (docs/pipeline.md). It runs
// beside the other services with Config.Process.
//
// An embedded store's queue is worked by one process at a time: the one
// holding the lock file beside the database. Another serve on the same file
// serves and receives, and takes the queue over when the holder stops.
type pipelineService struct {
	// state is its readiness: standby while another process works the
	// embedded store's queue, ok once this one works it.
	state state
	// lockPath is the embedded store's lock file; lock is it, once held.
	lockPath string
	lock     *os.File
	db       string
}

// lockRetry is how often a serve waiting for an embedded store's queue
// tries its lock again.
const lockRetry = 2 * time.Second

func (s *pipelineService) name() string { return "pipeline" }

// listen tries to take the embedded store's queue for this process.
func (s *pipelineService) listen(a *assembly) error {
	if _, ok := a.store.(interface{ SQLDB() *sql.DB }); !ok {
		return nil // replicas share PostgreSQL's queue
	}
	if a.cfg.StorePath == "" {
		return &ConfigError{errors.New("working the embedded store's queue needs its file (Config.StorePath), beside which its lock is kept")}
	}
	s.db, s.lockPath = a.cfg.StorePath, a.cfg.StorePath+".queue-lock"
	a.closers = append(a.closers, func() {
		if s.lock != nil {
			s.lock.Close()
		}
	})
	_, err := s.tryLock()
	return err
}

// tryLock takes the lock file if no other process holds it.
func (s *pipelineService) tryLock() (bool, error) {
	f, err := os.OpenFile(s.lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return false, fmt.Errorf("locking the queue of %s: %w", s.db, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("locking the queue of %s: %w", s.db, err)
	}
	s.lock = f
	return true, nil
}

// waiting says another process works the embedded store's queue.
func (s *pipelineService) waiting() bool { return s.lockPath != "" && s.lock == nil }

func (s *pipelineService) addr() net.Addr { return nil }

// ready is the pipeline's readiness.
func (s *pipelineService) ready() string { return s.state.get() }

func (s *pipelineService) announce(w io.Writer) {
	if s.waiting() {
		fmt.Fprintf(w, "another kobana serve works the Inbox's queue of %s: this one serves and receives, and takes the queue over if that one stops\n", s.db)
		return
	}
	fmt.Fprintln(w, "processing the Inbox's queue: agent runs, workflows, webhook deliveries, retention")
}

// serve waits for the embedded store's queue when another process holds
// it, resumes what a stopped process left (embedded store), and works the
// queue until ctx ends. Then it closes the model budget (agent runs waiting
// for a model call's admission end, their jobs to be tried again), stops
// taking jobs and lets the running ones
// finish within Config.StopGrace (River's soft stop): those still running
// near its end are cancelled and record what they were doing, as after a
// crash; a job that has not returned by then is left to the next start's
// restart scan. The queue runs on a context of its own, so the end of ctx
// (a signal) does not cancel the jobs at once.
func (s *pipelineService) serve(ctx context.Context, a *assembly) error {
	defer s.state.set("stopped")
	if a.pipeline == nil {
		s.state.set("ok")
		<-ctx.Done() // the Inbox is not served here
		return nil
	}
	if s.waiting() {
		s.state.set("standby")
		t := time.NewTicker(lockRetry)
		defer t.Stop()
		for s.lock == nil {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			if _, err := s.tryLock(); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.notices, "the kobana serve that worked the Inbox's queue of %s stopped: this one processes it now\n", s.db)
	}
	q := a.inbox.queue
	if a.inbox.embedded {
		if _, err := a.pipeline.Recover(ctx); err != nil {
			if ctx.Err() != nil {
				return nil // stopped before it began
			}
			return err
		}
	}
	events, unsubscribe := q.Subscribe(metrics.JobKinds...)
	defer unsubscribe()
	go func() {
		for ev := range events {
			a.metrics.Job(ev)
		}
	}()
	if err := q.Start(context.WithoutCancel(ctx)); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("starting the queue: %w", err)
	}
	s.state.set("ok")
	<-ctx.Done()
	s.state.set("stopping")
	if a.budget != nil {
		// The calls waiting for admission are refused (their jobs are
		// retried after the restart); those sent finish within the grace.
		a.budget.Close()
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.StopGrace)
	defer cancel()
	if err := q.Stop(stop); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			a.log.Warn("pipeline: jobs still running at the end of the stop's grace period are left to the next start", "grace", a.cfg.StopGrace)
			return nil
		}
		return err
	}
	return nil
}
