package pipeline_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// PostgreSQL's connections are cut while e-mails are being processed —
// every run's step 0 has been sent and its response is on its way — and
// new connections stall for a few seconds before they get through (a
// network path that drops, a server restarting or failing over). The
// store refuses the writes meanwhile (store.RefusedUnreachable), the
// stages wait with what they have, and once the database answers again
// every e-mail is processed, each step arrived once at its receiver, no
// run interrupted or failed.
func TestAPostgreSQLCutAndStallPausesThePipeline(t *testing.T) {
	const emails = 8
	proxy := pgtest.StartProxy(t)
	schema := pgtest.FreshSchema(t, "pipeline")
	e := newEnv(t, agentAnswering(invoiceWorkflow), options{pg: true, poolConns: 24, dsn: proxy.DSN(schema, "pipeline-cut"), cfg: func(c *pipeline.Config) {
		c.Executor.RunTimeout = 2 * time.Minute // the stall is the test's
	}})
	waiting, open := e.recv.gate("/payables")
	e.start()
	var ids []string
	for i := range emails {
		ids = append(ids, e.receive(uniqueEmail(i)).ID)
	}
	if err := testwait.Until(30*time.Second, func() error {
		if n := waiting(); n < emails {
			return fmt.Errorf("step 0 of %d runs has arrived", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	health := e.st.(store.WriteWatcher).WriteHealth()
	before := health.Errors(store.RefusedUnreachable)
	// Every connection is cut, and new ones stall; the responses come
	// back meanwhile.
	proxy.Set(pgtest.Hang)
	cut := time.Now()
	open()
	// The stall lasts a few seconds — well within a lease (queue.DefaultLease):
	// this replica keeps its jobs.
	for time.Since(cut) < 4*time.Second {
		if reason, _ := health.Refusing(); reason != "" && reason != store.RefusedUnreachable {
			t.Fatalf("while the database is cut off the store says it refuses writes for %q", reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
	proxy.Set(pgtest.Up)
	for _, id := range ids {
		got := e.settled(id)
		wr, _ := e.repo().WorkflowRuns.Get(e.ctx, testWS, got.WorkflowRunID)
		if got.Status != inbox.EmailProcessed || wr.Status != runrecord.RunSucceeded {
			t.Errorf("e-mail %s: %s (%s), run %s %q: %+v", id, got.Status, got.StatusDetail, wr.Status, wr.Error, wr.Steps)
		}
	}
	if n := health.Errors(store.RefusedUnreachable) - before; n == 0 {
		t.Error("no write was refused: the cut did not reach the pipeline")
	}
	for _, path := range []string{"/payables", "/payables/pay_1/attachments", "/notify"} {
		if n := len(e.recv.requests(path)); n != emails {
			t.Errorf("%s: %d requests for %d e-mails", path, n, emails)
		}
	}
}
