package budget

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// asyncAcquire calls Acquire in a goroutine; the lease or error arrives on
// the channel.
type got struct {
	l   *Lease
	err error
}

func asyncAcquire(ctx context.Context, b *Budget, ep, ws string, tokens int) chan got {
	ch := make(chan got, 1)
	go func() {
		l, err := b.Acquire(ctx, ep, ws, tokens)
		ch <- got{l, err}
	}()
	return ch
}

// waitFor waits until the endpoint has n calls waiting (the goroutines
// have queued).
func waitFor(t *testing.T, b *Budget, ep string, waiting int) {
	t.Helper()
	for i := 0; b.Stats(ep).Waiting != waiting; i++ {
		if i > 1e7 {
			t.Fatalf("%d calls waiting, want %d", b.Stats(ep).Waiting, waiting)
		}
		runtime.Gosched()
	}
}

func admitted(ch chan got) *Lease {
	select {
	case g := <-ch:
		if g.err != nil {
			panic(g.err)
		}
		return g.l
	default:
		return nil
	}
}

func mustAcquire(t *testing.T, b *Budget, ep, ws string, tokens int) *Lease {
	t.Helper()
	l, err := b.Acquire(context.Background(), ep, ws, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestConfiguredRequestsPerMinutePaced(t *testing.T) {
	c := newFakeClock()
	b := New(Options{Clock: c})
	b.SetLimits("e", Limits{RequestsPerMinute: 120}) // 2 a second, 2 at once
	mustAcquire(t, b, "e", "w", 0).Done(Result{Status: 200})
	mustAcquire(t, b, "e", "w", 0).Done(Result{Status: 200})
	third := asyncAcquire(context.Background(), b, "e", "w", 0)
	waitFor(t, b, "e", 1)
	c.Advance(499 * time.Millisecond)
	if admitted(third) != nil {
		t.Fatal("a third call within the first half second of a 120 RPM ceiling was admitted")
	}
	c.Advance(time.Millisecond)
	g := <-third
	if g.err != nil || g.l.Waited != 500*time.Millisecond {
		t.Fatalf("third call: %v, waited %v; want admitted after 500ms", g.err, g.l.Waited)
	}
}

func TestInFlightCeiling(t *testing.T) {
	b := New(Options{Clock: newFakeClock()})
	b.SetLimits("e", Limits{InFlight: 2})
	mustAcquire(t, b, "e", "w", 0).Done(Result{Status: 200}) // the probe
	l1 := mustAcquire(t, b, "e", "w", 0)
	mustAcquire(t, b, "e", "w", 0)
	third := asyncAcquire(context.Background(), b, "e", "w", 0)
	waitFor(t, b, "e", 1)
	if s := b.Stats("e"); s.InFlight != 2 {
		t.Fatalf("stats %+v", s)
	}
	l1.Done(Result{Status: 200})
	if g := <-third; g.err != nil {
		t.Fatal(g.err)
	}
}

func TestUnknownEndpointProbesOneCallFirst(t *testing.T) {
	b := New(Options{Clock: newFakeClock()})
	first := mustAcquire(t, b, "e", "w", 0)
	second := asyncAcquire(context.Background(), b, "e", "w", 0)
	waitFor(t, b, "e", 1)
	// An answer without rate-limit headers: nothing more to learn, no limit.
	first.Done(Result{Status: 200})
	<-second
	for range 50 {
		mustAcquire(t, b, "e", "w", 0) // none waits
	}
}

func TestLearnsTheProviderLimitFromHeaders(t *testing.T) {
	c := newFakeClock()
	b := New(Options{Clock: c})
	first := mustAcquire(t, b, "e", "w", 0)
	// 600 a minute, one used: 599 left, full again in 100ms.
	first.Done(Result{Status: 200, Header: hdr("x-ratelimit-limit-requests", "600", "x-ratelimit-remaining-requests", "599", "x-ratelimit-reset-requests", "100ms")})
	for range 599 {
		mustAcquire(t, b, "e", "w", 0)
	}
	next := asyncAcquire(context.Background(), b, "e", "w", 0)
	waitFor(t, b, "e", 1)
	c.Advance(99 * time.Millisecond)
	if admitted(next) != nil {
		t.Fatal("the 601st call went before the provider's 600 a minute refilled one")
	}
	c.Advance(time.Millisecond)
	<-next
}

func TestHeadersSeenLateCountCallsSentSince(t *testing.T) {
	c := newFakeClock()
	b := New(Options{Clock: c})
	b.SetLimits("e", Limits{RequestsPerMinute: 6000}) // our own ceiling: 100 a second
	probe := mustAcquire(t, b, "e", "w", 0)
	var later []*Lease
	for range 50 {
		later = append(later, mustAcquire(t, b, "e", "w", 0))
	}
	// The provider allows 60 a minute and had 10 left when the first call
	// came; the 50 sent since used them up and more.
	probe.Done(Result{Status: 200, Header: hdr("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "10")})
	next := asyncAcquire(context.Background(), b, "e", "w", 0)
	waitFor(t, b, "e", 1)
	c.Advance(40 * time.Second) // 40 refilled of the 40 owed
	if admitted(next) != nil {
		t.Fatal("admitted while the provider's remaining was spent by the calls sent after the one that reported it")
	}
	c.Advance(time.Second)
	<-next
	_ = later
}

func TestRateLimitedPausesTheWholeEndpointNotOthers(t *testing.T) {
	c := newFakeClock()
	var o recorder
	b := New(Options{Clock: c, Observer: &o})
	b.SetLimits("e", Limits{RequestsPerMinute: 600})
	b.SetLimits("other", Limits{RequestsPerMinute: 600})
	l := mustAcquire(t, b, "e", "w", 0)
	l.Done(Result{Status: 429, Header: hdr("retry-after", "5")})
	waiting := asyncAcquire(context.Background(), b, "e", "v", 0)
	waitFor(t, b, "e", 1)
	// Another endpoint goes on.
	mustAcquire(t, b, "other", "v", 0).Done(Result{Status: 200})
	c.Advance(4999 * time.Millisecond)
	if admitted(waiting) != nil {
		t.Fatal("another workspace's call went before the retry-after of a 429 on the same endpoint")
	}
	c.Advance(101 * time.Millisecond) // the pause, then one call's worth at 10 a second
	<-waiting
	if o.limited != "e 429 5s" {
		t.Errorf("observer saw %q", o.limited)
	}
}

func TestRateLimitedWithoutWaitBacksOffGrowing(t *testing.T) {
	c := newFakeClock()
	b := New(Options{Clock: c, Backoff: time.Second})
	b.SetLimits("e", Limits{InFlight: 10})
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		l := mustAcquire(t, b, "e", "w", 0)
		l.Done(Result{Status: 503})
		next := asyncAcquire(context.Background(), b, "e", "w", 0)
		waitFor(t, b, "e", 1)
		c.Advance(want - time.Millisecond)
		if admitted(next) != nil {
			t.Fatalf("admitted before the backoff of %s", want)
		}
		c.Advance(time.Millisecond)
		(<-next).l.Cancel()
	}
	// Reset after a success, the pause asked is the exhausted limit's reset.
	mustAcquire(t, b, "e", "w", 0).Done(Result{Status: 200})
	mustAcquire(t, b, "e", "w", 0).Done(Result{Status: 429, Header: hdr("x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "3s")})
	next := asyncAcquire(context.Background(), b, "e", "w", 0)
	waitFor(t, b, "e", 1)
	c.Advance(2999 * time.Millisecond)
	if admitted(next) != nil {
		t.Fatal("admitted before the tokens' reset")
	}
	c.Advance(time.Millisecond)
	<-next
}

func TestTokensEstimatedThenReconciled(t *testing.T) {
	c := newFakeClock()
	b := New(Options{Clock: c})
	b.SetLimits("e", Limits{TokensPerMinute: 60000}) // 1,000 a second, 1,000 at once
	l := mustAcquire(t, b, "e", "w", 900)
	next := asyncAcquire(context.Background(), b, "e", "w", 900)
	waitFor(t, b, "e", 1)
	// The answer used 100 tokens, not 900: the 800 come back.
	l.Done(Result{Status: 200, Tokens: 100})
	<-next
	// 1000-100-900 = 0 left: a call of 500 waits half a second.
	third := asyncAcquire(context.Background(), b, "e", "w", 500)
	waitFor(t, b, "e", 1)
	c.Advance(499 * time.Millisecond)
	if admitted(third) != nil {
		t.Fatal("admitted before its tokens refilled")
	}
	c.Advance(time.Millisecond)
	<-third
}

// Workspace A has 2,000 calls queued behind an endpoint that takes one at a
// time; workspace B's first call is admitted next, not after A's.
func TestFairnessAcrossWorkspaces(t *testing.T) {
	b := New(Options{Clock: newFakeClock()})
	b.SetLimits("e", Limits{InFlight: 1})
	running := mustAcquire(t, b, "e", "A", 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var as []chan got
	for range 2000 {
		as = append(as, asyncAcquire(ctx, b, "e", "A", 0))
	}
	waitFor(t, b, "e", 2000)
	bch := asyncAcquire(ctx, b, "e", "B", 0)
	waitFor(t, b, "e", 2001)
	running.Done(Result{Status: 200})
	// One of A's goes (its turn came first), then B's.
	var a *Lease
	for a == nil {
		for _, ch := range as {
			if l := admitted(ch); l != nil {
				a = l
				break
			}
		}
		runtime.Gosched()
	}
	a.Done(Result{Status: 200})
	g := <-bch
	if g.err != nil {
		t.Fatal(g.err)
	}
	if s := b.Stats("e"); s.Waiting != 1999 || s.InFlight != 1 {
		t.Fatalf("after B's admission: %+v; want A's 1,999 still waiting, B's call in flight", s)
	}
}

func TestCancelledWaiterLeavesTheQueue(t *testing.T) {
	b := New(Options{Clock: newFakeClock()})
	b.SetLimits("e", Limits{InFlight: 1})
	running := mustAcquire(t, b, "e", "A", 0)
	ctx, cancel := context.WithCancel(context.Background())
	gone := asyncAcquire(ctx, b, "e", "A", 0)
	stays := asyncAcquire(context.Background(), b, "e", "B", 0)
	waitFor(t, b, "e", 2)
	cancel()
	g := <-gone
	if !errors.Is(g.err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", g.err)
	}
	waitFor(t, b, "e", 1)
	running.Done(Result{Status: 200})
	if g := <-stays; g.err != nil {
		t.Fatal(g.err)
	}
	if s := b.Stats("e"); s != (Stats{InFlight: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

func TestCloseRefusesWaitersLetsAdmittedFinish(t *testing.T) {
	b := New(Options{Clock: newFakeClock()})
	b.SetLimits("e", Limits{InFlight: 1})
	running := mustAcquire(t, b, "e", "A", 0)
	waiting := asyncAcquire(context.Background(), b, "e", "A", 0)
	waitFor(t, b, "e", 1)
	b.Close()
	if g := <-waiting; !errors.Is(g.err, ErrClosed) {
		t.Fatalf("waiter after Close: %v", g.err)
	}
	if _, err := b.Acquire(context.Background(), "e", "A", 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
	running.Done(Result{Status: 200})
	if s := b.Stats("e"); s != (Stats{}) {
		t.Fatalf("stats %+v", s)
	}
}

func TestEndpointIDHidesTheKey(t *testing.T) {
	a := EndpointID("https://api.openai.com/v1", "sk-secret-1")
	if a == EndpointID("https://api.openai.com/v1", "sk-secret-2") {
		t.Fatal("two keys on one URL share an endpoint")
	}
	if len(a) != len("api.openai.com#")+16 || a[:15] != "api.openai.com#" {
		t.Fatalf("id %q", a)
	}
}

type recorder struct {
	mu      sync.Mutex
	limited string
}

func (r *recorder) Changed(string, Stats) {}
func (r *recorder) Limited(ep string, status int, pause time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limited = fmt.Sprintf("%s %d %s", ep, status, pause)
}
