package eml

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzShorten checks the shortening of a filename to the bounds it is
// used with: no panic, within the bound, UTF-8 when the name was.
func FuzzShorten(f *testing.F) {
	for _, s := range []string{"", "a.pdf", strings.Repeat("é", 200) + ".pdf", strings.Repeat("日", 200), strings.Repeat("\x80", 300) + ".x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, max := range []int{maxFilenameBytes, maxFilenameBytes - len(".eml")} {
			out := shorten(s, max)
			if len(out) > max {
				t.Errorf("%d bytes, want at most %d: %q", len(out), max, out)
			}
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Errorf("not UTF-8: %q", out)
			}
		}
	})
}
