package mcptest

import (
	"strings"
	"testing"
)

type tagged struct {
	ID string `json:"id" pattern:"^ab_[a-z]+$"`
}

func TestTagAndWantAnchored(t *testing.T) {
	r := &recorder{TB: t}
	if got := r.run(func(tb testing.TB) {
		if p := Tag[tagged](tb, "ID", "pattern"); p != "^ab_[a-z]+$" {
			tb.Errorf("pattern %q", p)
		}
		WantAnchored(tb, Tag[tagged](tb, "ID", "pattern"), "ab_x")
	}); len(got) != 0 {
		t.Errorf("an anchored pattern: %q", got)
	}
	if got := r.run(func(tb testing.TB) { WantAnchored(tb, "ab_[a-z]+", "ab_x") }); len(got) != 4 {
		t.Errorf("an unanchored pattern: %q, want 4 failures", got)
	}
	if got := r.run(func(tb testing.TB) { Tag[tagged](tb, "ID", "enum") }); len(got) != 1 || !strings.Contains(got[0], "has no enum tag") {
		t.Errorf("a missing tag: %q", got)
	}
}
