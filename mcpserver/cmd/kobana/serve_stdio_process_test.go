package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stdioRun is what `kobana serve -stdio` did with one input: its exit
// status and the lines it wrote on standard output.
type stdioRun struct {
	code   int
	lines  []string
	stderr string
}

// runStdio runs `kobana serve -stdio -demo` as a process of its own on a
// new store, with input as its standard input (closed once written), and
// waits for it to exit (it is killed after within, and the test fails).
func runStdio(t *testing.T, input []string, within time.Duration) stdioRun {
	t.Helper()
	raw, err := json.Marshal([]string{"serve", "-stdio", "-demo", "-db", filepath.Join(t.TempDir(), "k.db")})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(raw), "KOBANA_TOKEN=")
	cmd.Stdin = strings.NewReader(strings.Join(input, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var run stdioRun
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			run.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
	case <-time.After(within):
		cmd.Process.Kill()
		<-done
		t.Fatalf("kobana serve -stdio did not exit within %v of the end of its input; its output:\n%s\n%s", within, stdout.String(), stderr.String())
	}
	run.stderr = stderr.String()
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if l != "" {
			run.lines = append(run.lines, l)
		}
	}
	return run
}

// stdioAnswer is one answer on standard output.
type stdioAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// answers parses the lines of a run: each is an answer or an array of
// answers (a batch's).
func (r stdioRun) answers(t *testing.T) []stdioAnswer {
	t.Helper()
	var all []stdioAnswer
	for _, l := range r.lines {
		if strings.HasPrefix(l, "[") {
			var batch []stdioAnswer
			if err := json.Unmarshal([]byte(l), &batch); err != nil {
				t.Fatalf("a line of the output is no JSON array of answers: %v\n%.300s", err, l)
			}
			all = append(all, batch...)
			continue
		}
		var a stdioAnswer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("a line of the output is no JSON answer: %v\n%.300s", err, l)
		}
		all = append(all, a)
	}
	return all
}

// Each message to `kobana serve -stdio` gets at most one answer, carrying
// its own id, and the end of the input ends the process with status 0.
// Before: on a 2025-03-26 session the notifications/initialized batch sent
// twice ended the process with exit 1 (the SDK's batch tracking took the
// notification for a request and refused it the second time) and lost
// initialize's answer; a batch mixing a request and a notification was
// never answered; ids beyond int64 and 1.5 were answered with another id
// (-9223372036854775808, 1) and the process then waited for ever.
func TestServeStdioAnswersEveryMessageWithItsOwnID(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kobana as a process")
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`
	t.Run("2025-03-26 batches and ids", func(t *testing.T) {
		run := runStdio(t, []string{
			initialize,
			`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
			`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
			`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"gone"}}]`,
			`{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":3}`,
			`{"jsonrpc":"2.0","id":"last","method":"ping"}`,
		}, 30*time.Second)
		if run.code != 0 {
			t.Errorf("exit status %d, want 0; stderr:\n%s", run.code, run.stderr)
		}
		got := map[string][]stdioAnswer{}
		for _, a := range run.answers(t) {
			got[string(a.ID)] = append(got[string(a.ID)], a)
		}
		for id, want := range map[string]int{ // the id → its answer's error code (0: a result)
			"1": 0, "5": 0, `"last"`: 0,
			"-9223372036854775809": -32600, "9223372036854775808": -32600, "9007199254740993": -32600, "1.5": -32600,
			"3": -32600,
		} {
			as := got[id]
			if len(as) != 1 {
				t.Errorf("id %s: %d answers, want 1", id, len(as))
				continue
			}
			switch a := as[0]; {
			case want == 0 && (a.Error != nil || a.Result == nil):
				t.Errorf("id %s: answered %+v, want a result", id, a.Error)
			case want != 0 && (a.Error == nil || a.Error.Code != want):
				t.Errorf("id %s: answered %s / %+v, want error %d", id, a.Result, a.Error, want)
			}
			delete(got, id)
		}
		if len(got) > 0 {
			t.Errorf("answers with ids nobody sent: %v; output:\n%s", got, strings.Join(run.lines, "\n"))
		}
	})
	t.Run("a fractional id alone", func(t *testing.T) {
		// printf '{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n' | kobana serve -stdio
		run := runStdio(t, []string{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`}, 30*time.Second)
		as := run.answers(t)
		if run.code != 0 || len(as) != 1 || string(as[0].ID) != "1.5" || as[0].Error == nil || as[0].Error.Code != -32600 {
			t.Errorf("exit %d, answers %s; want exit 0 and one -32600 with id 1.5; stderr:\n%s", run.code, run.lines, run.stderr)
		}
	})
}
