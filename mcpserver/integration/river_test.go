package integration_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/jackc/pgx/v5"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// processArgs is the job the tests enqueue with an e-mail record: process
// that e-mail.
type processArgs struct {
	Email string `json:"email"`
}

func (processArgs) Kind() string { return "test_process_email" }

// processWorker marks the e-mail processed and completes its job in one
// transaction of the store, as the pipeline's stages do.
type processWorker[TDriver riverdriver.Driver[TTx], TTx any] struct {
	river.WorkerDefaults[processArgs]
	st   store.Store
	txOf func(store.Tx) TTx
}

func (w *processWorker[TDriver, TTx]) Work(ctx context.Context, job *river.Job[processArgs]) error {
	return w.st.WithTx(ctx, func(tx store.Tx) error {
		r, err := tx.GetRecord(ctx, "w1", "email", job.Args.Email)
		if err != nil {
			return err
		}
		r.Status = "processed"
		if err := tx.PutRecord(ctx, r); err != nil {
			return err
		}
		_, err = river.JobCompleteTx[TDriver](ctx, w.txOf(tx), job)
		return err
	})
}

// checkRiverSharesTheStore runs a River client on the store's own database
// handle and checks that records and jobs written in one store transaction
// commit or roll back together, and that enqueuing transactions and workers
// writing through the store run side by side without a busy error or a
// deadlock.
func checkRiverSharesTheStore[TDriver riverdriver.Driver[TTx], TTx any](t *testing.T, st store.Store, driver TDriver, txOf func(store.Tx) TTx) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatalf("migrating River's tables: %v", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &processWorker[TDriver, TTx]{st: st, txOf: txOf})
	client, err := river.NewClient(driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		Workers:           workers,
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs := func() []*rivertype.JobRow {
		t.Helper()
		res, err := client.JobList(ctx, river.NewJobListParams().Kinds(processArgs{}.Kind()).First(1000))
		if err != nil {
			t.Fatal(err)
		}
		return res.Jobs
	}
	receive := func(id string) func(store.Tx) error {
		return func(tx store.Tx) error {
			if err := tx.CreateRecord(ctx, store.Record{Workspace: "w1", Kind: "email", ID: id, Status: "received", Data: json.RawMessage(`{}`)}); err != nil {
				return err
			}
			_, err := client.InsertTx(ctx, txOf(tx), processArgs{Email: id}, nil)
			return err
		}
	}

	// An error after both writes: neither the record nor the job stays.
	boom := errors.New("boom")
	if err := st.WithTx(ctx, func(tx store.Tx) error {
		if err := receive("eml_lost")(tx); err != nil {
			return err
		}
		return boom
	}); err != boom {
		t.Fatalf("WithTx = %v, want fn's error", err)
	}
	if _, err := st.GetRecord(ctx, "w1", "email", "eml_lost"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the record of a rolled-back transaction: %v", err)
	}
	if n := len(jobs()); n != 0 {
		t.Errorf("%d jobs after a rolled-back transaction, want 0", n)
	}
	// Committed: both, and the job waits for a worker.
	if err := st.WithTx(ctx, receive("eml_000")); err != nil {
		t.Fatal(err)
	}
	if r, err := st.GetRecord(ctx, "w1", "email", "eml_000"); err != nil || r.Status != "received" {
		t.Errorf("committed record: %+v %v", r, err)
	}
	if js := jobs(); len(js) != 1 || js[0].State != rivertype.JobStateAvailable {
		t.Fatalf("committed jobs: %d, want 1 available", len(js))
	}

	// Workers run while more e-mails are received at once.
	events, stop := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer stop()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			t.Errorf("stopping River: %v", err)
		}
	}()
	const more = 30
	var wg sync.WaitGroup
	for i := 1; i <= more; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := st.WithTx(ctx, receive(fmt.Sprintf("eml_%03d", i))); err != nil {
				t.Errorf("receiving e-mail %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for done := 0; done < more+1; {
		select {
		case ev := <-events:
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("job %d failed: %v", ev.Job.ID, ev.Job.Errors)
			}
			done++
		case <-ctx.Done():
			t.Fatalf("%d of %d jobs completed before the deadline (a deadlock?)", done, more+1)
		}
	}
	for i := 0; i <= more; i++ {
		id := fmt.Sprintf("eml_%03d", i)
		if r, err := st.GetRecord(ctx, "w1", "email", id); err != nil || r.Status != "processed" {
			t.Errorf("%s after its job: %+v %v", id, r.Status, err)
		}
	}
	for _, j := range jobs() {
		if j.State != rivertype.JobStateCompleted || j.Attempt != 1 {
			t.Errorf("job %d: %s after %d attempts, want completed at the first", j.ID, j.State, j.Attempt)
		}
	}
}

// TestRiverOnTheSQLiteStore: River's SQLite driver on the store's writer
// handle (one connection, WAL, busy timeout, IMMEDIATE transactions).
func TestRiverOnTheSQLiteStore(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkRiverSharesTheStore(t, st, riversqlite.New(st.SQLDB()), func(tx store.Tx) *sql.Tx { return tx.(store.SQLTx).SQLTx() })
}

// TestRiverOnThePostgreSQLStore: River's pgx driver on the store's pool.
func TestRiverOnThePostgreSQLStore(t *testing.T) {
	dsn, _ := pgtest.SchemaDSN(t, "river", "river")
	st := openPG(t, dsn, pg.Options{})
	checkRiverSharesTheStore(t, st, riverpgxv5.New(st.PgxPool()), func(tx store.Tx) pgx.Tx { return tx.(pg.PgxTxer).PgxTx() })
}
