package eml

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// file reads testdata/files/name.
func file(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "files", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// want is an expected attachment: its metadata and its exact bytes.
type want struct {
	filename, contentType string
	body                  []byte
}

const xlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

func fixtures(t *testing.T) map[string][]want {
	return map[string][]want{
		"nested.eml": {
			{"logo.png", "image/png", file(t, "logo.png")},
			{"nota fiscalç.pdf", "application/pdf", file(t, "nota.pdf")},
			{"NFe35260512345678000190550010000000421000000428.xml", "text/xml", file(t, "nfe.xml")},
			{"boletos.csv", "text/csv", file(t, "boletos.csv")},
		},
		"filenames.eml": {
			{"relatório mensal novembro 2026.pdf", "application/pdf", []byte("report")},
			{"boleto nº 42.pdf", "application/pdf", []byte("boleto")},
			{"cotação março.xlsx", xlsx, []byte("PK\x03\x04xlsx")},
			{"extrato peças.ofx", "application/x-ofx", []byte("OFXHEADER:100\nDATA:OFXSGML")},
			{"fatura “final” € 100.pdf", "application/pdf", []byte("fatura")},
			{"recibo.pdf", "application/pdf", []byte("recibo")},
			{"passwd", "text/plain", []byte("root:x:0:0::/root:/bin/sh")},
			{"nota fiscal 2.pdf", "application/pdf", []byte("nota2")},
			{"planilha.XLSX", xlsx, []byte("PK\x03\x04planilha")},
			{"CB301100.REM", "text/plain", []byte("01REMESSA01COBRANCA\r\n")},
			{"attachment.pdf", "application/pdf", []byte("noname")},
			{"recibo_ção.pdf", "application/pdf", []byte("MZ")},
			{"faturafdp.exe", "application/octet-stream", []byte("MZ")},
		},
		"forwarded.eml": {
			{"NF 123_2026 - cobrança.eml", "message/rfc822", file(t, "forwarded-inner.eml")},
			{"aviso do banco.eml", "message/rfc822", file(t, "forwarded-second.eml")},
			{"message.eml", "message/rfc822", file(t, "forwarded-third.eml")},
			{"assinatura.png", "image/png", file(t, "logo.png")},
		},
		"encodings.eml": {
			{"leia-me.txt", "text/plain", file(t, "leia-me.txt")},
			{"relatorio.txt", "text/plain", file(t, "relatorio.txt")},
			{"dados.bin", "application/octet-stream", file(t, "dados.bin")},
			{"notas.txt", "text/plain", file(t, "notas.txt")},
			{"espacos.pdf", "application/pdf", file(t, "nota.pdf")},
		},
		"single-pdf.eml":     {{"scan0001.pdf", "application/pdf", file(t, "nota.pdf")}},
		"single-part.eml":    {},
		"no-attachments.eml": {},
	}
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	for name, wants := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			m, err := Open(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			expected := make([]Attachment, len(wants))
			for i, w := range wants {
				expected[i] = Attachment{Index: i, Filename: w.filename, ContentType: w.contentType, Size: int64(len(w.body))}
			}
			if diff := cmp.Diff(expected, m.Attachments()); diff != "" {
				t.Fatalf("Attachments() (-want +got):\n%s", diff)
			}
			if m.Len() != len(wants) {
				t.Errorf("Len() = %d, want %d", m.Len(), len(wants))
			}
			for i, w := range wants {
				got := readAttachment(t, m, i)
				if !bytes.Equal(got, w.body) {
					t.Errorf("attachment %d (%s): bytes differ\n got %q\nwant %q", i, w.filename, got, w.body)
				}
			}
		})
	}
}

func readAttachment(t *testing.T, m *Message, i int) []byte {
	t.Helper()
	r, err := m.Open(i)
	if err != nil {
		t.Fatalf("Open(%d): %v", i, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading attachment %d: %v", i, err)
	}
	return b
}

// TestOpenOrder opens attachments out of order and twice: each Open is an
// independent pass over the source.
func TestOpenOrder(t *testing.T) {
	t.Parallel()
	m, err := Open("testdata/nested.eml")
	if err != nil {
		t.Fatal(err)
	}
	want := file(t, "boletos.csv")
	for range 2 {
		if got := readAttachment(t, m, 3); !bytes.Equal(got, want) {
			t.Fatalf("attachment 3 = %q, want %q", got, want)
		}
	}
	if got := readAttachment(t, m, 0); !bytes.Equal(got, file(t, "logo.png")) {
		t.Fatalf("attachment 0 = %q", got)
	}
	// Two readers open at once.
	r1, err := m.Open(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := m.Open(2)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	b2, _ := io.ReadAll(r2)
	b1, _ := io.ReadAll(r1)
	if !bytes.Equal(b1, file(t, "nota.pdf")) || !bytes.Equal(b2, file(t, "nfe.xml")) {
		t.Fatal("interleaved readers returned the wrong bytes")
	}
}

func TestAttachmentsIsACopy(t *testing.T) {
	t.Parallel()
	m, err := Open("testdata/nested.eml")
	if err != nil {
		t.Fatal(err)
	}
	a := m.Attachments()
	a[0].Filename = "changed"
	if m.Attachments()[0].Filename != "logo.png" {
		t.Fatal("Attachments() exposes the Message's own slice")
	}
	if got, err := m.Attachment(1); err != nil || got.Filename != "nota fiscalç.pdf" {
		t.Fatalf("Attachment(1) = %+v, %v", got, err)
	}
	empty, err := Open("testdata/no-attachments.eml")
	if err != nil {
		t.Fatal(err)
	}
	if a := empty.Attachments(); a == nil || len(a) != 0 {
		t.Fatalf("Attachments() of a message without attachments = %#v, want empty non-nil", a)
	}
}

func TestIndexError(t *testing.T) {
	t.Parallel()
	m, err := Open("testdata/forwarded.eml")
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{4, 5, -1} {
		_, err := m.Open(i)
		var ie *IndexError
		if !errors.As(err, &ie) || ie.Index != i || ie.Count != 4 {
			t.Fatalf("Open(%d) error = %v, want *IndexError{%d, 4}", i, err, i)
		}
		if _, err := m.Attachment(i); !errors.As(err, &ie) {
			t.Fatalf("Attachment(%d) error = %v, want *IndexError", i, err)
		}
	}
	for _, tc := range []struct {
		e    IndexError
		want string
	}{
		{IndexError{5, 2}, "email has 2 attachments; attachment 5 does not exist"},
		{IndexError{1, 1}, "email has 1 attachment; attachment 1 does not exist"},
		{IndexError{0, 0}, "email has no attachments; attachment 0 does not exist"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestUnreadable(t *testing.T) {
	t.Parallel()
	_, err := Open(filepath.Join(t.TempDir(), "purged.eml"))
	if !errors.Is(err, ErrUnreadable) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v, want ErrUnreadable and ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), "purged.eml") {
		t.Errorf("error %q does not name the file", err)
	}

	// A directory, which opens but cannot be read.
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrUnreadable) {
		t.Fatalf("Open of a directory: %v, want ErrUnreadable", err)
	}

	// A read failure part way through.
	data := mustRead(t, "nested.eml")
	boom := errors.New("connection reset")
	_, err = New(&failingAt{r: bytes.NewReader(data), at: 2000, err: boom}, int64(len(data)))
	if !errors.Is(err, ErrUnreadable) || !errors.Is(err, boom) {
		t.Fatalf("New over a failing source: %v, want ErrUnreadable wrapping the cause", err)
	}

	// A source shorter than the size it is given.
	if _, err := New(bytes.NewReader(data[:100]), int64(len(data))); !errors.Is(err, ErrUnreadable) {
		t.Fatalf("New over a short source: %v, want ErrUnreadable", err)
	}
}

// failingAt is a ReaderAt whose reads beyond at fail with err.
type failingAt struct {
	r   io.ReaderAt
	at  int64
	err error
}

func (f *failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) <= f.at {
		return f.r.ReadAt(p, off)
	}
	if off >= f.at {
		return 0, f.err
	}
	n, _ := f.r.ReadAt(p[:f.at-off], off)
	return n, f.err
}

// TestSnapshotSurvivesRemoval: a file removed after Open (retention purging
// it while a run is in progress) is still read whole through the open handle.
func TestSnapshotSurvivesRemoval(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.eml")
	if err := os.WriteFile(path, mustRead(t, "nested.eml"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(1); err != nil {
		t.Fatalf("Check after removal: %v", err)
	}
	if got := readAttachment(t, m, 1); !bytes.Equal(got, file(t, "nota.pdf")) {
		t.Fatal("attachment read after removal differs")
	}
	m.Close()
	if _, err := io.ReadAll(mustOpen(t, m, 1)); !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), path) {
		t.Fatalf("reading after Close: %v, want ErrUnreadable naming the file", err)
	}
}

func mustOpen(t *testing.T, m *Message, i int) io.ReadCloser {
	t.Helper()
	r, err := m.Open(i)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestChangedFile changes the file under an open Message: Check notices
// growth and truncation before anything is read, and a stream notices any
// change to the attachment's bytes, never yielding its last byte then.
func TestChangedFile(t *testing.T) {
	t.Parallel()
	data := mustRead(t, "nested.eml")
	csv := file(t, "boletos.csv")
	at := int64(bytes.Index(data, csv[:20]))
	for _, tc := range []struct {
		name    string
		change  func(path string) error
		checked bool // Check notices
	}{
		{"appended to", func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString("\r\nmore")
			return err
		}, true},
		{"truncated", func(path string) error { return os.Truncate(path, at+10) }, true},
		{"overwritten in place, same size and time", func(path string) error {
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			if _, err := f.WriteAt([]byte("9"), at+3); err != nil {
				return err
			}
			f.Close()
			return os.Chtimes(path, fi.ModTime(), fi.ModTime())
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.eml")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := tc.change(path); err != nil {
				t.Fatal(err)
			}
			if err := m.Check(3); tc.checked != errors.Is(err, ErrChanged) {
				t.Fatalf("Check = %v, want ErrChanged: %v", err, tc.checked)
			}
			got, err := io.ReadAll(mustOpen(t, m, 3))
			if err == nil && bytes.Equal(got, csv) {
				return // the attachment's own bytes are intact: they are the snapshot
			}
			if !errors.Is(err, ErrChanged) {
				t.Fatalf("reading the changed attachment: %v, want ErrChanged", err)
			}
			if len(got) >= len(csv) {
				t.Fatalf("read %d bytes, the whole attachment is %d", len(got), len(csv))
			}
		})
	}
}

// switchingAt reads from a until switched, then from b.
type switchingAt struct {
	a, b     []byte
	switched bool
}

func (s *switchingAt) ReadAt(p []byte, off int64) (int, error) {
	src := s.a
	if s.switched {
		src = s.b
	}
	return bytes.NewReader(src).ReadAt(p, off)
}

// TestChangedSource covers sources that cannot be stat'ed: the stream checks
// the attachment's bytes and length.
func TestChangedSource(t *testing.T) {
	t.Parallel()
	orig := mustRead(t, "nested.eml")
	boletos := "00043;2026-12-15;87.90\r\n"
	for _, tc := range []struct {
		name    string
		changed []byte
		checked bool // Check notices
	}{
		{"longer", bytes.Replace(orig, []byte(boletos), []byte("00044;2026-12-20;10.00\r\n"+boletos), 1), true},
		{"shorter", bytes.Replace(orig, []byte(boletos), nil, 1), true},
		{"same size", bytes.Replace(orig, []byte(boletos), []byte(strings.Replace(boletos, "87", "78", 1)), 1), false},
		{"truncated", orig[:len(orig)-60], true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &switchingAt{a: orig, b: tc.changed}
			m, err := New(src, int64(len(orig)))
			if err != nil {
				t.Fatal(err)
			}
			src.switched = true
			if err := m.Check(3); tc.checked != errors.Is(err, ErrChanged) {
				t.Fatalf("Check = %v, want ErrChanged: %v", err, tc.checked)
			}
			got, err := io.ReadAll(mustOpen(t, m, 3))
			if !errors.Is(err, ErrChanged) {
				t.Fatalf("reading a changed attachment: %v, want ErrChanged", err)
			}
			if len(got) >= 81 {
				t.Fatalf("read %d bytes, the attachment is 81", len(got))
			}
			if got := readAttachment(t, m, 0); !bytes.Equal(got, file(t, "logo.png")) {
				t.Fatal("an unchanged attachment differs")
			}
		})
	}
}

func TestCloseStopsReading(t *testing.T) {
	t.Parallel()
	m, err := Open("testdata/nested.eml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Open(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if n, err := r.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Fatalf("Read after Close = %d, %v", n, err)
	}
}

func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	m, err := Open("testdata/encodings.eml")
	if err != nil {
		t.Fatal(err)
	}
	wants := fixtures(t)["encodings.eml"]
	errs := make(chan error, 4*len(wants))
	for range 4 {
		for i, w := range wants {
			go func() {
				r, err := m.Open(i)
				if err != nil {
					errs <- err
					return
				}
				defer r.Close()
				b, err := io.ReadAll(r)
				if err == nil && !bytes.Equal(b, w.body) {
					err = errors.New(w.filename + ": wrong bytes")
				}
				errs <- err
			}()
		}
	}
	for range 4 * len(wants) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestErrorNamesFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.eml")
	if err := os.WriteFile(path, mustRead(t, "nested.eml"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	err = m.Check(1)
	want := "eml: " + path + ": attachment 1 (nota fiscalç.pdf): email changed after it was first read: the file is now 100 bytes, it was"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q, want %q…", err, want)
	}
}
