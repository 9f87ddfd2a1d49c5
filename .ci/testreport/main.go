// Command testreport reads `go test -json` on standard input and reports it
// for CI: a line per package as go test prints it, the whole output of every
// test that failed, every test that skipped, and the slowest packages and
// tests. It exits 1 when a test or a build failed, or when a test skipped
// (CI installs every tool the tests need, so a skip means a missing part),
// unless the skip's "package Test: message" matches -allow-skip.
//
// Usage:
//
//	go test -json ./... | testreport [-allow-skip REGEXP] [-slowest N]
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, and the
// build events go test also emits).
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output and build-fail events
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

// key names a test of a package ("" for the package itself).
type key struct{ pkg, test string }

type timing struct {
	name    string
	seconds float64
}

type report struct {
	w          io.Writer
	allowSkip  *regexp.Regexp
	output     map[key]*strings.Builder
	failed     []key
	skipped    []string
	disallowed int
	packages   []timing
	tests      []timing
	buildFail  bool
}

func main() {
	allow := flag.String("allow-skip", "", "a regular expression; skips whose \"package Test: message\" matches it are allowed")
	slowest := flag.Int("slowest", 10, "how many of the slowest packages and tests to list")
	flag.Parse()
	r := &report{w: os.Stdout, output: map[key]*strings.Builder{}}
	if *allow != "" {
		re, err := regexp.Compile(*allow)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testreport: -allow-skip: %v\n", err)
			os.Exit(2)
		}
		r.allowSkip = re
	}
	if err := r.read(os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: reading go test -json: %v\n", err)
		os.Exit(2)
	}
	if !r.summary(*slowest) {
		os.Exit(1)
	}
}

// read consumes the event stream, printing package results as they end.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event: the go command's own messages.
			fmt.Fprintf(r.w, "%s\n", line)
			continue
		}
		r.add(e)
	}
	return sc.Err()
}

func (r *report) add(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(r.w, e.Output)
		return
	case "build-fail":
		r.buildFail = true
		return
	}
	k := key{e.Package, e.Test}
	switch e.Action {
	case "output":
		b := r.output[k]
		if b == nil {
			b = &strings.Builder{}
			r.output[k] = b
		}
		b.WriteString(e.Output)
	case "pass", "fail", "skip":
		r.end(e, k)
	}
}

// end records a test or package that finished.
func (r *report) end(e event, k key) {
	out := r.output[k]
	delete(r.output, k)
	text := ""
	if out != nil {
		text = out.String()
	}
	if e.Test == "" {
		r.endPackage(e, text)
		return
	}
	switch e.Action {
	case "pass":
		if !strings.Contains(e.Test, "/") {
			r.tests = append(r.tests, timing{e.Package + " " + e.Test, e.Elapsed})
		}
	case "fail":
		r.failed = append(r.failed, k)
		fmt.Fprintf(r.w, "--- FAIL: %s (%s)\n%s", e.Test, e.Package, text)
	case "skip":
		msg := skipMessage(text)
		entry := fmt.Sprintf("%s %s: %s", e.Package, e.Test, msg)
		if r.allowSkip != nil && r.allowSkip.MatchString(entry) {
			entry += " (allowed)"
		} else {
			r.disallowed++
		}
		r.skipped = append(r.skipped, entry)
	}
}

// endPackage prints the package's own output, which is what go test prints
// without -v ("ok", "FAIL", "?" lines, and a panic, a TestMain's message, a
// timeout), less the bare "PASS" line.
func (r *report) endPackage(e event, text string) {
	for l := range strings.Lines(text) {
		if l != "PASS\n" {
			fmt.Fprint(r.w, l)
		}
	}
	switch e.Action {
	case "pass":
		r.packages = append(r.packages, timing{e.Package, e.Elapsed})
	case "fail":
		r.failed = append(r.failed, key{pkg: e.Package})
	}
}

// skipMessage is the reason a skipped test gave: its output, without the
// "=== RUN" and "--- SKIP" lines and the file:line prefix.
func skipMessage(out string) string {
	var lines []string
	for l := range strings.Lines(out) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		if i := strings.Index(l, ".go:"); i >= 0 {
			if j := strings.Index(l[i:], ": "); j >= 0 {
				l = l[i+j+2:]
			}
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return strings.Join(lines, " ")
}

// summary prints the skips, the slowest packages and tests and the verdict;
// it reports whether CI may pass.
func (r *report) summary(slowest int) bool {
	if len(r.skipped) > 0 {
		fmt.Fprintf(r.w, "\n%d skipped:\n", len(r.skipped))
		for _, s := range r.skipped {
			fmt.Fprintf(r.w, "  %s\n", s)
		}
	}
	for _, list := range []struct {
		title string
		t     []timing
	}{{"packages", r.packages}, {"tests", r.tests}} {
		slices.SortFunc(list.t, func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) })
		if n := min(slowest, len(list.t)); n > 0 {
			fmt.Fprintf(r.w, "\nslowest %s:\n", list.title)
			for _, t := range list.t[:n] {
				fmt.Fprintf(r.w, "  %7.2fs  %s\n", t.seconds, t.name)
			}
		}
	}
	ok := true
	if len(r.failed) > 0 {
		ok = false
		fmt.Fprintf(r.w, "\nFAIL: %d tests and packages failed\n", len(r.failed))
	}
	if r.buildFail {
		ok = false
		fmt.Fprintf(r.w, "\nFAIL: a build failed\n")
	}
	if r.disallowed > 0 {
		ok = false
		fmt.Fprintf(r.w, "\nFAIL: %d tests skipped; CI must provide what they need (or allow the skip with -allow-skip)\n", r.disallowed)
	}
	return ok
}
