package testwait

import (
	"errors"
	"testing"
	"time"
)

func TestUntilReturnsOnceFSucceeds(t *testing.T) {
	t.Parallel()
	calls := 0
	err := Until(time.Minute, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("Until = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestUntilReportsTheLastErrorAtTheDeadline(t *testing.T) {
	t.Parallel()
	last := errors.New("last")
	calls := 0
	err := Until(0, func() error {
		calls++
		return last
	})
	if !errors.Is(err, last) || calls != 1 {
		t.Errorf("Until = %v after %d calls, want the last error after 1 call", err, calls)
	}
}
