// Package leandeps is the test helper that keeps a package lean: Check
// lists what the package links (go list -deps) and fails the test for each
// package its Rules forbid. The linter, the language server, the dry run
// and the playground's WebAssembly module use it, so that none of them
// grows a database driver, the MCP SDK or the job queue by accident.
//
// It is for tests only (it imports testing); it imports nothing of the
// module.
package leandeps

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Module is the import path prefix of the module's own packages.
const Module = "github.com/kobana/workflow/"

// Import path prefixes the lean packages never link.
var (
	// Databases are the database/sql package and the database drivers.
	Databases = []string{"database/sql", "modernc.org/", "github.com/mattn/", "github.com/jackc/"}
	// MCP is the MCP SDK.
	MCP = []string{"github.com/modelcontextprotocol/"}
	// Queue is the job queue.
	Queue = []string{"github.com/riverqueue/"}
)

// Heavy returns, as a new slice, the prefixes no lean package links —
// Databases, MCP and Queue — and more.
func Heavy(more ...string) []string {
	return slices.Concat(Databases, MCP, Queue, more)
}

// Rules say what a package may link.
type Rules struct {
	// Banned are import paths the package may not link, each with every
	// path it starts (database/sql bans database/sql/driver too).
	Banned []string
	// Exact are import paths the package may not link, those paths only
	// (not the packages below them).
	Exact []string
	// Why, when set, ends the message about a banned package.
	Why string
	// Allowed, when not empty, are the only packages of the module the
	// package may link, relative to the module's root: "plan" allows plan
	// and the packages below it, "internal/" every package below internal.
	Allowed []string
	// Env are settings added to the go command's environment, such as
	// GOOS=js and GOARCH=wasm for a WebAssembly build.
	Env []string
}

// Check lists the dependencies of pkg (a go list pattern such as "." or
// "./wasm", relative to the test's directory) and fails t for each one r
// forbids, naming the package as name. It skips, saying so, when the go
// command is not installed.
func Check(t testing.TB, pkg, name string, r Rules) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed")
	}
	cmd := exec.Command(goTool, "list", "-deps", pkg)
	if len(r.Env) > 0 {
		cmd.Env = append(os.Environ(), r.Env...)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s printed %d packages", pkg, len(deps))
	}
	for _, d := range deps {
		if b, ok := matches(d, r.Banned); ok {
			t.Errorf("%s depends on %s (nothing under %s may be linked)%s", name, d, b, r.why())
		}
		if slices.Contains(r.Exact, d) {
			t.Errorf("%s depends on %s%s", name, d, r.why())
		}
		if rest, ok := strings.CutPrefix(d, Module); ok && len(r.Allowed) > 0 {
			if _, ok := matches(rest, r.Allowed); !ok {
				t.Errorf("%s depends on %s; it may use only %s", name, d, strings.Join(r.Allowed, ", "))
			}
		}
	}
}

func (r Rules) why() string {
	if r.Why == "" {
		return ""
	}
	return ": " + r.Why
}

// matches returns the first of prefixes that path is, or is below.
func matches(path string, prefixes []string) (string, bool) {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return p, true
		}
	}
	return "", false
}
