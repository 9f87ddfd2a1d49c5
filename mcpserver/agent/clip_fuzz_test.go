package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClipText checks the one-line shortening of a text for a record or a
// log (clipText, clipAnswer): no panic, bounded, UTF-8 when the text was.
func FuzzClipText(f *testing.F) {
	for _, s := range []string{"", "a b\n c", strings.Repeat("é", 600), strings.Repeat("日\n", 300), strings.Repeat("\xff", 700)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<12 {
			t.Skip()
		}
		for name, out := range map[string]string{"clipText": clipText(s, n), "clipAnswer": clipAnswer(s)} {
			limit := n
			if name == "clipAnswer" {
				limit = MaxAnswerRecorded
			}
			if len(out) > limit+len("…") {
				t.Errorf("%s: %d bytes, want at most %d: %q", name, len(out), limit+len("…"), out)
			}
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Errorf("%s: not UTF-8: %q", name, out)
			}
		}
	})
}
