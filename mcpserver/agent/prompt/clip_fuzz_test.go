package prompt

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClip checks how an e-mail's body is cut for the prompt: no panic,
// the first max characters of the text whole (so UTF-8 when the text
// was), and the count of characters left out right.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", strings.Repeat("é", 50), strings.Repeat("日\n", 30), strings.Repeat("\xff", 40), "a\xffb\xc3"} {
		f.Add(s, 10)
	}
	f.Add("é", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<12 {
			t.Skip()
		}
		out, left := clip(s, max)
		n := utf8.RuneCountInString(s)
		if !strings.HasPrefix(s, out) {
			t.Fatalf("clip(%q, %d) = %q: not a prefix", s, max, out)
		}
		if got := utf8.RuneCountInString(out); got != min(n, max) {
			t.Errorf("clip(%q, %d) = %q: %d characters, want %d", s, max, out, got, min(n, max))
		}
		if left != n-min(n, max) {
			t.Errorf("clip(%q, %d): %d left out, want %d", s, max, left, n-min(n, max))
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("clip(%q, %d) = %q: not UTF-8", s, max, out)
		}
	})
}
