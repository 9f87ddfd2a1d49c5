// Package testwait is the one retry-until-deadline helper of the tests: wait
// for a condition that another goroutine, process or server makes true, and
// fail with its last error when the deadline passes. Any test package may
// import it (it imports nothing of the module).
//
// Use it only to wait for something to happen; to show that something does
// not happen, wait for the event that would have made it happen (a backend
// ending, a lock released), never for a while.
package testwait

import (
	"fmt"
	"time"
)

// Interval is how long Until waits between two attempts.
const Interval = 20 * time.Millisecond

// Until calls f until it returns nil or timeout has passed since the first
// call, and returns f's last error (nil on success), wrapped with how long it
// waited. f is called at least once.
func Until(timeout time.Duration, f func() error) error {
	start := time.Now()
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Since(start) >= timeout {
			return fmt.Errorf("still failing after %v: %w", timeout, err)
		}
		time.Sleep(Interval)
	}
}
