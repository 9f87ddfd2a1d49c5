package lsp

import (
	"testing"

	"github.com/kobana/workflow/internal/leandeps"
)

// TestLeanDependencies keeps the language server free of database drivers,
// the MCP SDK and the parts of the module that run workflows: editors and
// authoring tools embed it through validate-workflow.
func TestLeanDependencies(t *testing.T) {
	t.Parallel()
	leandeps.Check(t, ".", "lsp", leandeps.Rules{
		Banned:  leandeps.Heavy(),
		Allowed: []string{"lang", "egress", "compile", "internal/", "lsp"},
	})
}
