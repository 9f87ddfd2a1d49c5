package inbox

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readTextWhole is readText's definition in its plainest form: the first
// maxTextBody bytes read whole, CRLF to LF, blanks trimmed.
func readTextWhole(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxTextBody))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))))
}

// FuzzReadText: the text readText builds through its read buffer, however
// the reads cut the bytes (a CR at the end of one read, its LF at the start
// of the next), is the plain definition's, up to the cap.
func FuzzReadText(f *testing.F) {
	for _, s := range []string{"", "a\r\nb", "\r", "\r\r\n", "x\r", "\r\nx\r\n\r\n", " \t a \r\n", strings.Repeat("line\r\n", 20000),
		strings.Repeat("a", maxTextBody-1) + "\r\nz", strings.Repeat("b", textBufferSize-1) + "\r\n" + strings.Repeat("c", textBufferSize)} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, how uint8) {
		var r io.Reader = strings.NewReader(s)
		switch how % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		if got, want := readText(r, int64(len(s))), readTextWhole(strings.NewReader(s)); got != want {
			t.Fatalf("readText(%q) = %q, want %q", s, got, want)
		}
	})
}
