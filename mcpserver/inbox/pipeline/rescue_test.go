package pipeline_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/runrecord"
)

// rescueLease is the replicas' lease in the rescue tests: River's own
// rescue would come after twenty minutes (twice the job timeout), so an
// e-mail finished within the tests' wait was rescued by the lease.
const rescueLease = 3 * time.Second

// A replica killed in the middle of sending a workflow step: the other
// replica takes over the jobs it held once the lease has passed — seconds,
// not River's twenty minutes — records the run it was sending interrupted
// (that step unknown, nothing sent again) and processes the rest; every
// e-mail is processed once and says so.
func TestAKilledReplicasJobsAreRescuedWithinTheLease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dsn, _, st, recv := rescueDB(t, "rescue")

	// A takes the mail and works its queue only once released; B works
	// it at once and is killed at its first step being sent.
	a := startServer(t, serverConfig{DB: dsn, Postgres: true, Data: t.TempDir(), Replica: "replica-a", Hold: true, Lease: rescueLease})
	b := startServer(t, serverConfig{DB: dsn, Postgres: true, Data: t.TempDir(), Replica: "replica-b", CrashAt: "workflow.sending", Lease: rescueLease})
	const n = 4
	for i := range n {
		if err := send(a.addr, uniqueEmail(i)); err != nil {
			t.Fatal(err)
		}
	}
	b.killed()
	a.release()

	emails := waitProcessed(t, st, n, a)
	interrupted := checkOnce(t, st, recv, emails)
	if interrupted == 0 {
		t.Error("no run was recorded interrupted, though replica B was killed sending a step")
	}
	if !strings.Contains(a.output.String(), "rescued a job no live replica held") {
		t.Errorf("replica A did not log the rescue; its output:\n%s", a.output)
	}
}

// A fetch whose reply is lost: the database marked the jobs running for
// replica B, which never got them (its connection stalled at that moment)
// and goes on working otherwise. Its lease renewals do not list them, so
// once the lease has passed they are given to a worker that runs them.
func TestAStalledFetchIsRescuedWithinTheLease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	ctx := t.Context()
	dsn, schema, st, recv := rescueDB(t, "stall")
	proxy := pgtest.StartProxy(t)

	a := startServer(t, serverConfig{DB: dsn, Postgres: true, Data: t.TempDir(), Replica: "replica-a", Hold: true, Lease: rescueLease})
	b := startServer(t, serverConfig{DB: proxy.DSN(schema, "pipeline-stall-b"), Postgres: true, Data: t.TempDir(), Replica: "replica-b", Hold: true, Lease: rescueLease})
	const n = 3
	for i := range n {
		if err := send(a.addr, uniqueEmail(i)); err != nil {
			t.Fatal(err)
		}
	}
	// River's fetch: the statement that marks available jobs running.
	stalled := proxy.StallReply("attempt = river_job.attempt + 1")
	b.release()
	select {
	case <-stalled:
	case <-time.After(30 * time.Second):
		t.Fatalf("replica B fetched nothing; its output:\n%s", b.output)
	}
	var held int
	if err := st.PgxPool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'running' AND attempted_by[array_length(attempted_by, 1)] = 'replica-b'`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held == 0 {
		t.Fatal("the stalled fetch marked no job running for replica B")
	}
	a.release()

	emails := waitProcessed(t, st, n, a, b)
	checkOnce(t, st, recv, emails)
	var rescued int
	if err := st.PgxPool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE metadata ? 'kobana:rescued_from' AND state = 'completed'`).Scan(&rescued); err != nil {
		t.Fatal(err)
	}
	if rescued == 0 {
		t.Errorf("no job was rescued, though the stalled fetch held some (%d jobs were running for replica B then)", held)
	}
	if out := a.output.String() + b.output.String(); !strings.Contains(out, "rescued a job no live replica held") {
		t.Errorf("no replica logged the rescue; their output:\n%s", out)
	}
}

// rescueDB is a fresh schema of the test database with the test records,
// its store (closed at the end of the test) and the records' receiver.
func rescueDB(t *testing.T, name string) (dsn, schema string, st *pg.Store, recv *receiver) {
	t.Helper()
	dsn, schema = pgtest.SchemaDSN(t, name, "pipeline-"+name)
	recv = newReceiver(t)
	st, err := pg.Open(t.Context(), dsn, pg.Options{PurgeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seedRecords(t, t.Context(), st, recv)
	return dsn, schema, st, recv
}

// waitProcessed waits (a minute at most: far less than River's own rescue)
// for n e-mails to have left pending and every delivery to be delivered.
func waitProcessed(t *testing.T, st store.Store, n int, servers ...*server) []inbox.Email {
	t.Helper()
	ctx := t.Context()
	repo := inbox.NewRepo(st)
	var emails []inbox.Email
	err := testwait.Until(time.Minute, func() error {
		var err error
		if emails, err = repo.Emails.All(ctx, testWS, store.Query{}); err != nil {
			return err
		}
		if len(emails) != n {
			return fmt.Errorf("%d e-mails recorded, want %d", len(emails), n)
		}
		for _, e := range emails {
			if e.Status == inbox.EmailPending {
				return fmt.Errorf("e-mail %s is still pending", e.ID)
			}
		}
		ds, err := repo.Deliveries.All(ctx, testWS, store.Query{})
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.Status != inbox.DeliveryDelivered {
				return fmt.Errorf("delivery %s of %s is %s", d.ID, d.Event, d.Status)
			}
		}
		return nil
	})
	if err != nil {
		for _, s := range servers {
			t.Logf("server output:\n%s", s.output)
		}
		t.Fatal(err)
	}
	return emails
}

// checkOnce checks that each e-mail has one agent run and a final outcome,
// and that the receiver got each step its record says succeeded once, each
// unknown one at most once and no other; it returns how many runs were
// recorded interrupted.
func checkOnce(t *testing.T, st store.Store, recv *receiver, emails []inbox.Email) int {
	t.Helper()
	ctx := t.Context()
	repo := inbox.NewRepo(st)
	runs, err := repo.AgentRuns.All(ctx, testWS, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	interrupted := 0
	for _, e := range emails {
		mine := 0
		for _, r := range runs {
			if r.EmailID == e.ID {
				mine++
			}
		}
		if mine != 1 {
			t.Errorf("e-mail %s has %d agent runs, want 1", e.ID, mine)
		}
		wr, err := repo.WorkflowRuns.Get(ctx, testWS, e.WorkflowRunID)
		if err != nil {
			t.Errorf("e-mail %s (%s): %v", e.ID, e.Status, err)
			continue
		}
		switch {
		case e.Status == inbox.EmailProcessed && wr.Status == runrecord.RunSucceeded:
		case e.Status == inbox.EmailFailed && e.StatusDetail == string(inbox.CauseInterrupted) && wr.Status == runrecord.RunInterrupted:
			interrupted++
		default:
			t.Errorf("e-mail %s is %s (%s), its workflow run %s: %s %+v", e.ID, e.Status, e.StatusDetail, wr.Status, wr.Error, wr.Steps)
		}
		// The record and the receiver agree, step by step.
		for _, s := range wr.Steps {
			got := recv.count(stepPaths[s.Index], e.ID)
			switch {
			case s.State == runrecord.Succeeded && got != 1:
				t.Errorf("e-mail %s step %d: recorded succeeded, the receiver got it %d times", e.ID, s.Index, got)
			case s.State == runrecord.Unknown && got > 1:
				t.Errorf("e-mail %s step %d: recorded unknown, the receiver got it %d times", e.ID, s.Index, got)
			case s.State != runrecord.Succeeded && s.State != runrecord.Unknown && got != 0:
				t.Errorf("e-mail %s step %d: recorded %s, the receiver got it %d times", e.ID, s.Index, s.State, got)
			}
		}
	}
	return interrupted
}
