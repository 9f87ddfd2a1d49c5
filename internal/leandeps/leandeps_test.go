package leandeps

import (
	"fmt"
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path     string
		prefixes []string
		want     bool
	}{
		{"database/sql", Databases, true},
		{"database/sql/driver", Databases, true},
		{"database/sqlx", Databases, false},
		{"modernc.org/sqlite/lib", Databases, true},
		{"github.com/jackc/pgx/v5", Databases, true},
		{"encoding/json", Databases, false},
		{"plan", []string{"plan"}, true},
		{"plan/internal/x", []string{"plan"}, true},
		{"planner", []string{"plan"}, false},
		{"internal/jsonpos", []string{"internal/"}, true},
		{"internal", []string{"internal/"}, false},
	} {
		if _, got := matches(tc.path, tc.prefixes); got != tc.want {
			t.Errorf("matches(%q, %q) = %v, want %v", tc.path, tc.prefixes, got, tc.want)
		}
	}
}

// TestCheck runs the helper on this package, which links the standard
// library only.
func TestCheck(t *testing.T) {
	t.Parallel()
	Check(t, ".", "leandeps", Rules{Banned: append(Databases, MCP...), Allowed: []string{"internal/leandeps"}})
}

// recorder keeps what Check reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestCheckReports: a banned package and a module package outside Allowed
// are each reported.
func TestCheckReports(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	Check(r, ".", "leandeps", Rules{Banned: []string{"os/exec"}})
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "leandeps depends on os/exec") {
		t.Errorf("banned os/exec: %q", r.errors)
	}
	r.errors = nil
	Check(r, ".", "leandeps", Rules{Exact: []string{"os", "os/ex"}, Why: "a reason"})
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "leandeps depends on os: a reason") {
		t.Errorf("exactly os: %q", r.errors)
	}
	r.errors = nil
	Check(r, ".", "leandeps", Rules{Allowed: []string{"lang"}})
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "depends on "+Module+"internal/leandeps; it may use only lang") {
		t.Errorf("allowed lang only: %q", r.errors)
	}
}
