package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzOneLine checks how kobana token list shows a client's name: no
// panic, one line without control characters, at most n characters, in
// UTF-8.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "Claude", "a\r\nb\tc\x1b[31m", strings.Repeat("é", 60), strings.Repeat("日\n", 30), strings.Repeat("\xff", 50)} {
		f.Add(s, 40)
	}
	f.Add("ab", 0)
	f.Add("ab", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<12 {
			t.Skip()
		}
		out := oneLine(s, n)
		if strings.ContainsFunc(out, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			t.Errorf("oneLine(%q, %d) = %q: a control character", s, n, out)
		}
		if c := utf8.RuneCountInString(out); c > n {
			t.Errorf("oneLine(%q, %d) = %q: %d characters", s, n, out, c)
		}
		if !utf8.ValidString(out) {
			t.Errorf("oneLine(%q, %d) = %q: not UTF-8", s, n, out)
		}
	})
}
