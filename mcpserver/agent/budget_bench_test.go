package agent

import (
	"context"
	"flag"
	"fmt"
	"net"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
)

var (
	budgetRun     = flag.Duration("budget.run", 40*time.Second, "BenchmarkEndpointBudget: how long the callers run")
	budgetSteady  = flag.Duration("budget.steady", 15*time.Second, "BenchmarkEndpointBudget: answers before this are the provider's first minute's allowance, not counted in the sustained rate")
	budgetCallers = flag.Int("budget.callers", 120, "BenchmarkEndpointBudget: agent runs side by side")
)

// BenchmarkEndpointBudget drives agent runs through a Budget with no
// configured ceiling against a stand-in that takes 2 s to answer and
// enforces 600 requests a minute (a bucket of 600 refilled continuously,
// OpenAI's headers on every answer, 429 with retry-after past it), from
// -budget.callers runs side by side in 4 workspaces for -budget.run. The
// budget learns the limit from the headers; the first answers spend the
// minute's 600 at once, as the provider allows, so the sustained rate is
// measured on the answers after -budget.steady.
//
//	go test ./agent -run '^$' -bench EndpointBudget -benchtime 1x
func BenchmarkEndpointBudget(b *testing.B) {
	for b.Loop() {
		srv := standin.New(standin.Always(standin.Answer(payableAnswer)))
		srv.Latency, srv.Forget = 2*time.Second, true
		srv.Limit(standin.RateLimit{Requests: 600})
		base, stop, err := srv.Start()
		if err != nil {
			b.Fatal(err)
		}
		ep := Endpoint{BaseURL: base, ResponseFormat: FormatJSONSchema, Family: FamilyOpenAI}
		cfg := Config{Providers: map[string]Endpoint{AnyProvider: ep}}
		var inFlight, samples, sum atomic.Int64
		obs := &sampler{inFlight: &inFlight}
		r := &Runner{Config: cfg, Budget: cfg.Budget(budget.Options{Observer: obs})}
		in := invoiceInput(b)
		in.Agent.Settings.TimeoutSeconds = 120
		ctx, cancel := context.WithTimeout(context.Background(), *budgetRun)
		start := time.Now()
		var mu sync.Mutex
		var answered []time.Duration
		var failed []string
		var wg sync.WaitGroup
		for i := range *budgetCallers {
			wg.Go(func() {
				in := in
				in.Workspace.ID = fmt.Sprintf("ws_%d", i%4)
				for ctx.Err() == nil {
					res, err := r.RunAgent(ctx, in)
					if err != nil {
						return
					}
					mu.Lock()
					if res.Status == inbox.RunSucceeded {
						answered = append(answered, time.Since(start))
					} else {
						failed = append(failed, string(res.Cause)+": "+res.Error)
					}
					mu.Unlock()
				}
			})
		}
		tick := time.NewTicker(100 * time.Millisecond)
		go func() {
			for {
				select {
				case <-ctx.Done():
					tick.Stop()
					return
				case <-tick.C:
					samples.Add(1)
					sum.Add(inFlight.Load())
				}
			}
		}()
		wg.Wait()
		cancel()
		elapsed := time.Since(start)
		stop()
		sort.Slice(answered, func(i, j int) bool { return answered[i] < answered[j] })
		steady := 0
		for _, t := range answered {
			if t >= *budgetSteady {
				steady++
			}
		}
		window := elapsed - *budgetSteady
		rpm := float64(steady) / window.Minutes()
		requests := len(answered) + len(failed) + srv.Limited()
		b.ReportMetric(rpm, "sustained-rpm")
		b.ReportMetric(rpm/600, "x600rpm")
		b.ReportMetric(100*float64(srv.Limited())/float64(max(requests, 1)), "%429")
		b.ReportMetric(float64(len(answered)), "answered")
		b.ReportMetric(float64(len(failed)), "failed")
		b.ReportMetric(float64(sum.Load())/float64(max(samples.Load(), 1)), "in-flight-avg")
		if len(failed) > 0 {
			b.Logf("first failure: %s", failed[0])
		}
	}
}

// sampler keeps the endpoint's calls in flight.
type sampler struct{ inFlight *atomic.Int64 }

func (s *sampler) Changed(_ string, st budget.Stats)  { s.inFlight.Store(int64(st.InFlight)) }
func (s *sampler) Limited(string, int, time.Duration) {}

// BenchmarkHeapPerCallInFlight holds -inflight.calls agent runs on the
// sample invoice in flight against an endpoint that accepts their
// connections and never answers, and reports the heap and goroutine stacks
// each holds (after a GC, less the same measure before), through the budget.
//
//	go test ./agent -run '^$' -bench HeapPerCallInFlight -benchtime 1x
func BenchmarkHeapPerCallInFlight(b *testing.B) {
	n := 500
	for b.Loop() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		var conns sync.Map
		var accepted atomic.Int64
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				conns.Store(c, true)
				accepted.Add(1)
			}
		}()
		ep := Endpoint{BaseURL: "http://" + ln.Addr().String() + "/v1", ResponseFormat: FormatJSONSchema, Family: FamilyOpenAI}
		cfg := Config{Providers: map[string]Endpoint{AnyProvider: ep}}
		ep.RPM = 1 << 30 // no probe: every call goes at once
		cfg.Providers[AnyProvider] = ep
		r := &Runner{Config: cfg, Budget: cfg.Budget(budget.Options{})}
		in := invoiceInput(b)
		before := heap()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { r.RunAgent(ctx, in) })
		}
		for accepted.Load() < int64(n) || r.Budget.Stats(ep.ID()).InFlight < n {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // the requests written
		during := heap()
		cancel()
		wg.Wait()
		ln.Close()
		conns.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
		b.ReportMetric(float64(during.heap-before.heap)/float64(n)/1024, "heap-KiB/call")
		b.ReportMetric(float64(during.stack-before.stack)/float64(n)/1024, "stack-KiB/call")
	}
}

type mem struct{ heap, stack uint64 }

func heap() mem {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return mem{m.HeapInuse, m.StackInuse}
}
