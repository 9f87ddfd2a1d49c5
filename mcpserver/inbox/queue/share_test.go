package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
)

// slowJobs runs each job for a while (longer than a job at its workspace's
// limit holds its worker before it may be snoozed) and keeps how many of
// each workspace ran at once.
type slowJobs struct {
	river.WorkerDefaults[queue.AgentArgs]
	took time.Duration
	// slow, when set, are the only jobs (by e-mail id) that take took; the
	// others end at once.
	slow map[string]bool
	db   db

	mu      sync.Mutex
	running map[string]int
	most    map[string]int
	done    int
	// ended is the order the jobs ended in, by e-mail id.
	ended []string
}

func (w *slowJobs) Work(ctx context.Context, job *river.Job[queue.AgentArgs]) error {
	ws := job.Args.Workspace
	w.mu.Lock()
	w.running[ws]++
	w.most[ws] = max(w.most[ws], w.running[ws])
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.running[ws]--
		w.mu.Unlock()
	}()
	if w.slow == nil || w.slow[job.Args.EmailID] {
		select {
		case <-time.After(w.took):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := w.db.tx(ctx, func(tx any) error { return queue.CompleteTx(ctx, tx, job) })
	if err == nil {
		w.mu.Lock()
		w.done++
		w.ended = append(w.ended, job.Args.EmailID)
		w.mu.Unlock()
	}
	return err
}

func (w *slowJobs) finished() (done int, most map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	most = map[string]int{}
	for k, v := range w.most {
		most[k] = v
	}
	return w.done, most
}

// A workspace alone in its queue runs at most its share of the workers at
// once, and its other jobs keep their workers until a place is free rather
// than going back to the queue: nobody else's job waits for those workers,
// and a snooze would only cost a write and a fetch. (They were snoozed
// after a quarter of a second, over and over, during one workspace's
// burst.)
func TestAWorkspaceAloneKeepsItsJobsInsteadOfSnoozingThem(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			d, q := b.open(t, queue.Config{Workers: map[string]int{queue.QueueAgent: 4}, PollInterval: 100 * time.Millisecond})
			if limit := q.WorkspaceLimit(queue.QueueAgent); limit != 2 {
				t.Fatalf("one workspace may run %d of 4 jobs at once, want 2", limit)
			}
			w := &slowJobs{took: 400 * time.Millisecond, db: d, running: map[string]int{}, most: map[string]int{}}
			river.AddWorker(q.Workers(), w)
			const n = 6
			if err := d.tx(ctx, func(tx any) error {
				for i := range n {
					if _, err := q.InsertTx(ctx, tx, queue.AgentArgs{Workspace: "ws_a", EmailID: fmt.Sprintf("eml_%d", i)}, nil); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer q.Stop(ctx)
			if err := testwait.Until(30*time.Second, func() error {
				if done, _ := w.finished(); done < n {
					return fmt.Errorf("%d of %d jobs done", done, n)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, most := w.finished(); most["ws_a"] != 2 {
				t.Errorf("the workspace ran %d jobs at once, want its limit, 2", most["ws_a"])
			}
			if n := snoozed(t, d); n != 0 {
				t.Errorf("%d jobs were snoozed though no other workspace's job waited", n)
			}
		})
	}
}

// A job at its workspace's limit gives its worker up for another
// workspace's job that waits: with two workers, one of a workspace's two
// long jobs running and the other at the limit, the other workspace's job
// runs and ends first.
func TestAJobAtItsLimitMakesWayForAnotherWorkspace(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			d, q := b.open(t, queue.Config{Workers: map[string]int{queue.QueueAgent: 2}, PollInterval: 100 * time.Millisecond})
			w := &slowJobs{took: 3 * time.Second, slow: map[string]bool{"eml_a1": true, "eml_a2": true}, db: d, running: map[string]int{}, most: map[string]int{}}
			river.AddWorker(q.Workers(), w)
			insert := func(ws, id string) {
				t.Helper()
				if err := d.tx(ctx, func(tx any) error {
					_, err := q.InsertTx(ctx, tx, queue.AgentArgs{Workspace: ws, EmailID: id}, nil)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			insert("ws_a", "eml_a1")
			insert("ws_a", "eml_a2")
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer q.Stop(ctx)
			// Both of A's jobs have a worker: one runs, one waits at the
			// limit. Then B's job comes.
			if err := testwait.Until(10*time.Second, func() error {
				if n := running(t, d); n < 2 {
					return fmt.Errorf("%d jobs running", n)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			insert("ws_b", "eml_b1")
			if err := testwait.Until(30*time.Second, func() error {
				if done, _ := w.finished(); done < 3 {
					return fmt.Errorf("%d of 3 jobs done", done)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			w.mu.Lock()
			ended := w.ended
			w.mu.Unlock()
			if ended[0] != "eml_b1" {
				t.Errorf("the jobs ended in the order %v; want B's first, while A's long job ran", ended)
			}
			if _, most := w.finished(); most["ws_a"] != 1 {
				t.Errorf("workspace A ran %d jobs at once, want its limit, 1", most["ws_a"])
			}
		})
	}
}

// running counts the jobs River has running.
func running(t *testing.T, d db) int {
	t.Helper()
	var n int
	var err error
	switch d := d.(type) {
	case liteDB:
		err = d.QueryRow(`SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&n)
	case pgDB:
		err = d.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// snoozed counts the jobs River snoozed at least once.
func snoozed(t *testing.T, d db) int {
	t.Helper()
	var n int
	var err error
	switch d := d.(type) {
	case liteDB:
		err = d.QueryRow(`SELECT count(*) FROM river_job WHERE json_extract(metadata, '$.snoozes') IS NOT NULL`).Scan(&n)
	case pgDB:
		err = d.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE metadata ? 'snoozes'`).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}
