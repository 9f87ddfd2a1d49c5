package lsp

import (
	"sort"
	"unicode/utf8"
)

// Encoding is the unit in which a Position's Character counts.
type Encoding string

// The position encodings of LSP 3.17. UTF16 is the protocol's default.
const (
	UTF8  Encoding = "utf-8"
	UTF16 Encoding = "utf-16"
	UTF32 Encoding = "utf-32"
)

// negotiateEncoding picks the encoding of a session: the first of the
// client's offers (LSP 3.17 positionEncodings, else the older offsetEncoding
// extension) that this server speaks, which is any of the three; UTF-16 when
// the client offers none.
func negotiateEncoding(offers []string) Encoding {
	for _, o := range offers {
		switch e := Encoding(o); e {
		case UTF8, UTF16, UTF32:
			return e
		}
	}
	return UTF16
}

// lineIndex maps byte offsets of a text to LSP positions and back. Lines end
// at "\n", "\r\n" or "\r", as the protocol says.
type lineIndex struct {
	text   string
	starts []int // byte offset of the start of each line
}

func newLineIndex(text string) *lineIndex {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{text: text, starts: starts}
}

// lineEnd returns the offset of the end of line n, before its terminator.
func (li *lineIndex) lineEnd(n int) int {
	end := len(li.text)
	if n+1 < len(li.starts) {
		end = li.starts[n+1]
		if end > 0 && li.text[end-1] == '\n' {
			end--
		}
		if end > li.starts[n] && li.text[end-1] == '\r' {
			end--
		}
	}
	return end
}

// position returns the position of byte offset off. An offset inside a
// multi-byte character counts from that character's start.
func (li *lineIndex) position(off int, enc Encoding) Position {
	off = max(0, min(off, len(li.text)))
	line := sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
	start := li.starts[line]
	if end := li.lineEnd(line); off > end {
		off = end // inside a "\r\n" terminator
	}
	for off > start && off < len(li.text) && !utf8.RuneStart(li.text[off]) {
		off--
	}
	return Position{Line: line, Character: units(li.text[start:off], enc)}
}

// offset returns the byte offset of p. A line past the end is the end of the
// text; a character past the end of its line is the line's end, as the
// protocol asks; a position inside a character (half of a UTF-16 surrogate
// pair) is that character's start.
func (li *lineIndex) offset(p Position, enc Encoding) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(li.starts) {
		return len(li.text)
	}
	i, end := li.starts[p.Line], li.lineEnd(p.Line)
	for n := 0; i < end; {
		r, size := utf8.DecodeRuneInString(li.text[i:end])
		w := runeUnits(r, size, enc)
		if n+w > p.Character {
			break
		}
		n += w
		i += size
	}
	return i
}

// rng returns the range of the byte range [start, end).
func (li *lineIndex) rng(start, end int, enc Encoding) Range {
	return Range{Start: li.position(start, enc), End: li.position(end, enc)}
}

// units counts s in the units of enc.
func units(s string, enc Encoding) int {
	switch enc {
	case UTF8:
		return len(s)
	case UTF32:
		return utf8.RuneCountInString(s)
	}
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeUnits(r, size, UTF16)
		i += size
	}
	return n
}

// runeUnits is the width of one decoded character in the units of enc. An
// invalid byte counts as one U+FFFD.
func runeUnits(r rune, size int, enc Encoding) int {
	switch enc {
	case UTF8:
		return size
	case UTF32:
		return 1
	}
	if r >= 0x10000 {
		return 2
	}
	return 1
}
