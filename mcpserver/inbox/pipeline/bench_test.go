package pipeline_test

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// BenchmarkReceivedToRecorded measures, for each e-mail, the time from the
// SMTP server's 250 to the workflow run's record committed: an agent that
// answers at once (ScriptedAgent), a three-step workflow against a receiver
// on loopback, the queue's default polling. E-mails are sent one at a time,
// so each latency is the pipeline's own, not a queue's backlog. Run it
// with -benchtime 200x for the p50 and p99 over 200 e-mails:
//
//	go test ./inbox/pipeline -run '^$' -bench ReceivedToRecorded -benchtime 200x
func BenchmarkReceivedToRecorded(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchLatency(b, false) })
	b.Run("postgres", func(b *testing.B) { benchLatency(b, true) })
}

func benchLatency(b *testing.B, onPG bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recv := newReceiver(b)
	var (
		st  store.Store
		q   *queue.Queue
		raw mailstore.Store
	)
	root := b.TempDir()
	if onPG {
		dsn, _ := pgtest.SchemaDSN(b, "latency", "pipeline-latency")
		pst, err := pg.Open(ctx, dsn, pg.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer pst.Close()
		st = pst
		lo := mailstore.NewLargeObjects(pst.PgxPool(), root)
		if err := lo.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		if q, err = queue.OpenPostgres(ctx, pst.PgxPool(), queue.Config{}); err != nil {
			b.Fatal(err)
		}
		raw = lo
	} else {
		lst, err := sqlite.Open(ctx, filepath.Join(root, "kobana.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer lst.Close()
		st = lst
		dir, err := mailstore.OpenDir(root)
		if err != nil {
			b.Fatal(err)
		}
		if q, err = queue.OpenSQLite(ctx, lst.SQLDB(), queue.Config{}); err != nil {
			b.Fatal(err)
		}
		raw = dir
	}
	seedRecords(b, ctx, st, recv)
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	_, err := pipeline.New(pipeline.Config{Store: st, Queue: q, Raw: raw, Agents: pipeline.ScriptedAgent{Output: json.RawMessage(invoiceWorkflow)},
		Executor: executor.Options{Guard: g}, AppURL: "https://kobana.test"})
	if err != nil {
		b.Fatal(err)
	}
	recorded := make(chan time.Time, 1)
	pipeline.SetCrashHook(func(point string) {
		if point == "workflow.committed" {
			recorded <- time.Now()
		}
	})
	defer pipeline.SetCrashHook(nil)
	if err := q.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Stop(stop)
	}()
	rec := &intake.StoreRecorder{Store: st, Raw: raw, Queue: q}
	srv := intake.NewServer(intake.Config{Domain: "mx.kobana.test"}, intake.StoreDirectory{Records: st, Workspaces: st, Domain: mailDomain}, rec, raw, &senderauth.Checker{Resolver: noDNS{}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		if err := send(ln.Addr().String(), uniqueEmail(i)); err != nil {
			b.Fatal(err)
		}
		accepted := time.Now()
		select {
		case at := <-recorded:
			latencies = append(latencies, at.Sub(accepted))
		case <-time.After(30 * time.Second):
			b.Fatalf("e-mail %d: no workflow run recorded within 30s", i)
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds())/1000, "max-ms")
}
