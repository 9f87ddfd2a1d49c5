package pipeline_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

var (
	throughputEmails = flag.Int("throughput.emails", 500, "e-mails sent in each round of BenchmarkThroughput")
	throughputConns  = flag.Int("throughput.conns", 8, "SMTP connections BenchmarkThroughput sends over at once")
	throughputRounds = flag.Int("throughput.rounds", 3, "rounds of BenchmarkThroughput per iteration (run it with -benchtime 1x)")
	throughputCPU    = flag.String("throughput.cpuprofile", "", "directory BenchmarkThroughput writes each processing server's CPU profile to (e2e-STORE-ROUND.pprof)")
)

// BenchmarkThroughput measures the pipeline's rate against the intake's, in
// one run: -throughput.rounds rounds (per iteration: run it with -benchtime
// 1x), each of two servers (processes of their own,
// as kobana serve runs, each on a fresh database), one that only receives
// (kobana serve -process=false) and one that receives and processes, each
// sent the same -throughput.emails e-mails over -throughput.conns SMTP
// connections at once (the order of the two alternates from round to round).
// The agent answers at once (ScriptedAgent) with the three-step invoice
// workflow, and the receiver of its steps and of the webhook deliveries
// answers at once.
//
// Metrics: intake-msgs/s (first message sent to the last 250 of the
// receive-only server), e2e-msgs/s (first message sent to the last workflow
// run stored, on the processing server), e2e/intake (the goal is at least
// 0.5; with the median and range of the rounds' own ratios), the 250 → workflow-run-stored latency over the burst (p50, p99,
// max), the processing server's processor use while it drains (cores: CPU
// seconds per second), the CPU time each server spent per e-mail
// (intake-cpu-ms/msg, e2e-cpu-ms/msg: their quotient bounds e2e/intake once
// the processing is CPU-bound, whatever else runs on the machine), and its
// peak RSS. Each round's figures are logged
// with -v. Run it with rounds interleaved:
//
//	go test ./inbox/pipeline -run '^$' -bench Throughput -benchtime 1x -throughput.emails 2000
func BenchmarkThroughput(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchThroughput(b, false) })
	b.Run("postgres", func(b *testing.B) { benchThroughput(b, true) })
}

// round is what one server did with one burst of e-mails.
type round struct {
	// took is from the first message sent to the last 250 (intake only) or
	// to the last workflow run stored.
	took time.Duration
	// latencies are 250 → workflow run stored, per e-mail (processing).
	latencies []time.Duration
	// cores is the server's CPU time over took, in cores.
	cores float64
	// cpu is the server's CPU time from the first message sent to the end
	// of the round.
	cpu time.Duration
	// peakRSS is the server's peak resident memory, in MiB.
	peakRSS float64
}

func benchThroughput(b *testing.B, onPG bool) {
	if onPG {
		pgtest.BaseDSN(b) // skips without a server
	}
	n, conns := *throughputEmails, *throughputConns
	var intake, e2e []round
	for i := range b.N * *throughputRounds {
		modes := []bool{false, true}
		if i%2 == 1 {
			slices.Reverse(modes)
		}
		for _, process := range modes {
			r := throughputRound(b, onPG, process, n, conns, i)
			if process {
				e2e = append(e2e, r)
			} else {
				intake = append(intake, r)
			}
			b.Logf("round %d, %s: %.0f e-mails/s, %.2f cores, peak RSS %.0f MiB", i, map[bool]string{false: "intake only", true: "end to end"}[process],
				float64(n)/r.took.Seconds(), r.cores, r.peakRSS)
		}
		b.Logf("round %d: end to end / intake = %.3f", i, intake[i].took.Seconds()/e2e[i].took.Seconds())
	}
	b.StopTimer()
	rate := func(rs []round) float64 {
		var d time.Duration
		for _, r := range rs {
			d += r.took
		}
		return float64(n*len(rs)) / d.Seconds()
	}
	ratios := make([]float64, len(e2e))
	var lat []time.Duration
	var cores, rss float64
	for i := range e2e {
		ratios[i] = intake[i].took.Seconds() / e2e[i].took.Seconds()
		lat = append(lat, e2e[i].latencies...)
		cores += e2e[i].cores / float64(len(e2e))
		rss = max(rss, e2e[i].peakRSS)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Milliseconds())
	}
	b.ReportMetric(rate(intake), "intake-msgs/s")
	b.ReportMetric(rate(e2e), "e2e-msgs/s")
	b.ReportMetric(rate(e2e)/rate(intake), "e2e/intake")
	sorted := slices.Sorted(slices.Values(ratios))
	b.ReportMetric(sorted[len(sorted)/2], "e2e/intake-median")
	b.ReportMetric(slices.Min(ratios), "e2e/intake-min")
	b.ReportMetric(slices.Max(ratios), "e2e/intake-max")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
	b.ReportMetric(cores, "cores")
	cpuPer := func(rs []round) float64 {
		var d time.Duration
		for _, r := range rs {
			d += r.cpu
		}
		return float64(d.Microseconds()) / 1000 / float64(n*len(rs))
	}
	b.ReportMetric(cpuPer(intake), "intake-cpu-ms/msg")
	b.ReportMetric(cpuPer(e2e), "e2e-cpu-ms/msg")
	b.ReportMetric(rss, "peak-RSS-MiB")
	b.ReportMetric(0, "ns/op") // a round's time says nothing: the rates do
}

// throughputRound starts a server on a fresh database, sends it n e-mails
// over conns connections and, when it processes, waits until every
// e-mail's workflow run is stored.
func throughputRound(b *testing.B, onPG, process bool, n, conns, i int) round {
	ctx := context.Background()
	recv := instantReceiver(b)
	cfg := serverConfig{Data: b.TempDir(), Defaults: true, IntakeOnly: !process, Document: invoiceWorkflow}
	if *throughputCPU != "" && process {
		cfg.CPUProfile = filepath.Join(*throughputCPU, fmt.Sprintf("e2e-%s-%d.pprof", map[bool]string{false: "sqlite", true: "postgres"}[onPG], i))
	}
	var jobs *jobTimes
	if onPG {
		dsn, schema := pgtest.SchemaDSN(b, "throughput", "pipeline-throughput")
		st, err := pg.Open(ctx, dsn, pg.Options{PurgeInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		seedRecords(b, ctx, st, recv)
		// The pool kobana serve gives the workers (server.Workers.PoolConns).
		w := queue.ReplicaWorkers
		cfg.DB, cfg.Postgres, cfg.PoolConns = dsn, true, max(16, 2*(w[queue.QueueAgent]+w[queue.QueueWorkflow]))
		jobs = &jobTimes{pg: st.PgxPool(), schema: schema}
	} else {
		cfg.DB = filepath.Join(b.TempDir(), "kobana.db")
		st, err := sqlite.Open(ctx, cfg.DB, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		seedRecords(b, ctx, st, recv)
		st.Close()
		db, err := sql.Open("sqlite", "file:"+cfg.DB+"?_pragma=busy_timeout(10000)")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		jobs = &jobTimes{lite: db}
	}
	s := startServer(b, cfg)
	defer s.stop()
	cpu0 := cpuTime(b, s.cmd.Process.Pid)
	start := time.Now()
	accepted := sendBurst(b, s.addr, n, conns)
	r := round{took: time.Since(start)}
	if process {
		var done []jobDone
		err := testwait.Until(time.Duration(n)*time.Second/4+2*time.Minute, func() error {
			var err error
			if done, err = jobs.workflowsDone(ctx); err != nil {
				return err
			}
			if len(done) < n {
				return fmt.Errorf("%d of %d workflow runs stored", len(done), n)
			}
			return nil
		})
		if err != nil {
			b.Fatalf("%v; the server's output:\n%s", err, s.output)
		}
		emailOf := make(map[string]string, n)
		for id := range accepted {
			emailOf[pipeline.AgentRunID(testWS, id)] = id
		}
		last := start
		for _, d := range done {
			at, ok := accepted[emailOf[d.agentRun]]
			if !ok {
				b.Fatalf("a workflow run of agent run %s, of no e-mail sent", d.agentRun)
			}
			r.latencies = append(r.latencies, d.at.Sub(at))
			last = maxTime(last, d.at)
		}
		r.took = last.Sub(start)
	}
	r.cpu = cpuTime(b, s.cmd.Process.Pid) - cpu0
	r.cores = r.cpu.Seconds() / time.Since(start).Seconds()
	r.peakRSS = peakRSS(b, s.cmd.Process.Pid)
	return r
}

// instantReceiver answers every workflow step and webhook delivery at
// once, as the invoice workflow expects (the payable's id for the upload).
func instantReceiver(b *testing.B) *receiver {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Path == "/payables" {
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"data":{"id":"pay_1"}}`)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	b.Cleanup(srv.Close)
	return &receiver{t: b, srv: srv}
}

// sendBurst sends n distinct e-mails over conns connections at once and
// returns when each was accepted (its 250), by e-mail id.
func sendBurst(b *testing.B, addr string, n, conns int) map[string]time.Time {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var (
		mu       sync.Mutex
		accepted = make(map[string]time.Time, n)
		wg       sync.WaitGroup
		errs     = make(chan error, conns)
	)
	for range conns {
		wg.Go(func() {
			c, err := smtp.Dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := range next {
				id, err := sendOne(c, uniqueEmail(i))
				if err != nil {
					errs <- fmt.Errorf("e-mail %d: %w", i, err)
					return
				}
				at := time.Now()
				mu.Lock()
				accepted[id] = at
				mu.Unlock()
			}
			c.Quit()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return accepted
}

// sendOne sends one message on an open connection and returns the id of
// the e-mail its 250 names.
func sendOne(c *smtp.Client, msg string) (string, error) {
	if err := c.Mail("billing@supplier.test", nil); err != nil {
		return "", err
	}
	if err := c.Rcpt(testAddress, nil); err != nil {
		return "", err
	}
	w, err := c.Data()
	if err != nil {
		return "", err
	}
	if _, err := io.WriteString(w, msg); err != nil {
		return "", err
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", err
	}
	_, id, ok := strings.Cut(resp.StatusText, "stored as ")
	if !ok {
		return "", fmt.Errorf("the 250 names no e-mail: %q", resp.StatusText)
	}
	return strings.TrimSpace(id), nil
}

// jobTimes reads, from River's table, when each workflow run was stored:
// its job is completed in the transaction that stores the run.
type jobTimes struct {
	lite   *sql.DB
	pg     *pgxpool.Pool
	schema string
}

// jobDone is a workflow run stored: its agent run and when.
type jobDone struct {
	agentRun string
	at       time.Time
}

func (j *jobTimes) workflowsDone(ctx context.Context) ([]jobDone, error) {
	var out []jobDone
	add := func(agentRun string, at time.Time) {
		out = append(out, jobDone{agentRun: agentRun, at: at})
	}
	if j.pg != nil {
		rows, err := j.pg.Query(ctx, `SELECT args->>'agent_run_id', finalized_at FROM `+j.schema+`.river_job WHERE kind = 'inbox.workflow' AND state = 'completed'`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var run string
			var at time.Time
			if err := rows.Scan(&run, &at); err != nil {
				return nil, err
			}
			add(run, at)
		}
		return out, rows.Err()
	}
	rows, err := j.lite.QueryContext(ctx, `SELECT json_extract(args, '$.agent_run_id'), finalized_at FROM river_job WHERE kind = 'inbox.workflow' AND state = 'completed'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var run string
		var at any
		if err := rows.Scan(&run, &at); err != nil {
			return nil, err
		}
		t, err := sqliteTime(at)
		if err != nil {
			return nil, err
		}
		add(run, t)
	}
	return out, rows.Err()
}

// sqliteTime reads a time River's SQLite driver wrote (UTC, milliseconds).
func sqliteTime(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t, nil
	case string:
		return time.Parse("2006-01-02 15:04:05.000", t)
	}
	return time.Time{}, fmt.Errorf("a River time of type %T", v)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// cpuTime is a process's user and system CPU time so far.
func cpuTime(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name (which may hold spaces), from the
	// third: utime and stime are the 14th and 15th, in clock ticks.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ticks := 0
	for _, s := range f[11:13] {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// peakRSS is a process's peak resident memory so far, in MiB.
func peakRSS(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
