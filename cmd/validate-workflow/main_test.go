package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile"
)

const (
	valid    = "../../examples/workflows/payable.json"
	invalid  = "../../examples/workflows/invalid/header-reserved.json"
	warning  = "../../examples/workflows/invalid/workflow-empty.json"
	tooLarge = "../../examples/workflows/invalid/document-too-large.json"
)

// run executes validate-workflow in-process.
func run(t *testing.T, stdin string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &Command{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	status = c.Main(args)
	return status, out.String(), errb.String()
}

var diagLine = regexp.MustCompile(`^(.+):(\d+):(\d+): (error|warning): (.+) \[([a-z0-9-]+)\]$`)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"valid", []string{valid}, 0},
		{"valid, strict", []string{"-strict", valid}, 0},
		{"error", []string{invalid}, 1},
		{"error among valid", []string{valid, invalid, valid}, 1},
		{"warning only", []string{warning}, 0},
		{"warning only, strict", []string{"-strict", warning}, 1},
		{"flag after the file", []string{warning, "-strict"}, 1},
		{"json", []string{"-format", "json", invalid}, 1},
		{"sarif", []string{"-format=sarif", valid}, 0},
		{"missing file", []string{valid, "no-such-file.json"}, 2},
		{"missing file beside an error", []string{invalid, "no-such-file.json"}, 2},
		{"directory", []string{"../../examples"}, 2},
		{"no files", nil, 2},
		{"unknown flag", []string{"-color", valid}, 2},
		{"unknown format", []string{"-format", "xml", valid}, 2},
		{"flag without value", []string{"-format"}, 2},
		{"help", []string{"-h"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, stderr := run(t, "", tc.args...)
			if status != tc.want {
				t.Errorf("exit %d, want %d; stderr: %s", status, tc.want, stderr)
			}
		})
	}
}

func TestTextOutput(t *testing.T) {
	status, stdout, stderr := run(t, "", invalid, valid)
	if status != 1 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", status, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("output:\n%s", stdout)
	}
	m := diagLine.FindStringSubmatch(lines[0])
	if m == nil || m[1] != invalid || m[2] != "9" || m[3] != "9" || m[4] != "error" || m[6] != compile.CodeReservedHeader {
		t.Errorf("first line %q", lines[0])
	}
	if lines[1] != ` 9 |         "Host": "internal-erp.local"` || lines[2] != `   |         ^~~~~~` {
		t.Errorf("snippet:\n%s\n%s", lines[1], lines[2])
	}
	if lines[3] != "1 error, 0 warnings in 2 files" {
		t.Errorf("summary %q", lines[3])
	}
}

func TestStdin(t *testing.T) {
	doc, err := os.ReadFile(invalid)
	if err != nil {
		t.Fatal(err)
	}
	status, stdout, _ := run(t, string(doc), "-")
	if status != 1 || !strings.HasPrefix(stdout, "<stdin>:9:9: error: ") {
		t.Errorf("exit %d:\n%s", status, stdout)
	}
	status, stdout, _ = run(t, string(doc), "-stdin-name", "agent/out.json", "-format", "json", "-")
	var out struct{ Diagnostics []struct{ File string } }
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || status != 1 || len(out.Diagnostics) != 1 || out.Diagnostics[0].File != "agent/out.json" {
		t.Errorf("exit %d, %v: %s", status, err, stdout)
	}
	// Standard input can be read once.
	status, _, stderr := run(t, string(doc), "-", "-")
	if status != 2 || !strings.Contains(stderr, "more than once") {
		t.Errorf("exit %d, stderr %q", status, stderr)
	}
	// Bytes that are not JSON are diagnostics, not a usage error.
	status, stdout, _ = run(t, "\xff\xfe garbage", "-")
	if status != 1 || !strings.Contains(stdout, "[json-") {
		t.Errorf("exit %d:\n%s", status, stdout)
	}
}

// TestEndlessStdin checks that an input larger than the limit is answered
// with document-too-large without being read to its end.
func TestEndlessStdin(t *testing.T) {
	var out, errb bytes.Buffer
	c := &Command{Stdin: endless{}, Stdout: &out, Stderr: &errb}
	if status := c.Main([]string{"-format", "json", "-"}); status != 1 || !strings.Contains(out.String(), `"document-too-large"`) {
		t.Errorf("exit %d: %s %s", status, out.String(), errb.String())
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestTooLargeFile(t *testing.T) {
	status, stdout, _ := run(t, "", tooLarge)
	if status != 1 || !strings.Contains(stdout, "[document-too-large]") {
		t.Errorf("exit %d: %s", status, stdout)
	}
}

func TestIOErrorNamesTheFile(t *testing.T) {
	status, stdout, stderr := run(t, "", "no-such-file.json", valid)
	if status != 2 {
		t.Errorf("exit %d", status)
	}
	if !strings.Contains(stderr, "validate-workflow: no-such-file.json: no such file or directory") {
		t.Errorf("stderr %q", stderr)
	}
	if !strings.Contains(stdout, "0 errors, 0 warnings in 1 file; 1 file could not be read") {
		t.Errorf("the readable file is still linted: %q", stdout)
	}
	dir := t.TempDir()
	unreadable := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(unreadable, []byte(`{}`), 0o000); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(unreadable); err == nil {
		f.Close()
		t.Log("running with permission to read mode-000 files (root); skipping that case")
	} else if status, _, stderr := run(t, "", unreadable); status != 2 || !strings.Contains(stderr, "secret.json") {
		t.Errorf("exit %d, stderr %q", status, stderr)
	}
}

func TestUsage(t *testing.T) {
	status, stdout, _ := run(t, "", "-h")
	if status != 0 || !strings.Contains(stdout, "usage: validate-workflow") || !strings.Contains(stdout, "-strict") || !strings.Contains(stdout, "-format") {
		t.Errorf("exit %d:\n%s", status, stdout)
	}
	status, stdout, stderr := run(t, "")
	if status != 2 || stdout != "" || !strings.Contains(stderr, "no files given") || !strings.Contains(stderr, "usage:") {
		t.Errorf("exit %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	_, _, stderr = run(t, "", "-format", "xml", valid)
	if !strings.Contains(stderr, `unknown format "xml": use text, json, sarif`) {
		t.Errorf("stderr %q", stderr)
	}
}

func TestFormats(t *testing.T) {
	_, stdout, _ := run(t, "", "-format", "json", invalid, warning)
	var out struct {
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Diagnostics) != 2 {
		t.Fatalf("%v: %s", err, stdout)
	}
	if out.Diagnostics[0]["code"] != compile.CodeReservedHeader || out.Diagnostics[1]["severity"] != "warning" {
		t.Errorf("%v", out.Diagnostics)
	}
	_, stdout, _ = run(t, "", "-format", "sarif", invalid)
	var log struct {
		Version string
		Runs    []struct{ Results []struct{ RuleID string } }
	}
	if err := json.Unmarshal([]byte(stdout), &log); err != nil || log.Version != "2.1.0" || len(log.Runs[0].Results) != 1 || log.Runs[0].Results[0].RuleID != compile.CodeReservedHeader {
		t.Errorf("%v: %s", err, stdout)
	}
}

// TestDoubleDash checks that everything after -- is a file name.
func TestDoubleDash(t *testing.T) {
	status, _, stderr := run(t, "", "--", "-strict")
	if status != 2 || !strings.Contains(stderr, "-strict") {
		t.Errorf("exit %d, stderr %q", status, stderr)
	}
}

func TestWriteError(t *testing.T) {
	c := &Command{Stdin: strings.NewReader(""), Stdout: failingWriter{}, Stderr: io.Discard}
	if status := c.Main([]string{valid}); status != 2 {
		t.Errorf("exit %d when the output cannot be written", status)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestHelpGoesToStandardOutput: asking for help is not an error.
func TestHelpGoesToStandardOutput(t *testing.T) {
	for _, h := range []string{"-h", "-help", "--help"} {
		for _, args := range [][]string{{h}, {"lsp", h}} {
			status, stdout, stderr := run(t, "", args...)
			if status != 0 || !strings.HasPrefix(stdout, "usage: validate-workflow ") || stderr != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q", args, status, stdout, stderr)
			}
		}
	}
}
