package billing

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTruncate checks the shortening of an item's description on a
// document, at the widths the documents use: no panic, at most that many
// characters, UTF-8 when the description was.
func FuzzTruncate(f *testing.F) {
	for _, s := range []string{"", "Consultoria", strings.Repeat("é", 80), strings.Repeat("\xff", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range []int{55, 70} {
			out := truncate(s, n)
			if c := utf8.RuneCountInString(out); c > n {
				t.Errorf("%d characters, want at most %d: %q", c, n, out)
			}
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Errorf("not UTF-8: %q", out)
			}
		}
	})
}
