package main

import (
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/runrecord"
)

// SIGTERM while a step is held past -grace: serve exits within the grace
// period, and the step it cut is recorded as a crash would leave it — the
// run interrupted, the step unknown (it may have been received), never
// failed — so that nothing offers to send it again as if it had not been.
// A restart does not send it again.
func TestServeSIGTERMCutsAStepHeldPastTheGrace(t *testing.T) {
	f := newStopFixture(t, "3s")
	p := startKobana(t, nil, f.args...)
	f.sendAndHold(t, p)
	sent := p.signal(syscall.SIGTERM)
	code, exited := p.wait(30 * time.Second)
	if code != exitOK {
		t.Fatalf("exit %d; output:\n%s", code, p.output)
	}
	// Measured, not asserted: reported in docs/operations.md.
	t.Logf("held step: SIGTERM to exit %v (-grace 3s)", exited.Sub(sent))
	e, wr, steps := f.runOf(t)
	if wr.Status != runrecord.RunInterrupted || len(steps) != 1 || steps[0].State != runrecord.Unknown {
		t.Errorf("after the cut: e-mail %s (%s), run %s, steps %v; want the run interrupted, its step unknown", e.Status, e.StatusDetail, wr.Status, steps)
	}
	// A restart finds the run as it was left and sends nothing again.
	p2 := startKobana(t, nil, f.args...)
	p2.await(regexp.MustCompile(`processing the Inbox's queue`), 30*time.Second)
	if err := testwait.Until(30*time.Second, func() error {
		if _, wr, _ := f.runOf(t); wr.Status == runrecord.RunRunning {
			return fmt.Errorf("the run is still running")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p2.signal(syscall.SIGTERM)
	p2.wait(30 * time.Second)
	if req, _ := f.rv.counts(); req != 1 {
		t.Errorf("the receiver got %d requests, want 1 (the cut step sent once)", req)
	}
	e, wr, steps = f.runOf(t)
	if wr.Status != runrecord.RunInterrupted || steps[0].State != runrecord.Unknown {
		t.Errorf("after the restart: e-mail %s (%s), run %s, steps %v", e.Status, e.StatusDetail, wr.Status, steps)
	}
}
