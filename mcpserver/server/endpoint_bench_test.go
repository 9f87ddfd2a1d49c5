package server_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
)

var (
	latencyEmails = flag.Int("latency.emails", 400, "BenchmarkModelLatency: e-mails in each burst")
	latencyRounds = flag.Int("latency.rounds", 1, "BenchmarkModelLatency: rounds of every case per iteration (run it with -benchtime 1x)")
	latencyCases  = flag.String("latency.cases", "", "BenchmarkModelLatency: the cases to run, comma-separated (default all)")
)

// latencyCase is one configuration of BenchmarkModelLatency.
type latencyCase struct {
	name    string
	latency time.Duration
	// rpm is the stand-in's enforced limit (0: none).
	rpm int
	// before runs the server as it was before the endpoint budget: no
	// budget on the runner, the agent stage's workers the old defaults
	// (16 on SQLite, 8 on PostgreSQL).
	before bool
}

var latencyCasesAll = []latencyCase{
	{"instant/before", 0, 0, true}, {"instant/after", 0, 0, false},
	{"2s/before", 2 * time.Second, 0, true}, {"2s/after", 2 * time.Second, 0, false},
	{"2s-600rpm/before", 2 * time.Second, 600, true}, {"2s-600rpm/after", 2 * time.Second, 600, false},
}

// latencyRound is what one burst did.
type latencyRound struct {
	took      time.Duration   // first e-mail sent → last step received
	latencies []time.Duration // 250 → step received, per e-mail
	peak      int64           // model calls in flight at once, at most
	limited   int             // 429s the stand-in answered
	calls     int             // model calls the stand-in received
	rpm       float64         // answers per minute, first to last
	failed    int             // e-mails not processed
}

// BenchmarkModelLatency runs kobana's server (server.Run: SMTP intake, the
// pipeline, the agent runner against the stand-in model over HTTP) on a
// fresh store per burst of -latency.emails e-mails to one workspace, each
// answered with a one-step workflow to a receiver that answers at once, in
// every case interleaved round by round: a model that answers at once, one
// that takes 2 s, and one that takes 2 s behind a stand-in enforcing 600
// requests a minute (OpenAI's headers on every answer, 429 with
// retry-after past it; its minute's allowance spent before the burst, so
// the burst runs at the sustained rate) — each before (no budget, the old
// agent workers) and after (the process's endpoint budget, the agent stage
// sized by it). Per case: e2e-msgs/s, the ratio to the instant model's rate
// of the same configuration, p50/p99 latency (250 → the step received),
// the peak of model calls in flight, the 429 share, answers per minute and
// e-mails not processed. BenchmarkModelLatency/heap holds the burst's calls
// at the model and reports the heap each holds in the whole process (the
// stand-in's side of the connection included).
//
//	go test ./server -run '^$' -bench ModelLatency -benchtime 1x
func BenchmarkModelLatency(b *testing.B) {
	for _, onPG := range []bool{false, true} {
		b.Run(map[bool]string{false: "sqlite", true: "postgres"}[onPG], func(b *testing.B) {
			if onPG {
				pgtest.BaseDSN(b)
			}
			cases := latencyCasesAll
			if *latencyCases != "" {
				cases = nil
				for _, c := range latencyCasesAll {
					if slices.Contains(strings.Split(*latencyCases, ","), c.name) {
						cases = append(cases, c)
					}
				}
			}
			results := map[string][]latencyRound{}
			for i := range b.N * *latencyRounds {
				for _, c := range cases {
					r := latencyBurst(b, onPG, c, *latencyEmails)
					results[c.name] = append(results[c.name], r)
					b.Logf("round %d %s: %.1f e-mails/s, p50 %v, peak %d in flight, %d calls, %d 429s, %.0f answers/min, %d not processed",
						i, c.name, float64(*latencyEmails)/r.took.Seconds(), pct(r.latencies, 0.5), r.peak, r.calls, r.limited, r.rpm, r.failed)
				}
			}
			for _, c := range cases {
				rs := results[c.name]
				var took time.Duration
				var lat []time.Duration
				var peak int64
				var limited, calls, failed int
				var rpm float64
				for _, r := range rs {
					took += r.took
					lat = append(lat, r.latencies...)
					peak = max(peak, r.peak)
					limited += r.limited
					calls += r.calls
					failed += r.failed
					rpm += r.rpm / float64(len(rs))
				}
				rate := float64(*latencyEmails*len(rs)) / took.Seconds()
				b.ReportMetric(rate, c.name+"-msgs/s")
				b.ReportMetric(float64(pct(lat, 0.5).Milliseconds()), c.name+"-p50-ms")
				b.ReportMetric(float64(pct(lat, 0.99).Milliseconds()), c.name+"-p99-ms")
				b.ReportMetric(float64(peak), c.name+"-peak-in-flight")
				b.ReportMetric(float64(failed), c.name+"-failed")
				if c.rpm > 0 {
					b.ReportMetric(rpm, c.name+"-answers/min")
					b.ReportMetric(100*float64(limited)/float64(max(calls, 1)), c.name+"-%429")
				}
				base := "instant/before"
				if !c.before {
					base = "instant/after"
				}
				if c.latency > 0 && len(results[base]) > 0 {
					var bt time.Duration
					for _, r := range results[base] {
						bt += r.took
					}
					b.ReportMetric(rate/(float64(*latencyEmails*len(results[base]))/bt.Seconds()), c.name+"-x-instant")
				}
			}
			b.ReportMetric(0, "ns/op")
		})
	}
	b.Run("heap", func(b *testing.B) {
		for b.Loop() {
			perCall, held := heapPerCallInFlight(b, *latencyEmails)
			b.ReportMetric(perCall/1024, "KiB/call-in-flight")
			b.ReportMetric(float64(held), "calls-held")
		}
	})
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func latencyBurst(b *testing.B, onPG bool, c latencyCase, n int) latencyRound {
	ctx := context.Background()
	rv := newStepReceiver(b)
	probe, base := newModelProbe(b, stepDoc(rv), c.latency, false)
	if c.rpm > 0 {
		probe.srv.Limit(standin.RateLimit{Requests: c.rpm})
		drainAllowance(b, base, c.rpm)
		probe.mu.Lock()
		probe.arrivals, probe.answeredAt, probe.answered = nil, nil, map[string]int{}
		probe.mu.Unlock()
		probe.peak.Store(0)
	}
	limited0 := probe.srv.Limited()
	st, path := endpointStore(b, onPG)
	cfg := endpointConfig(b, st, path, base, 0)
	if c.before {
		cfg.AgentRunner = &agent.Runner{Config: cfg.Agents}
		w := queue.DefaultWorkers
		if onPG {
			w = queue.ReplicaWorkers
		}
		cfg.Workers.Agent = w[queue.QueueAgent]
	}
	addrs, stop := start(b, cfg)
	defer stop()
	ms := marks("A", n)
	sentAt := make(map[string]time.Time, n)
	var mu sync.Mutex
	start := time.Now()
	sendMarkedFunc(b, addrs["smtp"].String(), ms, 8, func(mark string) {
		mu.Lock()
		sentAt[mark] = time.Now()
		mu.Unlock()
	})
	var emails []inbox.Email
	err := testwait.Until(10*time.Minute, func() error {
		var err error
		emails, err = inbox.NewRepo(st).Emails.All(ctx, testWorkspaces["A"].id, store.Query{})
		if err != nil {
			return err
		}
		done := 0
		for _, e := range emails {
			if e.Status != inbox.EmailPending {
				done++
			}
		}
		if done < n {
			return fmt.Errorf("%d of %d e-mails settled", done, n)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	r := latencyRound{peak: probe.peak.Load(), limited: probe.srv.Limited() - limited0}
	rv.mu.Lock()
	last := start
	for _, e := range emails {
		if e.Status != inbox.EmailProcessed {
			r.failed++
			continue
		}
		at, ok := rv.when[e.ID]
		if !ok {
			r.failed++
			continue
		}
		if at.After(last) {
			last = at
		}
		mark := strings.TrimPrefix(e.Subject, "invoice ")
		if s, ok := sentAt[mark]; ok {
			r.latencies = append(r.latencies, at.Sub(s))
		}
	}
	rv.mu.Unlock()
	r.took = last.Sub(start)
	probe.mu.Lock()
	r.calls = len(probe.arrivals)
	answers := slices.SortedFunc(slices.Values(probe.answeredAt), time.Time.Compare)
	probe.mu.Unlock()
	if len(answers) > 1 {
		r.rpm = float64(len(answers)-1) / answers[len(answers)-1].Sub(answers[0]).Minutes()
	}
	return r
}

// drainAllowance spends the stand-in's minute's allowance at base, so that
// a burst after it runs at the sustained rate.
func drainAllowance(b *testing.B, base string, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(`{"model": "drain", "messages": [{"role": "user", "content": "drain"}]}`))
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// heapPerCallInFlight starts a server whose endpoint sets a rate ceiling
// (so that no call waits to learn the provider's limits), holds the calls
// of a burst of n e-mails at the model, and returns the heap the process
// holds per call in flight (after a GC, less the same before the burst)
// and the calls held.
func heapPerCallInFlight(b *testing.B, n int) (float64, int64) {
	rv := newStepReceiver(b)
	probe, base := newModelProbe(b, stepDoc(rv), 0, true)
	st, path := endpointStore(b, false)
	cfg := endpointConfig(b, st, path, base, 0)
	ep := cfg.Agents.Providers[agent.AnyProvider]
	ep.RPM = 1 << 30
	cfg.Agents.Providers[agent.AnyProvider] = ep
	addrs, stop := start(b, cfg)
	defer stop()
	time.Sleep(time.Second) // the server's own start settles
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	sendMarked(b, addrs["smtp"].String(), marks("A", n), 8)
	testwait.Until(time.Minute, func() error {
		if got := probe.inFlight.Load(); got < int64(n) {
			return fmt.Errorf("%d calls held", got)
		}
		return nil
	})
	held := probe.inFlight.Load()
	after := heap()
	probe.release()
	settledEmails(b, st, "A", n, 5*time.Minute)
	return float64(int64(after)-int64(before)) / float64(max(held, 1)), held
}
