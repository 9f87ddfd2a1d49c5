package console

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCaretLine(t *testing.T) {
	for _, c := range []struct {
		line         string
		col          int
		source, want string
	}{
		{`{"a": 1}`, 7, `{"a": 1}`, "      ^"},
		{"\t\tx", 3, "\t\tx", "\t\t^"},
		{"é1", 2, "é1", " ^"},
		{"ab", 9, "ab", "  ^"},
		{"ab", 0, "ab", "^"},
		{strings.Repeat("a", 300), 200, "…" + strings.Repeat("a", 120) + "…", " " + strings.Repeat(" ", 60) + "^"},
	} {
		s, caret := caretLine(c.line, c.col)
		if s != c.source || caret != c.want {
			t.Errorf("caretLine(%.20q, %d) = %q, %q; want %q, %q", c.line, c.col, s, caret, c.source, c.want)
		}
	}
}

// FuzzCaretLine: any line and column give a line of at most 122
// characters, valid UTF-8, and a caret line that ends in ^ and is no
// longer than the line shown.
func FuzzCaretLine(f *testing.F) {
	f.Add("{\"method\": \"post\"}", 12)
	f.Add("\xff\xfe\tx", 2)
	f.Add(strings.Repeat("é", 500), 400)
	f.Fuzz(func(t *testing.T, line string, col int) {
		s, caret := caretLine(line, col)
		if !utf8.ValidString(s) || !utf8.ValidString(caret) {
			t.Fatalf("not UTF-8: %q %q", s, caret)
		}
		if n := utf8.RuneCountInString(s); n > 122 {
			t.Fatalf("a line of %d characters", n)
		}
		if !strings.HasSuffix(caret, "^") || utf8.RuneCountInString(caret) > utf8.RuneCountInString(s)+1 {
			t.Fatalf("caret %q under %q", caret, s)
		}
	})
}
