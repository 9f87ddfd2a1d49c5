package compile

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClip checks the shortening of a value a diagnostic quotes: no
// panic, at most 80 bytes, UTF-8 when the value was, and the value's start
// kept.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "x", strings.Repeat("a", 80), strings.Repeat("é", 60), strings.Repeat("日", 40), strings.Repeat("\xff", 90)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := clip(s)
		if len(out) > 80 {
			t.Errorf("%d bytes: %q", len(out), out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("not UTF-8: %q", out)
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(out, "...")) {
			t.Errorf("%q is no start of %q", out, s)
		}
	})
}
