package intake

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzOneLine checks the text a reply carries of a refusal's reason: no
// panic, one line (no CR or LF), at most maxReplyText bytes, and UTF-8
// when the reason was.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "sender not allowed", "a\r\nb\rc\nd", strings.Repeat("é", 300), strings.Repeat("日 ", 200), strings.Repeat("\xff\r\n", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := oneLine(s)
		if strings.ContainsAny(out, "\r\n") {
			t.Errorf("oneLine(%q) = %q: more than one line", s, out)
		}
		if len(out) > maxReplyText {
			t.Errorf("oneLine(%q): %d bytes", s, len(out))
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("oneLine(%q) = %q: not UTF-8", s, out)
		}
	})
}
