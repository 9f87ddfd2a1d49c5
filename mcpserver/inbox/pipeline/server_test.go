package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/internal/dnstest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/resolve/eml"
)

// serverEnv names the environment variable that turns the test binary into
// a server process: its value is a serverConfig in JSON. The crash and
// replica tests start the test binary again with it (never cmd/kobana:
// library tests do not import commands).
const serverEnv = "KOBANA_PIPELINE_TEST_SERVER"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(serverEnv); cfg != "" {
		os.Exit(serve(cfg))
	}
	os.Exit(m.Run())
}

// serverConfig is what a server process runs.
type serverConfig struct {
	// DB is the SQLite file, or a PostgreSQL connection string.
	DB string
	// Postgres says DB is PostgreSQL's.
	Postgres bool
	// Data is the directory of raw messages (SQLite) or of spool files.
	Data string
	// Ready is the file the server writes its SMTP address to, once it
	// takes mail.
	Ready string
	// Hold makes the server take mail but start working its queue only on
	// SIGUSR1, so a test can have every message accepted first.
	Hold bool
	// CrashAt names the point (pipeline's crash hook) where the server
	// kills itself with SIGKILL, the first time it gets there.
	CrashAt string
	// Replica names the server among replicas (River's client id).
	Replica string
	// Document is the scripted agent's answer.
	Document string
	// IntakeOnly makes the server only receive, as kobana serve
	// -process=false: its queue inserts jobs and works none.
	IntakeOnly bool
	// Defaults runs the queue as kobana serve does (its default polling),
	// not with the tests' quicker settings.
	Defaults bool
	// Lease is the queue's lease on PostgreSQL (queue.Config.Lease; zero:
	// its default).
	Lease time.Duration
	// PoolConns sizes the PostgreSQL pool (pool_max_conns; zero: pgx's
	// default).
	PoolConns int
	// CPUProfile, when set, is the file the server writes its CPU profile
	// to, from its start to its stop.
	CPUProfile string
}

// serve is the server process: the SMTP intake and the pipeline over one
// store, as kobana serve assembles them. It returns the exit status.
func serve(raw string) int {
	var cfg serverConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 2
	}
	if err := runServer(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

func runServer(cfg serverConfig) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.CrashAt != "" {
		var once sync.Once
		pipeline.SetCrashHook(func(point string) {
			if point == cfg.CrashAt {
				once.Do(func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) })
				select {} // the signal is on its way
			}
		})
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	qcfg := queue.Config{ID: cfg.Replica, PollInterval: 100 * time.Millisecond, Lease: cfg.Lease, Logger: logger}
	if cfg.Defaults {
		qcfg.PollInterval = 0
	}
	if cfg.IntakeOnly {
		qcfg.Workers = map[string]int{}
	}
	var (
		st  store.Store
		q   *queue.Queue
		raw mailstore.Store
		err error
	)
	if cfg.Postgres {
		if cfg.PoolConns > 0 {
			cfg.DB += fmt.Sprintf(" pool_max_conns=%d", cfg.PoolConns)
		}
		pst, err := pg.Open(ctx, cfg.DB, pg.Options{})
		if err != nil {
			return err
		}
		st = pst
		lo := mailstore.NewLargeObjects(pst.PgxPool(), cfg.Data)
		if err := lo.Migrate(ctx); err != nil {
			return err
		}
		if q, err = queue.OpenPostgres(ctx, pst.PgxPool(), qcfg); err != nil {
			return err
		}
		raw = lo
	} else {
		lst, err := sqlite.Open(ctx, cfg.DB, store.Options{})
		if err != nil {
			return err
		}
		st = lst
		dir, err := mailstore.OpenDir(cfg.Data)
		if err != nil {
			return err
		}
		if q, err = queue.OpenSQLite(ctx, lst.SQLDB(), qcfg); err != nil {
			return err
		}
		raw = dir
	}
	defer st.Close()
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	p, err := pipeline.New(pipeline.Config{
		Store: st, Queue: q, Raw: raw, Agents: pipeline.ScriptedAgent{Output: json.RawMessage(cfg.Document)},
		Index:           func(ctx context.Context, ws, id string) (*eml.Index, error) { return intake.LoadIndex(ctx, st, ws, id) },
		Executor:        executor.Options{Guard: g, StepTimeout: 10 * time.Second},
		WebhookSchedule: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
		AppURL:          "https://kobana.test",
		Logger:          logger,
	})
	if err != nil {
		return err
	}
	if !cfg.Postgres && !cfg.IntakeOnly {
		if _, err := p.Recover(ctx); err != nil {
			return err
		}
	}
	rec := &intake.StoreRecorder{Store: st, Raw: raw, Queue: q, Logger: logger, Events: p.Notify}
	dir := intake.StoreDirectory{Records: st, Workspaces: st, Domain: mailDomain}
	smtp := intake.NewServer(intake.Config{Domain: "mx.kobana.test", Logger: logger}, dir, rec, raw, &senderauth.Checker{Resolver: noDNS{}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go smtp.Serve(ln)
	defer smtp.Close()
	tmp := cfg.Ready + ".tmp"
	if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, cfg.Ready); err != nil {
		return err
	}
	if cfg.Hold {
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		select {
		case <-usr1:
		case <-ctx.Done():
			return nil
		}
	}
	if !cfg.IntakeOnly {
		if err := q.Start(ctx); err != nil {
			return err
		}
	}
	<-ctx.Done()
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	smtp.Shutdown(shut)
	if err := q.Stop(shut); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// noDNS answers every query with "not found", at once: the test senders
// publish nothing, and the test inbox accepts unauthenticated senders.
type noDNS = dnstest.NoDNS
