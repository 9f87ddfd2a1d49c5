package secretnames

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/workflow/lang"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		names    []string
		problems []string // each problem starts with one of these, in order
	}{
		{"empty", "", nil, nil},
		{"one per line", "# names only\nFINANCE_TOKEN\n\n  SLACK_WEBHOOK_URL  \r\n", []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}, nil},
		{"commas and spaces", "FINANCE_TOKEN, SLACK_WEBHOOK_URL\tERP-KEY", []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL", "ERP-KEY"}, nil},
		{"each once", "A\nB, A\nB", []string{"A", "B"}, nil},
		{"a value after its name", "A\nAPI_KEY=s3cr3t-value\nB", []string{"A", "B"}, []string{"line 2 holds an entry"}},
		{"a value after a blank", "A\nAPI_KEY = s3cr3t\nTOKEN: s3cr3t2\nB", []string{"A", "API_KEY", "B"}, []string{"line 2 holds an entry", "line 3 holds an entry"}},
		{"the rest of the line", "FINANCE_TOKEN, API_KEY=x, s3cr3t", []string{"FINANCE_TOKEN"}, []string{"line 1 holds an entry"}},
		{"a comment after blanks", "  # A\nB", []string{"B"}, nil},
		{"JSON keys, sorted", ` {"SLACK_WEBHOOK_URL": "https://s3cr3t", "FINANCE_TOKEN": "s3cr3t", "bad key": "s3cr3t"}`, []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}, []string{"a key of the JSON object"}},
		{"JSON that does not parse", `{"A": "s3cr3t",}`, nil, []string{"the JSON object does not parse"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, problems := Parse([]byte(tc.in))
			if !slices.Equal(names, tc.names) {
				t.Errorf("names %q, want %q", names, tc.names)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %d", problems, len(tc.problems))
			}
			for i, p := range problems {
				if !strings.HasPrefix(p, tc.problems[i]) {
					t.Errorf("problem %q, want %q…", p, tc.problems[i])
				}
				if strings.Contains(p, "s3cr3t") {
					t.Errorf("problem %q quotes a value", p)
				}
			}
		})
	}
}

// problemShapes are the only problems Parse reports: none quotes the list.
var problemShapes = regexp.MustCompile(`^(line \d+ holds an entry that is not a secret name \(letters, digits, _ or -\): it and the rest of its line are ignored — the list holds names only, never values` +
	`|a key of the JSON object is not a secret name \(letters, digits, _ or -\) and is ignored` +
	`|the JSON object does not parse: write an object whose keys are the secret names` +
	`|the list cannot be read: bufio.Scanner: token too long)$`)

// FuzzParse: whatever the list, every name is a name, each once, and every
// problem is one of problemShapes.
func FuzzParse(f *testing.F) {
	f.Add("A\nB=C D")
	f.Add(`{"A": 1, "b c": 2}`)
	f.Fuzz(func(t *testing.T, in string) {
		names, problems := Parse([]byte(in))
		seen := map[string]bool{}
		for _, n := range names {
			if !lang.IsName(n) || seen[n] {
				t.Errorf("name %q", n)
			}
			seen[n] = true
		}
		for _, p := range problems {
			if !problemShapes.MatchString(p) {
				t.Errorf("problem %q", p)
			}
		}
	})
}
