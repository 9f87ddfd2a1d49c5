package pipeline_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/resolve/eml"
)

// receivedAgo makes an e-mail's record say it was received d ago (its raw
// message's own file or object keeps its age).
func (e *env) receivedAgo(id string, d time.Duration) {
	e.t.Helper()
	m, err := e.repo().Emails.Get(e.ctx, testWS, id)
	if err != nil {
		e.t.Fatal(err)
	}
	m.ReceivedAt = time.Now().UTC().Add(-d)
	e.put(m)
}

// retain runs one retention job of the test workspace and waits for it to
// finish.
func (e *env) retain() {
	e.t.Helper()
	res, err := e.q.Insert(e.ctx, queue.RetentionArgs{Workspace: testWS}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	waitJob(e, res.Job.ID)
}

// waitJob waits for a job to be completed.
func waitJob(e *env, id int64) {
	e.t.Helper()
	err := testwait.Until(30*time.Second, func() error {
		j, err := e.q.Job(e.ctx, id)
		if err != nil {
			return err
		}
		if j.State != rivertype.JobStateCompleted {
			return fmt.Errorf("job %d (%s) is %s: %v", id, j.Kind, j.State, j.Errors)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// purged reports whether an e-mail's record says purged.
func (e *env) purged(id string) bool {
	e.t.Helper()
	m, err := e.repo().Emails.Get(e.ctx, testWS, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return m.Purged
}

// Retention counts from when the e-mail was received, as its record says —
// not from the raw message's file or object, whose age a copy or a restore
// resets: a message received 40 days ago whose file is new is purged, a
// message received today whose file looks old is kept.
func TestRetentionCountsFromWhenTheEmailWasReceived(t *testing.T) {
	for _, opt := range []options{{start: true}, {start: true, pg: true}} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[opt.pg], func(t *testing.T) {
			e := newEnv(t, agentAnswering(`{"result": {}}`), opt)
			old, restored := e.receive(uniqueEmail(1)), e.receive(uniqueEmail(2))
			e.settled(old.ID)
			e.settled(restored.ID)
			e.receivedAgo(old.ID, 40*24*time.Hour) // the workspace keeps 30 days
			e.age(restored.ID, 40*24*time.Hour)
			e.retain()
			if !e.purged(old.ID) {
				t.Error("the e-mail received 40 days ago was kept (its message's file is new)")
			}
			if e.purged(restored.ID) {
				t.Error("the e-mail received today was purged (its message's file looked old)")
			}
		})
	}
}

// Retention is the workspace's own setting, bounded by its plan: with the
// plan's 30 days and the workspace's 7, an e-mail of 10 days is purged and
// one of 3 kept; a setting above the plan keeps the plan's.
func TestRetentionIsTheWorkspacesSetting(t *testing.T) {
	for _, opt := range []options{{start: true}, {start: true, pg: true}} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[opt.pg], func(t *testing.T) {
			e := newEnv(t, agentAnswering(`{"result": {}}`), opt)
			setRetention := func(days int) {
				ws, err := e.repo().Workspaces.Get(e.ctx, testWS, testWS)
				if err != nil {
					t.Fatal(err)
				}
				ws.RetentionDays = days
				e.put(ws)
			}
			var ids []string
			for i, age := range []int{3, 10, 20, 40} {
				m := e.receive(uniqueEmail(i))
				e.settled(m.ID)
				e.receivedAgo(m.ID, time.Duration(age)*24*time.Hour)
				ids = append(ids, m.ID)
			}
			kept := func(want ...bool) {
				t.Helper()
				for i, id := range ids {
					if got := !e.purged(id); got != want[i] {
						t.Errorf("e-mail %d: kept %v, want %v", i, got, want[i])
					}
				}
			}
			setRetention(60) // above the plan's 30: the plan's
			e.retain()
			kept(true, true, true, false)
			setRetention(7)
			e.retain()
			kept(true, false, false, false)
		})
	}
}

// The retention job runs when the queue starts, also when the process
// starts again within the hour of its previous run (the job was unique per
// clock hour, so the run at start was dropped as a duplicate of the one
// that had finished).
func TestRetentionRunsAtEveryStart(t *testing.T) {
	for _, opt := range []options{{}, {pg: true}} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[opt.pg], func(t *testing.T) {
			e := newEnv(t, agentAnswering(`{"result": {}}`), opt)
			m := e.receive(uniqueEmail(1))
			e.start()
			e.settled(m.ID)
			ran := func(n int) {
				t.Helper()
				err := testwait.Until(30*time.Second, func() error {
					var done int
					for _, j := range retentionJobs(e) {
						if j.State == rivertype.JobStateCompleted {
							done++
						}
					}
					if done < n {
						return fmt.Errorf("%d retention runs finished, want %d", done, n)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			ran(1)
			if err := e.q.Stop(e.ctx); err != nil {
				t.Fatal(err)
			}
			e.receivedAgo(m.ID, 40*24*time.Hour)

			e.restart()
			ran(2)
			if !e.purged(m.ID) {
				t.Error("the run at the second start did not purge the e-mail past retention")
			}
		})
	}
}

// retentionJobs lists the retention jobs in the queue's table.
func retentionJobs(e *env) []*rivertype.JobRow {
	e.t.Helper()
	var ids []int64
	const q = `SELECT id FROM river_job WHERE kind = 'inbox.retention'`
	switch st := e.st.(type) {
	case *pg.Store:
		rows, err := st.PgxPool().Query(e.ctx, q)
		if err != nil {
			e.t.Fatal(err)
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			e.t.Fatal(err)
		}
	case *sqlite.Store:
		rows, err := st.SQLDB().QueryContext(e.ctx, q)
		if err != nil {
			e.t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				e.t.Fatal(err)
			}
			ids = append(ids, id)
		}
	}
	var out []*rivertype.JobRow
	for _, id := range ids {
		j, err := e.q.Job(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

// restart stands for the process starting again: a new queue on the same
// database and a pipeline on it, started (and stopped when the test ends).
func (e *env) restart() {
	e.t.Helper()
	e.restartWith(e.agent)
}

// restartWith is restart with another agent runner.
func (e *env) restartWith(agents inbox.AgentRunner) {
	e.t.Helper()
	var err error
	switch st := e.st.(type) {
	case *pg.Store:
		e.q, err = queue.OpenPostgres(e.ctx, st.PgxPool(), queue.Config{PollInterval: 100 * time.Millisecond})
	case *sqlite.Store:
		e.q, err = queue.OpenSQLite(e.ctx, st.SQLDB(), queue.Config{PollInterval: 100 * time.Millisecond})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	if e.p, err = pipeline.New(pipeline.Config{Store: e.st, Queue: e.q, Raw: pipelineRaw(e), Agents: agents,
		Index: func(ctx context.Context, ws, id string) (*eml.Index, error) {
			return intake.LoadIndex(ctx, e.st, ws, id)
		},
		Executor: executor.Options{Guard: g, StepTimeout: 10 * time.Second, RunTimeout: 30 * time.Second}, AppURL: "https://kobana.test"}); err != nil {
		e.t.Fatal(err)
	}
	e.start()
}
