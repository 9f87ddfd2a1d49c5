package lsp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClip checks the shortening of a value in a hover: no panic, at most
// n bytes and an ellipsis, UTF-8 when the value was, its start kept.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "12345", strings.Repeat("é", 40), strings.Repeat("\x80", 50)} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<12 {
			t.Skip()
		}
		out := clip(s, n)
		if len(out) > n+len("…") {
			t.Errorf("%d bytes: %q", len(out), out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("not UTF-8: %q", out)
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(out, "…")) {
			t.Errorf("%q is no start of %q", out, s)
		}
	})
}
