package inboxmcp

import (
	"testing"

	"github.com/kobana/workflow/mcpserver/mcptest"
)

// TestPlanArgEmailIDPattern: workflows_plan takes the e-mail ids
// emails_get takes (TestIDPatterns checks those against the domain).
func TestPlanArgEmailIDPattern(t *testing.T) {
	t.Parallel()
	if got, want := mcptest.Tag[PlanArg](t, "EmailID", "pattern"), mcptest.Tag[EmailIDArg](t, "ID", "pattern"); got != want {
		t.Errorf("PlanArg.EmailID pattern %q, EmailIDArg.ID %q", got, want)
	}
}
