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
	data, _ := os.ReadFile("testdata/nested.eml")
	boom := errors.New("connection reset")
	_, err = New(func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(data[:2000]), &failing{boom})), nil
	})
	if !errors.Is(err, ErrUnreadable) || !errors.Is(err, boom) {
		t.Fatalf("New over a failing source: %v, want ErrUnreadable wrapping the cause", err)
	}

	// The file disappears after the first pass (purged by retention).
	path := filepath.Join(t.TempDir(), "m.eml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if _, err := m.Open(1); !errors.Is(err, ErrUnreadable) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open(1) after the file was removed: %v", err)
	}
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

func TestChangedFile(t *testing.T) {
	data, err := os.ReadFile("testdata/nested.eml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.eml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, "\r\nmore"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open(0); !errors.Is(err, ErrChanged) {
		t.Fatalf("Open after the file grew: %v, want ErrChanged", err)
	}
}

// TestChangedSource covers sources that cannot be stat'ed: the attachment's
// own length is checked while streaming.
func TestChangedSource(t *testing.T) {
	orig, err := os.ReadFile("testdata/nested.eml")
	if err != nil {
		t.Fatal(err)
	}
	boletos := "00043;2026-12-15;87.90\r\n"
	for _, tc := range []struct {
		name    string
		changed []byte
		want    string // in the error
	}{
		{"longer", bytes.Replace(orig, []byte(boletos), []byte(boletos+"00044;2026-12-20;10.00\r\n"), 1), "longer than the 81 bytes"},
		{"shorter", bytes.Replace(orig, []byte(boletos), nil, 1), "ends after 57 of the 81 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			m, err := New(func() (io.ReadCloser, error) {
				calls++
				if calls == 1 {
					return io.NopCloser(bytes.NewReader(orig)), nil
				}
				return io.NopCloser(bytes.NewReader(tc.changed)), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			r, err := m.Open(3)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("reading a changed attachment: %v, want ErrChanged (%s)", err, tc.want)
			}
			if len(got) > 81 {
				t.Fatalf("read %d bytes, more than the 81 announced", len(got))
			}
		})
	}

	t.Run("renamed", func(t *testing.T) {
		calls := 0
		m, err := New(func() (io.ReadCloser, error) {
			calls++
			if calls == 1 {
				return io.NopCloser(bytes.NewReader(orig)), nil
			}
			return io.NopCloser(bytes.NewReader(bytes.ReplaceAll(orig, []byte("boletos.csv"), []byte("boletos.txt")))), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Open(3); !errors.Is(err, ErrChanged) {
			t.Fatalf("Open of a renamed attachment: %v, want ErrChanged", err)
		}
		if _, err := m.Open(0); err != nil {
			t.Fatalf("Open of an unchanged attachment: %v", err)
		}
	})
}

func TestCloseStopsReading(t *testing.T) {
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
	path := filepath.Join(t.TempDir(), "m.eml")
	if err := os.WriteFile(path, mustRead(t, "nested.eml"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	_, err = m.Open(1)
	want := "eml: " + path + ": attachment 1 (nota fiscalç.pdf): email cannot be read: no such file or directory"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}
