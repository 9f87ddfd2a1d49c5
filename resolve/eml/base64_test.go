package eml

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeAll reads everything from a base64Reader over src, reading chunk
// bytes at a time from a source that returns at most srcChunk bytes a call.
func decodeAll(src []byte, srcChunk, chunk int) ([]byte, error) {
	var r io.Reader = bytes.NewReader(src)
	if srcChunk > 0 {
		r = &chunkReader{r: r, n: srcChunk}
	}
	d := newBase64Reader(r)
	var out []byte
	buf := make([]byte, chunk)
	for {
		n, err := d.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// reference decodes like base64Reader should: blanks dropped, then the
// standard decoder.
func reference(src []byte) ([]byte, error) {
	clean := strings.NewReplacer("\r", "", "\n", "", " ", "", "\t", "").Replace(string(src))
	return base64.StdEncoding.DecodeString(clean)
}

func TestBase64Reader(t *testing.T) {
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i*7 + i/13)
	}
	enc := base64.StdEncoding.EncodeToString(data)
	var wrapped strings.Builder
	for i := 0; i < len(enc); i += 76 {
		wrapped.WriteString(enc[i:min(i+76, len(enc))])
		wrapped.WriteString("\r\n")
	}
	inputs := map[string]string{
		"wrapped":          wrapped.String(),
		"one line":         enc,
		"LF only":          strings.ReplaceAll(wrapped.String(), "\r\n", "\n"),
		"trailing blanks":  strings.ReplaceAll(wrapped.String(), "\r\n", " \t\r\n"),
		"indented":         strings.ReplaceAll(wrapped.String(), "\r\n", "\r\n\t"),
		"empty":            "",
		"blank only":       " \r\n\t\r\n",
		"one padded group": "aGk=\r\n",
	}
	for name, in := range inputs {
		want, err := reference([]byte(in))
		if err != nil {
			t.Fatalf("%s: reference: %v", name, err)
		}
		for _, sizes := range [][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 8192}, {1, 4096}, {5, 7}, {77, 100}, {4096, 32 << 10}} {
			got, err := decodeAll([]byte(in), sizes[0], sizes[1])
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, source chunk %d, read %d: got %d bytes (%v), want %d", name, sizes[0], sizes[1], len(got), err, len(want))
			}
		}
	}
	if err := iotest.TestReader(newBase64Reader(strings.NewReader(wrapped.String())), data); err != nil {
		t.Fatal(err)
	}
}

func TestBase64ReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		in      string
		corrupt int64 // -1: io.ErrUnexpectedEOF
		prefix  string
	}{
		{"aGVsbG8gd29ybGQ", -1, "hello wor"},
		{"aGVsbG8=\r\nd29ybGQ=", 8, "hello"},
		{"aGVsbA==aGVs", 8, "hell"},
		{"aGVs!G8=", 4, "hel"},
		{"aGVsbG8=====", 8, "hello"},
		{"a", -1, ""},
		{"aGVsbG8=\r\n!", 8, "hello"},
	} {
		for _, chunk := range []int{1, 2, 3, 4, 8192} {
			got, err := decodeAll([]byte(tc.in), 0, chunk)
			var ce base64.CorruptInputError
			switch {
			case tc.corrupt < 0 && !errors.Is(err, io.ErrUnexpectedEOF):
				t.Errorf("%q read by %d: error %v, want io.ErrUnexpectedEOF", tc.in, chunk, err)
			case tc.corrupt >= 0 && (!errors.As(err, &ce) || int64(ce) != tc.corrupt):
				t.Errorf("%q read by %d: error %v, want CorruptInputError(%d)", tc.in, chunk, err, tc.corrupt)
			case !strings.HasPrefix(tc.prefix, string(got)):
				t.Errorf("%q read by %d: decoded %q before the error, want a prefix of %q", tc.in, chunk, got, tc.prefix)
			}
		}
	}
}

// FuzzBase64Reader checks base64Reader against encoding/base64 on arbitrary
// input and read sizes: same bytes when valid, an error when not.
func FuzzBase64Reader(f *testing.F) {
	f.Add([]byte("aGVsbG8gd29ybGQ=\r\n"), uint16(3), uint16(1))
	f.Add([]byte("aGVs bG8=\r\n\td29y"), uint16(1), uint16(2))
	f.Add([]byte("aGVsbA==aGVs"), uint16(8192), uint16(0))
	f.Add([]byte("YQ==\r\n"), uint16(2), uint16(5))
	f.Fuzz(func(t *testing.T, in []byte, chunk, srcChunk uint16) {
		want, werr := reference(in)
		got, err := decodeAll(in, int(srcChunk), max(1, int(chunk)))
		if (werr == nil) != (err == nil) {
			t.Fatalf("%q: error %v, encoding/base64 says %v", in, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q: decoded %q, want %q", in, got, want)
		}
	})
}
