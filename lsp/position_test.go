package lsp

import (
	"testing"
	"unicode/utf8"
)

func TestPositions(t *testing.T) {
	t.Parallel()
	text := "ab\r\né🚀x\rz\n\n"
	tests := []struct {
		off  int
		enc  Encoding
		want Position
	}{
		{0, UTF16, Position{0, 0}},
		{2, UTF16, Position{0, 2}},
		{3, UTF16, Position{0, 2}}, // inside "\r\n": the end of the line
		{4, UTF16, Position{1, 0}},
		{6, UTF16, Position{1, 1}},  // after é
		{10, UTF16, Position{1, 3}}, // after 🚀: two units
		{10, UTF8, Position{1, 6}},
		{10, UTF32, Position{1, 2}},
		{8, UTF16, Position{1, 1}}, // inside 🚀: its start
		{12, UTF16, Position{2, 0}},
		{14, UTF16, Position{3, 0}},
		{15, UTF16, Position{4, 0}},
		{99, UTF16, Position{4, 0}},
	}
	li := newLineIndex(text)
	for _, tc := range tests {
		if got := li.position(tc.off, tc.enc); got != tc.want {
			t.Errorf("position(%d, %s) = %+v, want %+v", tc.off, tc.enc, got, tc.want)
		}
	}
	for _, tc := range []struct {
		p    Position
		enc  Encoding
		want int
	}{
		{Position{1, 2}, UTF16, 6},  // half of 🚀: its start
		{Position{1, 3}, UTF16, 10}, // after 🚀
		{Position{1, 99}, UTF16, 11},
		{Position{0, 99}, UTF8, 2},
		{Position{9, 0}, UTF8, len(text)},
		{Position{-1, 3}, UTF8, 0},
		{Position{1, 5}, UTF8, 6}, // inside 🚀 in bytes: its start
	} {
		if got := li.offset(tc.p, tc.enc); got != tc.want {
			t.Errorf("offset(%+v, %s) = %d, want %d", tc.p, tc.enc, got, tc.want)
		}
	}
	if negotiateEncoding(nil) != UTF16 || negotiateEncoding([]string{"utf-32", "utf-8"}) != UTF32 {
		t.Error("negotiation does not follow the client's order")
	}
}

// FuzzPositions checks that every character boundary of any text survives
// the trip to a position and back, in every encoding.
func FuzzPositions(f *testing.F) {
	for _, s := range []string{"", "a\nb", "é🚀\r\nx\ry", "\xff\xfe\n\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 256 {
			return
		}
		li := newLineIndex(text)
		for _, enc := range []Encoding{UTF8, UTF16, UTF32} {
			for off := 0; off <= len(text); off++ {
				if off < len(text) && !utf8.RuneStart(text[off]) {
					continue
				}
				if off > 0 && text[off-1] == '\r' && off < len(text) && text[off] == '\n' {
					continue // between \r and \n: not a place a position can name
				}
				p := li.position(off, enc)
				if back := li.offset(p, enc); back != off {
					t.Fatalf("%q %s: offset %d → %+v → %d", text, enc, off, p, back)
				}
			}
		}
	})
}
