package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
)

// mainArgsEnv, when set in the environment of this test binary, makes it
// run kobana with those arguments (a JSON array) instead of the tests: the
// tests that need a real process — signals, exit statuses, the time to
// exit — start the binary again this way (see TestMain).
const mainArgsEnv = "KOBANA_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if raw := os.Getenv(mainArgsEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", mainArgsEnv, err)
			os.Exit(exitUsage)
		}
		main2(args)
	}
	os.Exit(m.Run())
}

// main2 is main with args instead of os.Args.
func main2(args []string) {
	cmd := &Command{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	os.Exit(cmd.Main(args))
}

// kobanaProcess is kobana running as a process of its own.
type kobanaProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	output *syncbuf.Buffer
	done   chan struct{}
	err    error
	// exited is when the process was seen to end.
	exited time.Time
}

// startKobana starts `kobana args…` as a process, with env added to this
// one's environment; it is killed at the end of the test if still running.
func startKobana(t *testing.T, env []string, args ...string) *kobanaProcess {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	p := &kobanaProcess{t: t, output: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(append(os.Environ(), mainArgsEnv+"="+string(raw)), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); p.exited = time.Now(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// await waits for the process's output to match re and returns the
// submatches; the test fails if the process ends first.
func (p *kobanaProcess) await(re *regexp.Regexp, within time.Duration) []string {
	p.t.Helper()
	var m []string
	err := testwait.Until(within, func() error {
		if m = re.FindStringSubmatch(p.output.String()); m != nil || !p.running() {
			return nil
		}
		return fmt.Errorf("no %q in the output yet", re)
	})
	if err == nil && m == nil {
		err = fmt.Errorf("kobana ended (%v) before printing %q", p.err, re)
	}
	if err != nil {
		p.t.Fatalf("%v; its output:\n%s", err, p.output)
	}
	return m
}

// signal sends sig to the process and returns when it was sent.
func (p *kobanaProcess) signal(sig os.Signal) time.Time {
	p.t.Helper()
	at := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	return at
}

// wait waits for the process to end and returns its exit status and when
// it ended.
func (p *kobanaProcess) wait(within time.Duration) (int, time.Time) {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		p.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, in the output
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
		p.t.Fatalf("kobana did not end within %v; its output:\n%s", within, p.output)
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0, p.exited
	case errors.As(p.err, &ee):
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			p.t.Fatalf("kobana was killed by %v; its output:\n%s", ws.Signal(), p.output)
		}
		return ee.ExitCode(), p.exited
	}
	p.t.Fatalf("waiting for kobana: %v", p.err)
	return 0, time.Time{}
}

// running says the process has not ended.
func (p *kobanaProcess) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}
