package intake_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/jackc/pgx/v5"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
)

// startPostgres opens a store on a fresh schema of the test database (or
// skips without one), its large objects and an insert-only queue, with the
// test workspace and its invoices inbox.
func startPostgres(t *testing.T) (*pg.Store, *mailstore.LargeObjects, *queue.Queue) {
	t.Helper()
	ctx := context.Background()
	dsn, _ := pgtest.SchemaDSN(t, "intake", "intake-test")
	st, err := pg.Open(ctx, dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Large objects belong to the database, not to the schema.
		st.PgxPool().Exec(ctx, "SELECT lo_unlink(object) FROM inbox_messages")
		st.Close()
	})
	objects := mailstore.NewLargeObjects(st.PgxPool(), t.TempDir())
	if err := objects.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := queue.OpenPostgres(ctx, st.PgxPool(), queue.Config{Workers: map[string]int{}})
	if err != nil {
		t.Fatal(err)
	}
	st.PutOrganization(ctx, store.Organization{ID: "org_acme", Name: "Acme"})
	st.PutWorkspace(ctx, store.Workspace{ID: wsID, Organization: "org_acme", Name: "Acme"})
	inbox.NewRepo(st).Inboxes.Put(ctx, wsID, inbox.Inbox{ID: "ibx_invoices", Address: "invoices@in.kobana.test", Recipients: []string{}, Status: inbox.StatusActive, CreatedAt: time.Now()})
	return st, objects, q
}

// TestRecorderOnPostgres: the message is a large object written in the
// records' transaction: committed with the record and job, gone with a
// failed commit.
func TestRecorderOnPostgres(t *testing.T) {
	ctx := context.Background()
	st, objects, q := startPostgres(t)

	var failCommit bool
	var doomed []uint32 // the large objects written in transactions made to fail
	tx := transactorFunc(func(ctx context.Context, fn func(store.Tx) error) error {
		return st.WithTx(ctx, func(tx store.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			if failCommit {
				// Large objects are shared by the whole database (other
				// packages' tests write theirs at the same time): note this
				// transaction's own, from its row, to look for it afterwards.
				rows, err := tx.(interface{ PgxTx() pgx.Tx }).PgxTx().Query(ctx, "SELECT object FROM inbox_messages")
				if err != nil {
					return err
				}
				oids, err := pgx.CollectRows(rows, pgx.RowTo[uint32])
				if err != nil {
					return err
				}
				doomed = append(doomed, oids...)
				return errors.New("commit failed")
			}
			return nil
		})
	})
	rec := &intake.StoreRecorder{Store: tx, Raw: objects, Queue: q}
	dir := directory{"invoices@in.kobana.test": {Workspace: wsID, InboxID: "ibx_invoices", Address: "invoices@in.kobana.test"}}
	srv := intake.NewServer(intake.Config{}, dir, rec, objects, &senderauth.Checker{Resolver: noDNS{}})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Close()
	send := func(msg string) error {
		c, err := smtp.Dial(ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.SendMail("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(msg))
	}
	count := func(query string) int {
		var n int
		if err := st.PgxPool().QueryRow(ctx, query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	failCommit = true
	var se *smtp.SMTPError
	if err := send(message("pg-fail", 2000)); !errors.As(err, &se) || se.Code != 451 {
		t.Fatalf("failing commit: %v, want 451", err)
	}
	if len(doomed) != 1 {
		t.Fatalf("the failed transaction wrote %d large objects, want 1", len(doomed))
	}
	var left int
	if err := st.PgxPool().QueryRow(ctx, "SELECT count(*) FROM pg_largeobject_metadata WHERE oid = $1", doomed[0]).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 || count("SELECT count(*) FROM inbox_messages") != 0 || count("SELECT count(*) FROM river_job") != 0 {
		t.Fatalf("after a failed commit: large object %d left %d times, %d message rows, %d jobs: want nothing left",
			doomed[0], left, count("SELECT count(*) FROM inbox_messages"), count("SELECT count(*) FROM river_job"))
	}

	failCommit = false
	msg := message("pg-ok", 200<<10)
	if err := send(msg); err != nil {
		t.Fatal(err)
	}
	list, err := inbox.NewRepo(st).Emails.All(ctx, wsID, store.Query{})
	if err != nil || len(list) != 1 || count("SELECT count(*) FROM river_job WHERE kind = 'inbox.agent'") != 1 {
		t.Fatalf("e-mails %d (%v), jobs %d", len(list), err, count("SELECT count(*) FROM river_job"))
	}
	m, err := objects.Open(ctx, wsID, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close() // a snapshot holds a connection until closed
	buf := make([]byte, m.Size())
	if _, err := m.ReadAt(buf, 0); err != nil || !strings.HasSuffix(string(buf), msg) || !strings.HasPrefix(string(buf), "Return-Path: <billing@supplier.test>\r\n") {
		t.Fatalf("the stored large object is not the trace fields and the message sent (%v)", err)
	}
}

// Copies of one message committing at the same time on PostgreSQL, in
// concurrent transactions (Batches 2): one e-mail, the others duplicates.
func TestConcurrentCopiesOnPostgres(t *testing.T) {
	ctx := context.Background()
	st, objects, q := startPostgres(t)
	for _, lanes := range []int{1, 4} {
		rec := &intake.StoreRecorder{Store: st, Raw: objects, Queue: q, Batches: lanes}
		dir := directory{"invoices@in.kobana.test": {Workspace: wsID, InboxID: "ibx_invoices", Address: "invoices@in.kobana.test"}}
		srv := intake.NewServer(intake.Config{}, dir, rec, objects, &senderauth.Checker{Resolver: noDNS{}})
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		go srv.Serve(ln)
		concurrentCopies(t, &storeEnv{t: t, addr: ln.Addr().String(), pgEmails: func() []inbox.Email {
			list, err := inbox.NewRepo(st).Emails.All(ctx, wsID, store.Query{})
			if err != nil {
				t.Fatal(err)
			}
			return list
		}, pgJobs: func() int {
			var n int
			st.PgxPool().QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'inbox.agent'").Scan(&n)
			return n
		}}, fmt.Sprintf("pg-copies-%d", lanes))
		srv.Close()
	}
}
