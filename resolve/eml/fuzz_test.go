package eml

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzMessage reads arbitrary (and randomly damaged) bytes as an .eml: New
// never panics or hangs and fails only with ErrMalformed; the counting pass
// (New) and the decoding pass (ReadIndex) agree on every part's size and
// defects; and every attachment streams exactly its Size, the bytes its
// digest names.
func FuzzMessage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.eml")
	corpus, _ := filepath.Glob("testdata/corpus/enmime/*.raw")
	for _, name := range corpus {
		if fi, err := os.Stat(name); err == nil && fi.Size() < 8<<10 {
			files = append(files, name) // small ones: the fuzzer minimizes large inputs slowly
		}
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(""))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Disposition: attachment; filename=a\r\nContent-Transfer-Encoding: base64\r\n\r\nYQ==\r\n--b--\r\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/rfc822\n\nSubject: x\n\n--b--\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: multipart/related; boundary=c\r\n\r\n--c\r\n\r\n--c--\r\n--b--"))
	f.Add([]byte("Content-Disposition: attachment; filename*0*=utf-8''%C3; filename*1*=%A7.pdf\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na=3Db=\r\nc=ZZ"))
	f.Add([]byte("From x\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Disposition: attachment; filename=a\nContent-Transfer-Encoding: base64\n\nY Q=\r\n=!YWJj\n--b\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\n--b--"))
	f.Add([]byte("Content-Disposition: attachment; filename=q\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=4=1x==\r=\rjunk\n=A"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := newBytes(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if m.Len() != len(m.Attachments()) {
			t.Fatalf("Len %d, %d attachments", m.Len(), len(m.Attachments()))
		}
		// The pass with digests decodes every part; its sizes and defects
		// must be those the counting pass found.
		full, err := ReadIndex(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("ReadIndex: %v", err)
		}
		light := m.Index()
		for i := range full.Parts {
			full.Parts[i].SHA256 = ""
		}
		full.Digests = false
		if diff := cmp.Diff(light, full); diff != "" {
			t.Fatalf("the counting and decoding passes disagree (-count +decode):\n%s", diff)
		}
		withDigests, _ := NewIndexed(bytes.NewReader(data), int64(len(data)), mustIndex(t, data))
		for _, a := range withDigests.Attachments() {
			if a.Filename == "" || a.ContentType == "" || bytes.ContainsAny([]byte(a.Filename), "/\\\x00\r\n") {
				t.Fatalf("attachment %+v", a)
			}
			r, err := withDigests.Open(a.Index)
			if err != nil {
				t.Fatalf("Open(%d): %v", a.Index, err)
			}
			h := sha256.New()
			n, err := io.Copy(h, r)
			r.Close()
			if err != nil || n != a.Size {
				t.Fatalf("attachment %d: read %d bytes (%v), Size is %d", a.Index, n, err, a.Size)
			}
			if hex.EncodeToString(h.Sum(nil)) != a.SHA256 {
				t.Fatalf("attachment %d: streamed bytes differ from the digest", a.Index)
			}
		}
		if _, err := m.Open(m.Len()); !errors.As(err, new(*IndexError)) {
			t.Fatalf("Open(Len()) = %v, want *IndexError", err)
		}
	})
}

func mustIndex(t *testing.T, data []byte) *Index {
	ix, err := ReadIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}
