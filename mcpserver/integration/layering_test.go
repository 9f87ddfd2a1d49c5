package integration_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	module       = "github.com/kobana/workflow"
	sqliteDriver = "modernc.org/sqlite"
)

// packageDeps lists every package of the module (tests excluded) with the
// packages it links, as the go command sees them.
func packageDeps(t *testing.T) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: layering not checked")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...", "./mcpserver/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		deps[fields[0]] = fields[1:]
	}
	if !slices.Contains(deps[module+"/mcpserver/cmd/kobana"], sqliteDriver) {
		// The check below would pass vacuously.
		t.Fatalf("go list does not show cmd/kobana linking %s: %d packages listed", sqliteDriver, len(deps))
	}
	if len(deps) < 10 {
		t.Fatalf("go list found %d packages, not this module's", len(deps))
	}
	return deps
}

// Only the SQLite store and the commands link the SQLite driver: the store's
// interfaces, the products, the pipeline and every other library reach it
// through package store.
func TestOnlyStoreSQLiteLinksTheSQLiteDriver(t *testing.T) {
	for pkg, deps := range packageDeps(t) {
		if pkg == module+"/mcpserver/store/sqlite" || strings.HasPrefix(pkg, module+"/cmd/") || strings.HasPrefix(pkg, module+"/mcpserver/cmd/") {
			continue
		}
		if slices.Contains(deps, sqliteDriver) {
			t.Errorf("%s links %s (through store/sqlite: %v): only store/sqlite and the commands may",
				pkg, sqliteDriver, slices.Contains(deps, module+"/mcpserver/store/sqlite"))
		}
	}
}

// Package store itself links neither database driver.
func TestStoreLinksNoDriver(t *testing.T) {
	deps := packageDeps(t)[module+"/mcpserver/store"]
	for _, d := range deps {
		if d == sqliteDriver || strings.HasPrefix(d, "github.com/jackc/pgx") {
			t.Errorf("package store links %s", d)
		}
	}
}
