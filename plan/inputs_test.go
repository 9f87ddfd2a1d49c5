package plan_test

import (
	"slices"
	"testing"

	"github.com/kobana/workflow/plan"
)

// TestSecretNamesNeverTakeAValue: a value written after its name, as in an
// environment file, is never read as a secret name (the plan would print
// it): the entry that is not a name ends its line.
func TestSecretNamesNeverTakeAValue(t *testing.T) {
	t.Parallel()
	names, problems := plan.ParseSecretNames([]byte("FINANCE_TOKEN\nAPI_KEY = s3cr3t\nHOOK: s3cr3t2\n"))
	if !slices.Equal(names, []string{"FINANCE_TOKEN", "API_KEY"}) || len(problems) != 2 {
		t.Errorf("names %q, problems %q", names, problems)
	}
}
