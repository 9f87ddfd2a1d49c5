package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanDependencies keeps the binary free of database drivers, the MCP
// SDK, the stores and the pipeline: agent-authoring tools embed it.
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
	for _, d := range deps {
		for _, banned := range []string{
			"database/sql", "modernc.org/", "github.com/mattn/go-sqlite3", "github.com/jackc/", // databases
			"github.com/modelcontextprotocol/", "github.com/kobana/workflow/mcpserver", // the MCP server
			"github.com/kobana/workflow/store", "github.com/kobana/workflow/inbox", // the products' records
			"github.com/riverqueue/", "github.com/emersion/go-smtp", "github.com/openai/", // the pipeline
		} {
			if d == banned || strings.HasPrefix(d, banned) {
				t.Errorf("validate-workflow depends on %s", d)
			}
		}
	}
}
