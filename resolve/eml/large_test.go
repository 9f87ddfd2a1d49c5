package eml

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kobana/workflow/internal/testwait"
)

// lineWriter breaks what it writes into CRLF-terminated lines of width bytes.
type lineWriter struct {
	w     io.Writer
	width int
	col   int
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(l.width-l.col, len(p))
		if _, err := l.w.Write(p[:k]); err != nil {
			return n, err
		}
		n += k
		l.col += k
		p = p[k:]
		if l.col == l.width {
			if _, err := io.WriteString(l.w, "\r\n"); err != nil {
				return n, err
			}
			l.col = 0
		}
	}
	return n, nil
}

// writeLarge writes an .eml with a base64 attachment of size pseudo-random
// bytes (seeded by seed) followed by a small text attachment. It returns the
// sha256 of the large attachment's bytes.
func writeLarge(w io.Writer, size int64, seed uint64) ([]byte, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprint(bw, "From: erp@example.com.br\r\nTo: financeiro@example.inbox.kobana.com.br\r\n"+
		"Subject: Backup\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"big\"\r\n\r\n"+
		"--big\r\nContent-Type: text/plain\r\n\r\nBackup em anexo.\r\n"+
		"--big\r\nContent-Type: application/zip; name=\"backup.zip\"\r\n"+
		"Content-Disposition: attachment; filename=\"backup.zip\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	sum := sha256.New()
	enc := base64.NewEncoder(base64.StdEncoding, &lineWriter{w: bw, width: 76})
	src := io.TeeReader(io.LimitReader(rand.NewChaCha8(seedBytes(seed)), size), sum)
	if _, err := io.Copy(enc, src); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	fmt.Fprint(bw, "\r\n--big\r\nContent-Type: text/plain; name=\"leia.txt\"\r\n\r\nfim\r\n--big--\r\n")
	return sum.Sum(nil), bw.Flush()
}

func seedBytes(seed uint64) [32]byte {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return s
}

func writeLargeFile(tb testing.TB, size int64) (string, []byte) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "large.eml")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	sum, err := writeLarge(f, size, uint64(size))
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	return path, sum
}

func TestLargeAttachment(t *testing.T) {
	t.Parallel()
	size := int64(48<<20 + 12345)
	if testing.Short() {
		size = 3<<20 + 1
	}
	path, want := writeLargeFile(t, size)
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	atts := m.Attachments()
	if diff := cmp.Diff([]Attachment{{Index: 0, Filename: "backup.zip", ContentType: "application/zip", Size: size},
		{Index: 1, Filename: "leia.txt", ContentType: "text/plain", Size: 3}}, atts); diff != "" {
		t.Fatalf("Attachments() (-want +got):\n%s", diff)
	}
	r, err := m.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil || n != size {
		t.Fatalf("read %d bytes (%v), want %d", n, err, size)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		t.Fatalf("sha256 %x, want %x", got, want)
	}
	if got := readAttachment(t, m, 1); string(got) != "fim" {
		t.Fatalf("attachment after the large one = %q", got)
	}
}

// TestLargeAttachmentRewritten: a large attachment rewritten in place while
// it is streamed in big reads (decoded straight into the caller's buffer)
// fails before its last byte.
func TestLargeAttachmentRewritten(t *testing.T) {
	t.Parallel()
	size := int64(3<<20 + 1)
	path, _ := writeLargeFile(t, size)
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := mustOpen(t, m, 0)
	defer r.Close()
	buf := make([]byte, 32<<10)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Index().Parts[1]
	if _, err := f.WriteAt([]byte("AAAA"), p.Offset+p.Length-200); err != nil {
		t.Fatal(err)
	}
	f.Close()
	n, err := io.CopyBuffer(io.Discard, r, buf)
	if !errors.Is(err, ErrChanged) || int64(len(buf))+n >= size {
		t.Fatalf("read %d more bytes (%v), want ErrChanged before the last of %d", n, err, size)
	}
}

// TestCloseStopsPrefetch: closing a large attachment's stream part way ends
// the goroutine that decodes ahead.
func TestCloseStopsPrefetch(t *testing.T) {
	path, _ := writeLargeFile(t, 4<<20)
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before := runtime.NumGoroutine()
	for range 20 {
		r := mustOpen(t, m, 0)
		if _, err := io.ReadFull(r, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	if err := testwait.Until(5*time.Second, func() error {
		if n := runtime.NumGoroutine(); n > before {
			return fmt.Errorf("%d goroutines, %d before the streams", n, before)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
