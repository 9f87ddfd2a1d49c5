package main

import (
	"testing"

	"github.com/kobana/workflow/internal/leandeps"
)

// TestLeanDependencies keeps the binary free of database drivers, the MCP
// SDK, the stores and the pipeline: agent-authoring tools embed it.
func TestLeanDependencies(t *testing.T) {
	leandeps.Check(t, ".", "validate-workflow", leandeps.Rules{Banned: leandeps.Heavy(
		leandeps.Module+"mcpserver",                      // the MCP server
		leandeps.Module+"store", leandeps.Module+"inbox", // the products' records
		"github.com/emersion/go-smtp", "github.com/openai/", // the pipeline
	)})
}
