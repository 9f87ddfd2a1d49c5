package queue_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	_ "modernc.org/sqlite"

	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// db is the caller's side of a database the queue shares: a table of
// records written in the same transactions as the jobs.
type db interface {
	// tx runs fn in a transaction of the store's handle (fn gets the driver's
	// transaction: *sql.Tx or pgx.Tx) and commits when fn returns nil.
	tx(ctx context.Context, fn func(tx any) error) error
	insertRecord(ctx context.Context, tx any, id string) error
	records(ctx context.Context) (int, error)
}

type liteDB struct{ *sql.DB }

// sqlTxer and pgxTxer stand for the store's transactions (store.SQLTx,
// pg.PgxTxer): the queue reaches the driver transaction through them.
type sqlTxer struct{ tx *sql.Tx }

func (t sqlTxer) SQLTx() *sql.Tx { return t.tx }

type pgxTxer struct{ tx pgx.Tx }

func (t pgxTxer) PgxTx() pgx.Tx { return t.tx }

func (d liteDB) tx(ctx context.Context, fn func(any) error) error {
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(sqlTxer{tx}); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (d liteDB) insertRecord(ctx context.Context, tx any, id string) error {
	_, err := tx.(sqlTxer).tx.ExecContext(ctx, "INSERT INTO records (id) VALUES (?)", id)
	return err
}

func (d liteDB) records(ctx context.Context) (n int, err error) {
	err = d.QueryRowContext(ctx, "SELECT count(*) FROM records").Scan(&n)
	return n, err
}

type pgDB struct{ *pgxpool.Pool }

func (d pgDB) tx(ctx context.Context, fn func(any) error) error {
	return pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error { return fn(pgxTxer{tx}) })
}

func (d pgDB) insertRecord(ctx context.Context, tx any, id string) error {
	_, err := tx.(pgxTxer).tx.Exec(ctx, "INSERT INTO records (id) VALUES ($1)", id)
	return err
}

func (d pgDB) records(ctx context.Context) (n int, err error) {
	err = d.QueryRow(ctx, "SELECT count(*) FROM records").Scan(&n)
	return n, err
}

// openLite opens a SQLite file the way store/sqlite opens its write handle
// (one connection, WAL, busy timeout, immediate transactions) and a queue
// on that handle.
func openLite(t *testing.T, cfg queue.Config) (db, *queue.Queue) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kobana.db")
	h, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	h.SetMaxOpenConns(1)
	t.Cleanup(func() { h.Close() })
	if _, err := h.Exec("CREATE TABLE records (id TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	q, err := queue.OpenSQLite(context.Background(), h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return liteDB{h}, q
}

// openPG opens a fresh schema of the test database and a queue on it.
func openPG(t *testing.T, cfg queue.Config) (db, *queue.Queue) {
	t.Helper()
	ctx := context.Background()
	dsn, _ := pgtest.SchemaDSN(t, "queue", "kobana-queue-test")
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, "CREATE TABLE records (id text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	q, err := queue.OpenPostgres(ctx, pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return pgDB{pool}, q
}

var backends = []struct {
	name string
	open func(*testing.T, queue.Config) (db, *queue.Queue)
}{{"sqlite", openLite}, {"postgres", openPG}}

// agentWorker completes each job in the transaction that writes its record.
type agentWorker struct {
	river.WorkerDefaults[queue.AgentArgs]
	db   db
	mu   sync.Mutex
	runs map[string]int
	done chan string
}

func (w *agentWorker) Work(ctx context.Context, job *river.Job[queue.AgentArgs]) error {
	w.mu.Lock()
	w.runs[job.Args.EmailID]++
	w.mu.Unlock()
	err := w.db.tx(ctx, func(tx any) error {
		if err := w.db.insertRecord(ctx, tx, "run_"+job.Args.EmailID); err != nil {
			return err
		}
		return queue.CompleteTx(ctx, tx, job)
	})
	if err == nil {
		w.done <- job.Args.EmailID
	}
	return err
}

func TestInsertTxCommitsWithTheRecords(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			d, q := b.open(t, queue.Config{})
			w := &agentWorker{db: d, runs: map[string]int{}, done: make(chan string, 100)}
			river.AddWorker(q.Workers(), w)

			// A transaction that fails after the insert leaves neither.
			failing := errors.New("commit refused")
			err := d.tx(ctx, func(tx any) error {
				if err := d.insertRecord(ctx, tx, "eml_lost"); err != nil {
					return err
				}
				if _, err := q.InsertTx(ctx, tx, queue.AgentArgs{Workspace: "ws", EmailID: "eml_lost"}, nil); err != nil {
					return err
				}
				return failing
			})
			if !errors.Is(err, failing) {
				t.Fatalf("rolled-back transaction: %v", err)
			}
			// Committed ones, each inserted twice (a retried insert): one job each.
			for i := range 5 {
				id := fmt.Sprintf("eml_%d", i)
				for range 2 {
					err := d.tx(ctx, func(tx any) error {
						if err := d.insertRecord(ctx, tx, id); err != nil {
							return err
						}
						_, err := q.InsertTx(ctx, tx, queue.AgentArgs{Workspace: "ws", EmailID: id}, nil)
						return err
					})
					if err != nil {
						// The second record insert conflicts on the primary key:
						// insert the job alone to see uniqueness skip it.
						err = d.tx(ctx, func(tx any) error {
							res, err := q.InsertTx(ctx, tx, queue.AgentArgs{Workspace: "ws", EmailID: id}, nil)
							if err == nil && !res.UniqueSkippedAsDuplicate {
								return fmt.Errorf("a second job for %s was inserted", id)
							}
							return err
						})
						if err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer q.Stop(ctx)
			seen := map[string]bool{}
			timeout := time.After(30 * time.Second)
			for len(seen) < 5 {
				select {
				case id := <-w.done:
					seen[id] = true
				case <-timeout:
					t.Fatalf("worked %d of 5 jobs in 30s", len(seen))
				}
			}
			if err := q.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			for id, n := range w.runs {
				if n != 1 || id == "eml_lost" {
					t.Errorf("job for %s ran %d times", id, n)
				}
			}
			if n, err := d.records(ctx); err != nil || n != 10 {
				t.Errorf("records = %d, %v; want 5 e-mails and 5 runs", n, err)
			}
		})
	}
}

func TestInsertTxRejectsTheOtherDatabasesTx(t *testing.T) {
	ctx := context.Background()
	_, q := openLite(t, queue.Config{Workers: map[string]int{}})
	_, err := q.InsertTx(ctx, "not a tx", queue.AgentArgs{Workspace: "ws", EmailID: "e"}, nil)
	if !errors.Is(err, queue.ErrWrongTx) {
		t.Fatalf("InsertTx with a string: %v, want ErrWrongTx", err)
	}
}

// TestSQLiteConcurrentWriters: many transactions at once each insert a
// record and its job through the one shared connection, without "database
// is locked".
func TestSQLiteConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	d, q := openLite(t, queue.Config{Workers: map[string]int{}})
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("eml_%03d", i)
			errs <- d.tx(ctx, func(tx any) error {
				if err := d.insertRecord(ctx, tx, id); err != nil {
					return err
				}
				_, err := q.InsertTx(ctx, tx, queue.AgentArgs{Workspace: "ws", EmailID: id}, nil)
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got, _ := d.records(ctx); got != n {
		t.Fatalf("records = %d, want %d", got, n)
	}
}

func TestOpenSQLiteNeedsOneConnection(t *testing.T) {
	h, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.SetMaxOpenConns(4)
	if _, err := queue.OpenSQLite(context.Background(), h, queue.Config{}); err == nil || !strings.Contains(err.Error(), "exactly one") {
		t.Fatalf("OpenSQLite on a 4-connection handle: %v, want an error saying one connection", err)
	}
}

// TestWithTheSQLiteStore: River on store/sqlite's write handle, a job
// inserted in the store's own transaction (store.Tx).
func TestWithTheSQLiteStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := queue.OpenSQLite(ctx, st.SQLDB(), queue.Config{Workers: map[string]int{}})
	if err != nil {
		t.Fatal(err)
	}
	st.PutOrganization(ctx, store.Organization{ID: "org", Name: "Org"})
	st.PutWorkspace(ctx, store.Workspace{ID: "ws", Organization: "org", Name: "WS"})
	write := func(id string, fail bool) error {
		return st.WithTx(ctx, func(tx store.Tx) error {
			if err := tx.CreateRecord(ctx, store.Record{Workspace: "ws", Kind: "email", ID: id, Data: []byte(`{}`)}); err != nil {
				return err
			}
			if _, err := q.InsertTx(ctx, tx, queue.AgentArgs{Workspace: "ws", EmailID: id}, nil); err != nil {
				return err
			}
			if fail {
				return errors.New("refused")
			}
			return nil
		})
	}
	if err := write("eml_1", true); err == nil {
		t.Fatal("the failing transaction committed")
	}
	if err := write("eml_2", false); err != nil {
		t.Fatal(err)
	}
	var jobs int
	st.SQLDB().QueryRow("SELECT count(*) FROM river_job").Scan(&jobs)
	_, err1 := st.GetRecord(ctx, "ws", "email", "eml_1")
	_, err2 := st.GetRecord(ctx, "ws", "email", "eml_2")
	if jobs != 1 || !errors.Is(err1, store.ErrNotFound) || err2 != nil {
		t.Fatalf("jobs=%d, eml_1: %v, eml_2: %v; want one job and only eml_2", jobs, err1, err2)
	}
}
