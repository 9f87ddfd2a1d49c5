package panics_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/panics"
)

func ExampleRecover() {
	stop := panics.Listen(func(p *panics.Panic) { fmt.Println("heard:", p.Surface, p.Where) })
	defer stop()
	handle := func() (err error) {
		defer panics.Recover(panics.HTTP, "GET /x", &err)
		var m map[string]int
		//lint:ignore SA5000 the panic is the point of this test
		m["a"] = 1 // a bug: assignment to a nil map
		return nil
	}
	err := handle()
	fmt.Println(err != nil)
	// Output:
	// heard: http GET /x
	// true
}

func TestRecoverReportsStackAndCounts(t *testing.T) {
	var got *panics.Panic
	stop := panics.Listen(func(p *panics.Panic) { got = p })
	defer stop()
	before := panics.Count(panics.Job)
	err := func() (err error) {
		defer panics.Recover(panics.Job, "agent", &err)
		var p *struct{ x int }
		_ = p.x
		return nil
	}()
	var re runtime.Error
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a runtime error inside", err)
	}
	if got == nil || !strings.Contains(string(got.Stack), "TestRecoverReportsStackAndCounts") {
		t.Fatalf("listener heard %+v; want the stack of the panicking goroutine", got)
	}
	if n := panics.Count(panics.Job) - before; n != 1 {
		t.Fatalf("count grew by %d, want 1", n)
	}
}

func TestAListenersOwnPanicIsNotSpread(t *testing.T) {
	stop := panics.Listen(func(*panics.Panic) { panic("listener") })
	defer stop()
	if p := panics.Do(panics.HTTP, "x", func() { panic("first") }); p == nil || p.Value != "first" {
		t.Fatalf("Do = %v", p)
	}
}

func TestLoopRestartsAfterAPanicWithBackoff(t *testing.T) {
	runs := 0
	var starts []time.Time
	err := panics.Loop(context.Background(), "retention", panics.Restart{Min: 10 * time.Millisecond, Max: 40 * time.Millisecond, Healthy: time.Hour},
		func(context.Context) error {
			runs++
			starts = append(starts, time.Now())
			if runs <= 4 {
				panic(fmt.Sprintf("run %d", runs))
			}
			return errors.New("done")
		})
	if err == nil || err.Error() != "done" || runs != 5 {
		t.Fatalf("Loop = %v after %d runs; want fn's own error after 5", err, runs)
	}
	// waits 10, 20, 40, 40 ms: each at least its floor.
	for i, want := range []time.Duration{10, 20, 40, 40} {
		if d := starts[i+1].Sub(starts[i]); d < want*time.Millisecond {
			t.Errorf("wait %d = %v, want at least %v", i, d, want*time.Millisecond)
		}
	}
}

func TestLoopEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	err := panics.Loop(ctx, "reload", panics.Restart{Min: time.Hour, Max: time.Hour, Healthy: time.Hour}, func(context.Context) error {
		runs++
		cancel()
		panic("boom")
	})
	if !errors.Is(err, context.Canceled) || runs != 1 {
		t.Fatalf("Loop = %v after %d runs; want context.Canceled after 1", err, runs)
	}
}
