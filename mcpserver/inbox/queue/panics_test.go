package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// panicOnce panics on its job's first attempt and completes the next.
type panicOnce struct {
	river.WorkerDefaults[queue.AgentArgs]
	done chan int
}

func (w *panicOnce) Work(ctx context.Context, job *river.Job[queue.AgentArgs]) error {
	if job.Attempt == 1 {
		panic("injected: first attempt")
	}
	w.done <- len(job.Errors)
	return nil
}

func (w *panicOnce) NextRetry(*river.Job[queue.AgentArgs]) time.Time { return time.Now() }

// A worker's panic is recovered by River and recorded on the job, which is
// retried (not cancelled) and completes; the panic is reported on the job
// surface with River's trace.
func TestAJobThatPanicsIsRetried(t *testing.T) {
	heard := make(chan *panics.Panic, 4)
	stop := panics.Listen(func(p *panics.Panic) { heard <- p })
	defer stop()
	d, q := openLite(t, queue.Config{})
	w := &panicOnce{done: make(chan int, 1)}
	river.AddWorker(q.Workers(), w)
	if err := d.tx(t.Context(), func(tx any) error {
		_, err := q.InsertTx(t.Context(), tx, queue.AgentArgs{Workspace: "ws", EmailID: "eml_1"}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(context.Background())
	select {
	case errs := <-w.done:
		if errs != 1 {
			t.Errorf("the retried job carries %d errors, want the panic's", errs)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the job was not retried after its panic")
	}
	var p *panics.Panic
	select {
	case p = <-heard: // reported before the retry was scheduled
	default:
		t.Fatal("the panic was not reported")
	}
	if p.Surface != panics.Job || p.Where != queue.KindAgent || p.Value != "injected: first attempt" || len(p.Stack) == 0 {
		t.Errorf("heard %+v", p)
	}
}
