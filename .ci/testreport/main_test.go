package main

import (
	"regexp"
	"strings"
	"testing"
)

// stream is a `go test -json` run: a passing package, a failing test with a
// passing sibling, a skipped test, a package without tests, and a package
// that failed to build.
const stream = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestFast"}
{"Action":"output","Package":"ex/a","Test":"TestFast","Output":"=== RUN   TestFast\n"}
{"Action":"output","Package":"ex/a","Test":"TestFast","Output":"--- PASS: TestFast (0.10s)\n"}
{"Action":"pass","Package":"ex/a","Test":"TestFast","Elapsed":0.1}
{"Action":"run","Package":"ex/a","Test":"TestSlow"}
{"Action":"pass","Package":"ex/a","Test":"TestSlow","Elapsed":2.5}
{"Action":"run","Package":"ex/a","Test":"TestSlow/sub"}
{"Action":"pass","Package":"ex/a","Test":"TestSlow/sub","Elapsed":9}
{"Action":"output","Package":"ex/a","Output":"PASS\n"}
{"Action":"output","Package":"ex/a","Output":"ok  \tex/a\t2.700s\n"}
{"Action":"pass","Package":"ex/a","Elapsed":2.7}
{"Action":"start","Package":"ex/b"}
{"Action":"run","Package":"ex/b","Test":"TestBroken"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"    b_test.go:9: got 1, want 2\n"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"ex/b","Test":"TestBroken","Elapsed":0}
{"Action":"run","Package":"ex/b","Test":"TestNeedsTool"}
{"Action":"output","Package":"ex/b","Test":"TestNeedsTool","Output":"=== RUN   TestNeedsTool\n"}
{"Action":"output","Package":"ex/b","Test":"TestNeedsTool","Output":"    b_test.go:20: nvim is not installed\n"}
{"Action":"output","Package":"ex/b","Test":"TestNeedsTool","Output":"--- SKIP: TestNeedsTool (0.00s)\n"}
{"Action":"skip","Package":"ex/b","Test":"TestNeedsTool","Elapsed":0}
{"Action":"output","Package":"ex/b","Output":"FAIL\n"}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b\t0.010s\n"}
{"Action":"fail","Package":"ex/b","Elapsed":0.01}
{"Action":"start","Package":"ex/c"}
{"Action":"output","Package":"ex/c","Output":"?   \tex/c\t[no test files]\n"}
{"Action":"skip","Package":"ex/c","Elapsed":0}
{"ImportPath":"ex/d [ex/d.test]","Action":"build-output","Output":"# ex/d\n./d.go:3:1: syntax error\n"}
{"ImportPath":"ex/d [ex/d.test]","Action":"build-fail"}
{"Action":"output","Package":"ex/d","Output":"FAIL\tex/d [build failed]\n"}
{"Action":"fail","Package":"ex/d","Elapsed":0,"FailedBuild":"ex/d [ex/d.test]"}
go: some message of the go command
`

func run(t *testing.T, in string, allow string) (string, bool) {
	t.Helper()
	var out strings.Builder
	r := &report{w: &out, output: map[key]*strings.Builder{}}
	if allow != "" {
		r.allowSkip = regexp.MustCompile(allow)
	}
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	ok := r.summary(1)
	return out.String(), ok
}

func TestReport(t *testing.T) {
	out, ok := run(t, stream, "")
	if ok {
		t.Errorf("a failed test, a failed build and a skip passed:\n%s", out)
	}
	for _, want := range []string{
		"ok  \tex/a\t2.700s\n",
		"--- FAIL: TestBroken (ex/b)\n=== RUN   TestBroken\n    b_test.go:9: got 1, want 2\n",
		"FAIL\tex/b\t0.010s\n",
		"?   \tex/c\t[no test files]\n",
		"# ex/d\n./d.go:3:1: syntax error\n",
		"FAIL\tex/d [build failed]\n",
		"go: some message of the go command\n",
		"1 skipped:\n  ex/b TestNeedsTool: nvim is not installed\n",
		"slowest packages:\n     2.70s  ex/a\n",
		"slowest tests:\n     2.50s  ex/a TestSlow\n", // top-level tests only
		"FAIL: 3 tests and packages failed",
		"FAIL: a build failed",
		"FAIL: 1 tests skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"PASS\n", "TestFast (0.10s)"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q (a passing test's or package's verbose output):\n%s", unwanted, out)
		}
	}
}

func TestAllowedSkipsAndPassingRunsPass(t *testing.T) {
	// Only the passing package and the skip.
	var kept []string
	for l := range strings.Lines(stream) {
		if strings.Contains(l, `"ex/a"`) || strings.Contains(l, "TestNeedsTool") {
			kept = append(kept, l)
		}
	}
	in := strings.Join(kept, "")
	if out, ok := run(t, in, ""); ok || !strings.Contains(out, "FAIL: 1 tests skipped") {
		t.Errorf("a skip not allowed passed:\n%s", out)
	}
	out, ok := run(t, in, `^ex/b TestNeedsTool: nvim`)
	if !ok || !strings.Contains(out, "ex/b TestNeedsTool: nvim is not installed (allowed)") {
		t.Errorf("an allowed skip failed the run:\n%s", out)
	}
}
