package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// panickyHandler is a log handler that panics, once armed, on the first
// record whose message contains trigger.
type panickyHandler struct {
	slog.Handler
	trigger string
	armed   *atomic.Bool
}

func (h panickyHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.trigger) && h.armed.CompareAndSwap(true, false) {
		panic("injected in the lease loop")
	}
	return h.Handler.Handle(ctx, r)
}

func (h panickyHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return panickyHandler{h.Handler.WithAttrs(as), h.trigger, h.armed}
}

func (h panickyHandler) WithGroup(name string) slog.Handler {
	return panickyHandler{h.Handler.WithGroup(name), h.trigger, h.armed}
}

// doneWorker completes every job.
type doneWorker struct {
	river.WorkerDefaults[queue.AgentArgs]
}

func (doneWorker) Work(context.Context, *river.Job[queue.AgentArgs]) error { return nil }

// A panic in a round of the lease loop (here the log handler, as the
// round says it rescued a job) is reported with its stack on the
// background surface, and the next round runs on time: the next stuck job
// is rescued.
func TestALeaseLoopPanicIsContainedAndTheLoopGoesOn(t *testing.T) {
	ctx := context.Background()
	log := &syncLog{}
	var armed atomic.Bool
	armed.Store(true)
	logger := slog.New(panickyHandler{slog.NewTextHandler(log, nil), "rescued a job", &armed})
	d, q := openPG(t, queue.Config{Lease: time.Second, PollInterval: 100 * time.Millisecond,
		Workers: map[string]int{queue.QueueAgent: 1}, Logger: logger})
	pool := d.(pgDB).Pool
	river.AddWorker(q.Workers(), doneWorker{})
	var stack atomic.Value
	stop := panics.Listen(func(p *panics.Panic) {
		if p.Surface == panics.Background && p.Where == "queue lease and rescue" {
			stack.Store(string(p.Stack))
		}
	})
	defer stop()
	if _, err := pool.Exec(ctx, `INSERT INTO inbox_queue_replicas (id, jobs, renewed_at) VALUES ('replica-dead', '{}', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	stuck := func(name string) {
		t.Helper()
		res, err := q.Insert(ctx, queue.AgentArgs{Workspace: "ws", EmailID: name}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 minute', attempted_by = ARRAY['replica-dead'] WHERE id = $1`,
			res.Job.ID); err != nil {
			t.Fatal(err)
		}
	}
	stuck("eml_1")
	before := panics.Count(panics.Background)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		q.Stop(stop)
	}()
	if err := testwait.Until(30*time.Second, func() error {
		if armed.Load() {
			return errors.New("the lease loop never logged a rescue")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := panics.Count(panics.Background) - before; got != 1 {
		t.Fatalf("%d panics counted on the background surface, want 1", got)
	}
	if s, _ := stack.Load().(string); !strings.Contains(s, "(*leases).rescue") {
		t.Fatalf("the panic was reported without its stack: %q", s)
	}
	// The loop goes on: a job stuck after the panic is rescued too.
	stuck("eml_2")
	if err := testwait.Until(30*time.Second, func() error {
		if n := strings.Count(log.String(), "rescued a job no live replica held"); n != 1 {
			return fmt.Errorf("%d rescues logged after the panic, want 1; log:\n%s", n, log)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Both rescued jobs ran again and completed.
	if err := testwait.Until(30*time.Second, func() error {
		var done int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'completed'`).Scan(&done); err != nil || done != 2 {
			return fmt.Errorf("%d jobs completed (%v), want both", done, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
