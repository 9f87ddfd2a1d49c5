// Package panics keeps a panic inside the request, session, job or loop it
// happened in. Recover stops it and reports it; whoever listens (the
// assembled server logs the stack and counts it by surface) hears of it;
// the process goes on serving everyone else.
//
// A goroutine that a library starts for us may have no recover of its own
// (the MCP SDK runs each request in one, net/http recovers but writes no
// answer): each surface defers Recover at its outermost layer and answers
// its client as its protocol says (-32603, 421 4.3.0, 500, a retried job).
package panics

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Surface names where a panic was contained.
type Surface string

// The surfaces of the product.
const (
	MCP        Surface = "mcp"  // one JSON-RPC request of an MCP client
	SMTP       Surface = "smtp" // one SMTP session
	HTTP       Surface = "http" // one HTTP request
	Job        Surface = "job"  // one run of a pipeline job
	Background Surface = "loop" // a background loop (retention, rescue, clean-up, reload, scheduler)
)

// Surfaces lists every surface, so that a counter can start at zero for
// each.
var Surfaces = []Surface{MCP, SMTP, HTTP, Job, Background}

// Panic is a contained panic: where it happened, its value and the stack
// of the goroutine that panicked. It is an error, so that a surface that
// ends in an error can return it.
type Panic struct {
	Surface Surface
	Where   string // what was running: a method, a job kind, a loop's name
	Value   any
	Stack   []byte
}

func (p *Panic) Error() string {
	return fmt.Sprintf("panic in %s %s: %v", p.Surface, p.Where, p.Value)
}

// Unwrap returns the panic's value when it is an error (a runtime error,
// say), so that errors.As finds it.
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

var (
	mu        sync.RWMutex
	listeners = map[int]func(*Panic){}
	nextID    int
	counts    sync.Map // Surface → *atomic.Uint64
)

// Listen calls fn for every panic contained from now on, in the goroutine
// that panicked, until stop is called.
func Listen(fn func(*Panic)) (stop func()) {
	mu.Lock()
	defer mu.Unlock()
	id := nextID
	nextID++
	listeners[id] = fn
	return func() {
		mu.Lock()
		defer mu.Unlock()
		delete(listeners, id)
	}
}

// Count is how many panics were contained on surface s since the process
// started.
func Count(s Surface) uint64 {
	if c, ok := counts.Load(s); ok {
		return c.(*atomic.Uint64).Load()
	}
	return 0
}

// Report records a recovered panic value and tells the listeners. Code
// that recovers on its own (a library's hook that hands over the value and
// the stack) calls it; everyone else defers Recover.
func Report(s Surface, where string, value any, stack []byte) *Panic {
	p := &Panic{Surface: s, Where: where, Value: value, Stack: stack}
	c, _ := counts.LoadOrStore(s, new(atomic.Uint64))
	c.(*atomic.Uint64).Add(1)
	mu.RLock()
	fns := make([]func(*Panic), 0, len(listeners))
	for _, fn := range listeners {
		fns = append(fns, fn)
	}
	mu.RUnlock()
	for _, fn := range fns {
		func() {
			defer func() { _ = recover() }() // a listener's own panic is not ours to spread
			fn(p)
		}()
	}
	return p
}

// Recover, deferred, stops a panic of the calling goroutine and reports
// it; when err is not nil it is set to the *Panic, so that the function
// returns an error instead.
//
//	defer panics.Recover(panics.Job, "agent", &err)
func Recover(s Surface, where string, err *error) {
	if v := recover(); v != nil {
		p := Report(s, where, v, debug.Stack())
		if err != nil {
			*err = p
		}
	}
}

// Do runs fn and returns the panic it contained, or nil.
func Do(s Surface, where string, fn func()) (p *Panic) {
	defer func() {
		if v := recover(); v != nil {
			p = Report(s, where, v, debug.Stack())
		}
	}()
	fn()
	return nil
}

// Restart bounds how soon a loop that panicked runs again: the first wait
// is Min, doubled after each panic up to Max, and back to Min once the
// loop has run for Healthy without one.
type Restart struct {
	Min, Max, Healthy time.Duration
}

// DefaultRestart waits 100 ms after a first panic, at most a minute.
var DefaultRestart = Restart{Min: 100 * time.Millisecond, Max: time.Minute, Healthy: time.Minute}

// Loop runs the background loop fn until it returns or ctx ends. A panic
// in fn is reported on the Background surface and fn runs again after a wait
// that grows with each panic in a row; the loop's state is fn's to
// rebuild. Loop returns what fn returned, or ctx's error when it ended
// while waiting.
func Loop(ctx context.Context, where string, r Restart, fn func(context.Context) error) error {
	wait := r.Min
	for {
		started := time.Now()
		var err error
		p := Do(Background, where, func() { err = fn(ctx) })
		if p == nil {
			return err
		}
		if time.Since(started) >= r.Healthy {
			wait = r.Min
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, r.Max)
	}
}
