package plan

import (
	"testing"

	"github.com/kobana/workflow/internal/leandeps"
)

// TestLeanDependencies keeps the plan free of database drivers, the MCP
// SDK, the job queue and the packages that run workflows or serve
// products: it is built into the browser playground and the lean tools.
func TestLeanDependencies(t *testing.T) {
	t.Parallel()
	leandeps.Check(t, ".", "plan", leandeps.Rules{
		Banned:  leandeps.Heavy(),
		Allowed: []string{"lang", "egress", "compile", "runrecord", "resolve", "emit", "executor/guard", "internal/", "plan"},
	})
}
