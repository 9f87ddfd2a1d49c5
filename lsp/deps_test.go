package lsp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanDependencies keeps the language server free of database drivers,
// the MCP SDK and the parts of the module that run workflows: editors and
// authoring tools embed it through validate-workflow.
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
	allowed := []string{module + "lang", module + "compile", module + "compile/lint", module + "internal/", module + "lsp"}
	for _, d := range deps {
		for _, banned := range []string{"database/sql", "modernc.org/", "github.com/jackc/", "github.com/mattn/", "github.com/modelcontextprotocol/", "github.com/riverqueue/"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("lsp depends on %s", d)
			}
		}
		if strings.HasPrefix(d, module) && !hasAnyPrefix(d, allowed) {
			t.Errorf("lsp depends on %s; it may use only lang, compile, compile/lint and internal packages", d)
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") || strings.HasSuffix(p, "/") && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
