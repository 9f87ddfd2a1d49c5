package store

import (
	"errors"
	"testing"
	"time"
)

// A store that refused a write is said to take writes again only once a
// transaction committed after its last refusal and WritableAgain has passed
// without another: commits and refusals in turn (a disk with room for a
// small write only) keep it unwritable; a transaction that fails for
// another reason says nothing.
func TestWriteHealthHoldsThroughMixedOutcomes(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	h := &WriteHealth{now: func() time.Time { return now }}
	full := Refused(RefusedFull, errors.New("database or disk is full"))
	want := func(step, reason string) {
		t.Helper()
		if got, _ := h.Refusing(); got != reason {
			t.Fatalf("%s: Refusing = %q, want %q", step, got, reason)
		}
	}
	want("at first", "")
	h.Observe(nil)
	want("after a commit", "")
	h.Observe(full)
	start := now
	want("after a refusal", RefusedFull)
	for i := range 10 {
		now = now.Add(time.Second)
		h.Observe(nil)
		want("right after a commit between refusals", RefusedFull)
		now = now.Add(time.Second)
		h.Observe(full)
		if _, since := h.Refusing(); !since.Equal(start) {
			t.Fatalf("round %d: refusing since %v, want %v (the first refusal)", i, since, start)
		}
	}
	now = now.Add(WritableAgain) // no commit since the last refusal
	want("after a quiet spell with no commit", RefusedFull)
	h.Observe(errors.New("a constraint failed"))
	want("after another error", RefusedFull)
	h.Observe(nil)
	want("once a commit came WritableAgain after the last refusal", "")
	h.Observe(full)
	now = now.Add(time.Second)
	h.Observe(nil)
	want("a commit a second after a new refusal", RefusedFull)
	now = now.Add(WritableAgain - time.Second - time.Nanosecond)
	want("just before WritableAgain", RefusedFull)
	now = now.Add(time.Nanosecond)
	want("at WritableAgain", "")
	if n := h.Errors(RefusedFull); n != 12 {
		t.Fatalf("%d refusals counted, want 12", n)
	}
}
