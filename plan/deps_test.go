package plan

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanDependencies keeps the plan free of database drivers, the MCP
// SDK, the job queue and the packages that run workflows or serve
// products: it is built into the browser playground and the lean tools.
func TestLeanDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages", len(deps))
	}
	const module = "github.com/kobana/workflow/"
	allowed := []string{"lang", "compile", "resolve", "emit", "executor/guard", "internal/", "plan"}
	for _, d := range deps {
		for _, banned := range []string{"database/sql", "modernc.org/", "github.com/jackc/", "github.com/mattn/", "github.com/modelcontextprotocol/", "github.com/riverqueue/"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("plan depends on %s", d)
			}
		}
		if rest, ok := strings.CutPrefix(d, module); ok && !allowedPackage(rest, allowed) {
			t.Errorf("plan depends on %s; it may use only %s", d, strings.Join(allowed, ", "))
		}
	}
}

func allowedPackage(p string, allowed []string) bool {
	for _, a := range allowed {
		if p == a || strings.HasPrefix(p, strings.TrimSuffix(a, "/")+"/") {
			return true
		}
	}
	return false
}
