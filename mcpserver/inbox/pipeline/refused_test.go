package pipeline_test

import (
	"database/sql"
	"errors"
	"fmt"
	"github.com/kobana/workflow/mcpserver/internal/smalldisk"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// The database's disk fills while e-mails are being processed — steps have
// been sent and their responses are coming back — and frees up later. The
// store refuses the writes meanwhile (store.RefusedFull), the stages wait
// with what they have (a step's outcome kept, not given up), and once space
// returns every e-mail is processed, each step sent once, no run
// interrupted: nobody has to resume anything.
func TestAFullDiskPausesThePipeline(t *testing.T) {
	const emails = 8
	disk := smalldisk.Mount(t, 64<<20)
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{root: disk, cfg: func(c *pipeline.Config) {
		c.Executor.RunTimeout = 2 * time.Minute // the pause is the test's
	}})
	waiting, open := e.recv.gate("/payables")
	e.start()
	var ids []string
	for i := range emails {
		ids = append(ids, e.receive(uniqueEmail(i)).ID)
	}
	// Step 0 of every run has left (recorded as being sent) and waits for
	// its response.
	if err := testwait.Until(30*time.Second, func() error {
		if n := waiting(); n < emails {
			return fmt.Errorf("step 0 of %d runs has arrived", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Every later commit must grow the write-ahead log: none fits in space
	// the log already has.
	db := e.st.(store.SQLDB).SQLDB()
	var busy, logged, moved int
	if err := db.QueryRowContext(e.ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	free := smalldisk.Fill(t, disk)
	open()
	health := e.st.(store.WriteWatcher).WriteHealth()
	// The disk stays full for longer than a write was ever retried: more
	// refusals than every run's outcome and final record could have had
	// (an outcome was tried 6 times, the final record once). SQLite
	// says a full disk either way: SQLITE_FULL, or an I/O error writing its
	// log. (River's own writes — fetching jobs — fail too, and are not
	// counted: they are not the store's transactions.)
	if err := testwait.Until(60*time.Second, func() error {
		if n := health.Errors(store.RefusedFull) + health.Errors(store.RefusedIO); n < 12*emails {
			return fmt.Errorf("%d writes refused so far", n)
		}
		if reason, _ := health.Refusing(); reason != store.RefusedFull && reason != store.RefusedIO {
			return fmt.Errorf("the store says it refuses writes for %q", reason)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	free()
	for _, id := range ids {
		got := e.settled(id)
		wr, _ := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
		if got.Status != inbox.EmailProcessed || wr.Status != runrecord.RunSucceeded {
			t.Errorf("e-mail %s: %s (%s), run %s %q: %+v", id, got.Status, got.StatusDetail, wr.Status, wr.Error, wr.Steps)
		}
	}
	for _, path := range []string{"/payables", "/payables/pay_1/attachments", "/notify"} {
		if n := len(e.recv.requests(path)); n != emails {
			t.Errorf("%s: %d requests for %d e-mails", path, n, emails)
		}
	}
	// Writable again once nothing was refused for store.WritableAgain.
	if err := testwait.Until(store.WritableAgain+10*time.Second, func() error {
		if reason, _ := health.Refusing(); reason != "" {
			return fmt.Errorf("the store still says it refuses writes (%s)", reason)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}
