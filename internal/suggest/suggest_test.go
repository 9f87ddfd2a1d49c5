package suggest

import "testing"

func TestClosest(t *testing.T) {
	t.Parallel()
	fields := []string{"type", "url", "method", "headers", "body", "form", "expected_status", "label"}
	for _, tc := range []struct{ word, want string }{
		{"expected-status", "expected_status"},
		{"expectedstatus", "expected_status"},
		{"Method", "method"},
		{"header", "headers"},
		{"bdoy", "body"},
		{"uri", "url"},
		{"zzzzzzzz", ""},
		{"", ""},
	} {
		if got := Closest(tc.word, fields); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	if got := Closest("secret", []string{"secrets", "kobana", "steps", "email"}); got != "secrets" {
		t.Errorf("namespace: got %q", got)
	}
	if got := Closest("x", nil); got != "" {
		t.Errorf("no candidates: got %q", got)
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q,%q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
