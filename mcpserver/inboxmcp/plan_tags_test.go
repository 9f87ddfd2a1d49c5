package inboxmcp

import "testing"

// TestPlanArgEmailIDPattern: workflows_plan takes the e-mail ids
// emails_get takes (TestIDPatterns checks those against the domain).
func TestPlanArgEmailIDPattern(t *testing.T) {
	if got, want := tag[PlanArg](t, "EmailID", "pattern"), tag[EmailIDArg](t, "ID", "pattern"); got != want {
		t.Errorf("PlanArg.EmailID pattern %q, EmailIDArg.ID %q", got, want)
	}
}
