package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder keeps what Check reports instead of failing the test.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// check runs Check on its own goroutine, which Fatalf ends.
func (r *recorder) check(path string, got []byte) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, path, got)
	}()
	<-done
}

func TestCheck(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "out.txt")
	r := &recorder{TB: t}
	r.check(path, []byte("a\nb\n"))
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "no golden file") || !strings.Contains(r.failed[0], "go test -run 'TestCheck' -update") {
		t.Errorf("a missing file: %q", r.failed)
	}

	*update = true
	r.check(path, []byte("a\nb\n"))
	*update = false
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}

	r.failed = nil
	r.check(path, []byte("a\nb\n"))
	if len(r.failed) != 0 {
		t.Errorf("the same output: %q", r.failed)
	}
	r.check(path, []byte("a\nc\n"))
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], `a\nc\n`) || !strings.Contains(r.failed[0], "differs (-want +got)") {
		t.Errorf("a different output: %q", r.failed)
	}
}
