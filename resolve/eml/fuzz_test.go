package eml

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzMessage reads arbitrary bytes as an .eml: New never panics or hangs,
// fails only with ErrMalformed, and when it succeeds every attachment yields
// exactly its Size.
func FuzzMessage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.eml")
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
		for _, a := range m.Attachments() {
			if a.Filename == "" || a.ContentType == "" || bytes.ContainsAny([]byte(a.Filename), "/\\\x00\r\n") {
				t.Fatalf("attachment %+v", a)
			}
			r, err := m.Open(a.Index)
			if err != nil {
				t.Fatalf("Open(%d): %v", a.Index, err)
			}
			n, err := io.Copy(io.Discard, r)
			r.Close()
			if err != nil || n != a.Size {
				t.Fatalf("attachment %d: read %d bytes (%v), Size is %d", a.Index, n, err, a.Size)
			}
		}
		if _, err := m.Open(m.Len()); !errors.As(err, new(*IndexError)) {
			t.Fatalf("Open(Len()) = %v, want *IndexError", err)
		}
	})
}
