package eml

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeAll decodes src in both modes, fed in pieces of the given size, and
// checks they agree on the size and the defects.
func decodeAll(t *testing.T, decoding string, src []byte, piece int) ([]byte, []string) {
	t.Helper()
	dec, cnt := newDecoder(decoding), newDecoder(decoding)
	out := make([]byte, 0, 16)
	for rest := src; len(rest) > 0; {
		k := min(piece, len(rest))
		out = dec.decode(out, rest[:k])
		cnt.decode(nil, rest[:k])
		rest = rest[k:]
	}
	out = dec.finish(out)
	cnt.finish(nil)
	if int64(len(out)) != dec.size() || cnt.size() != dec.size() {
		t.Fatalf("%q: %d bytes out, decoding size %d, counting size %d", src, len(out), dec.size(), cnt.size())
	}
	codes := func(ds []Defect) []string {
		var c []string
		for _, d := range ds {
			c = append(c, d.Code)
		}
		return c
	}
	if diff := cmp.Diff(codes(cnt.defects()), codes(dec.defects())); diff != "" {
		t.Fatalf("%q: defects differ (-count +decode):\n%s", src, diff)
	}
	return out, codes(dec.defects())
}

// TestBase64Lenient checks the base64 reading against what Python's email
// package gives (email._encoded_words.decode_b), fed whole and a byte at a
// time. Python returns a part whose data end with one dangling character
// undecoded; this reader drops the character (a deliberate difference).
func TestBase64Lenient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		defects  []string
	}{
		{"YWJj", "abc", nil},
		{"YWJjZA", "abcd", []string{DefectBase64MissingPadding}},
		{"YWJjZA=", "abcd", []string{DefectBase64MissingPadding}},
		{"YWJjZA==", "abcd", nil},
		{"YWJjZGU", "abcde", []string{DefectBase64MissingPadding}},
		{"YWJjZGU=", "abcde", nil},
		{"YQ==YWJj", "a", []string{DefectBase64DataAfterPadding}},
		{"YW=Jj", "abc", []string{DefectBase64InvalidCharacters}},
		{"Y W J j", "abc", nil}, // blanks are skipped without a defect
		{"YWJj!ZA==", "abcd", []string{DefectBase64InvalidCharacters}},
		{"=YWJj", "abc", []string{DefectBase64InvalidCharacters}},
		{"YWJjZ", "abc", []string{DefectBase64DanglingCharacter}},                            // Python: "YWJjZ"
		{"Y===", "", []string{DefectBase64InvalidCharacters, DefectBase64DanglingCharacter}}, // Python: "Y==="
		{"YQ= =", "a", nil},
		{"YWJj\r\nZGVm\r\n", "abcdef", nil},
		{"YWJj====", "abc", []string{DefectBase64InvalidCharacters}},
		{"", "", nil},
		{"!!!!", "", []string{DefectBase64InvalidCharacters}},
		{"YWJj\r\n\tZGVm", "abcdef", nil},
	} {
		for _, piece := range []int{1, 3, 1 << 20} {
			got, defects := decodeAll(t, decodeBase64, []byte(tc.in), piece)
			if string(got) != tc.want || !cmp.Equal(defects, tc.defects) {
				t.Errorf("%q (pieces of %d): %q %v, want %q %v", tc.in, piece, got, defects, tc.want, tc.defects)
			}
		}
	}
}

// TestQuotedPrintableLenient checks quoted-printable against Python's quopri
// (binascii.a2b_qp).
func TestQuotedPrintableLenient(t *testing.T) {
	t.Parallel()
	bad := []string{DefectQuotedPrintableInvalidEscape}
	for _, tc := range []struct {
		in, want string
		defects  []string
	}{
		{"a=3Db", "a=b", nil},
		{"a=3db", "a=b", nil},
		{"a=ZZb", "a=ZZb", bad},
		{"a==41", "a=41", bad},
		{"a=\r\nb", "ab", nil},
		{"a=\nb", "ab", nil},
		{"a= \r\nb", "a= \r\nb", bad},
		{"a=", "a", nil},
		{"a=4", "a=4", bad},
		{"a=4=41", "a=4A", bad},
		{"a=\rxyz\nb", "ab", nil},
		{"=4g", "=4g", bad},
		{"caf=E9 \r\n", "caf\xe9 \r\n", nil},
	} {
		for _, piece := range []int{1, 2, 1 << 20} {
			got, defects := decodeAll(t, decodeQP, []byte(tc.in), piece)
			if string(got) != tc.want || !cmp.Equal(defects, tc.defects) {
				t.Errorf("%q (pieces of %d): %q %v, want %q %v", tc.in, piece, got, defects, tc.want, tc.defects)
			}
		}
	}
}

// TestBase64FastPathsAgree damages valid base64 at random and checks that
// the bulk paths (counting eight bytes at a time, decoding whole lines)
// give what the byte-at-a-time reading gives.
func TestBase64FastPathsAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		data := make([]byte, rng.IntN(400))
		for i := range data {
			data[i] = byte(rng.UintN(256))
		}
		enc := []byte(lines(data))
		for range rng.IntN(4) {
			if len(enc) == 0 {
				break
			}
			enc[rng.IntN(len(enc))] = "=!- \r\nA"[rng.IntN(7)]
		}
		if rng.IntN(3) == 0 && len(enc) > 0 {
			enc = enc[:rng.IntN(len(enc))]
		}
		slow := &b64Decoder{}
		var want []byte
		for _, c := range enc {
			want = slow.step(append(want, 0)[:len(want)], c)
		}
		for _, piece := range []int{1, 7, 100, 1 << 20} {
			got, _ := decodeAll(t, decodeBase64, enc, piece)
			if !bytes.Equal(got, want) {
				t.Fatalf("%q in pieces of %d: %x, byte by byte %x", enc, piece, got, want)
			}
		}
	}
}

// lines is data in base64, in CRLF lines of 76 characters.
func lines(data []byte) string {
	var b bytes.Buffer
	w := &lineWriter{w: &b, width: 76}
	enc := make([]byte, (len(data)+2)/3*4)
	base64.StdEncoding.Encode(enc, data)
	w.Write(enc)
	return b.String()
}
