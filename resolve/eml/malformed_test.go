package eml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// newBytes reads a message held in memory.
func newBytes(b []byte) (*Message, error) { return New(bytes.NewReader(b), int64(len(b))) }

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func replaceOnce(t *testing.T, b []byte, old, new string) []byte {
	t.Helper()
	if bytes.Count(b, []byte(old)) < 1 {
		t.Fatalf("%q not in the fixture", old)
	}
	return bytes.Replace(b, []byte(old), []byte(new), 1)
}

func TestMalformed(t *testing.T) {
	nested := mustRead(t, "nested.eml")
	pdfB64 := "JVBERi0xLjQKMSAwIG9iaiA8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4gZW5kb2Jq"
	mixed := "------=_Part_1_mixed.1701339238"
	cut := bytes.Index(nested, []byte(pdfB64)) + 40

	deep := func(depth int) []byte {
		var b strings.Builder
		b.WriteString("Content-Type: multipart/mixed; boundary=b0\r\n\r\n")
		for i := 1; i < depth; i++ {
			fmt.Fprintf(&b, "--b%d\r\nContent-Type: multipart/mixed; boundary=b%d\r\n\r\n", i-1, i)
		}
		fmt.Fprintf(&b, "--b%d\r\nContent-Type: text/plain\r\n\r\nx\r\n", depth-1)
		for i := depth - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "--b%d--\r\n", i)
		}
		return []byte(b.String())
	}
	many := func(n int) []byte {
		var b strings.Builder
		b.WriteString("Content-Type: multipart/mixed; boundary=b\r\n\r\n")
		for range n {
			b.WriteString("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n")
		}
		b.WriteString("--b--\r\n")
		return []byte(b.String())
	}

	for _, tc := range []struct {
		name string
		eml  []byte
		want []string // in the error, besides ErrMalformed
	}{
		{"truncated in an attachment", nested[:cut],
			[]string{"attachment 1 (nota fiscalç.pdf, part 2)", "truncated"}},
		{"truncated in a header", nested[:bytes.Index(nested, []byte("Content-Transfer-Encoding: base64"))],
			[]string{"truncated"}},
		{"missing closing boundary", bytes.TrimSuffix(nested, []byte(mixed+"--\r\n")),
			[]string{"attachment 3 (boletos.csv, part 4)", "truncated"}},
		{"boundary in the header differs from the body", replaceOnce(t, nested, `boundary="----=_Part_1_mixed.1701339238"`, `boundary="----=_Part_9_mixed"`),
			[]string{"multipart (message) ends without its closing boundary"}},
		{"invalid base64", replaceOnce(t, nested, pdfB64, strings.Replace(pdfB64, "JVBERi0x", "JVBE!i0x", 1)),
			[]string{"attachment 1 (nota fiscalç.pdf", "invalid base64 at character"}},
		{"base64 cut mid-group", replaceOnce(t, nested, "iVBORw0KGgo", "iVBORw0KGg"),
			[]string{"attachment 0 (logo.png", "base64"}},
		{"unknown transfer encoding", replaceOnce(t, nested, "Content-Transfer-Encoding: 7bit", "Content-Transfer-Encoding: x-uuencode"),
			[]string{"attachment 3 (boletos.csv", `unknown Content-Transfer-Encoding "x-uuencode"`}},
		{"multipart without boundary", []byte("Content-Type: multipart/mixed\r\n\r\nhello\r\n"),
			[]string{"multipart without a boundary"}},
		{"preamble line too long", []byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n" + strings.Repeat("x", 5000) +
			"\r\n--b\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nhi\r\n--b--\r\n"), []string{"a line of more than 4 KiB"}},
		{"nested too deep", deep(MaxDepth + 1), []string{"nested more than 32 deep"}},
		{"too many parts", many(MaxParts + 1), []string{"more than 10000 MIME parts"}},
		{"part header too large", []byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nX-Big: " +
			strings.Repeat("a", 2*MaxHeaderBytes) + "\r\n\r\nbody\r\n--b--\r\n"), []string{"header or preamble larger than 1024 KiB"}},
		{"message header too large", []byte("Subject: " + strings.Repeat("a ", MaxHeaderBytes) + "\r\n\r\nbody"), []string{"larger than"}},
		{"header line without a colon", []byte("From a@b\r\nSubject: x\r\n\r\nbody"), []string{"message header"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newBytes(tc.eml)
			if err == nil {
				t.Fatalf("New succeeded with %d attachments, want an error", m.Len())
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %q is not ErrMalformed", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestLimitsAccept checks that messages just inside the limits are read.
func TestLimitsAccept(t *testing.T) {
	var b strings.Builder
	b.WriteString("Content-Type: multipart/mixed; boundary=b0\r\n\r\n")
	for i := 1; i < MaxDepth; i++ {
		fmt.Fprintf(&b, "--b%d\r\nContent-Type: multipart/mixed; boundary=b%d\r\n\r\n", i-1, i)
	}
	fmt.Fprintf(&b, "--b%d\r\nContent-Disposition: attachment; filename=deep.txt\r\n\r\ndeep\r\n", MaxDepth-1)
	for i := MaxDepth - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "--b%d--\r\n", i)
	}
	m, err := newBytes([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 1 || m.Attachments()[0].Size != 4 {
		t.Fatalf("got %+v", m.Attachments())
	}
}

// TestBodyPartsNotDecoded: a broken encoding in the text body does not stop
// the attachments from being read, since the body is never decoded.
func TestBodyPartsNotDecoded(t *testing.T) {
	eml := "Content-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n!!not base64!!\r\n" +
		"--b\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: x-unknown\r\n\r\nbody\r\n" +
		"--b\r\nContent-Type: application/pdf; name=a.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERg==\r\n--b--\r\n"
	m, err := newBytes([]byte(eml))
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 1 {
		t.Fatalf("got %+v", m.Attachments())
	}
}

// TestEveryTruncation cuts a message at every byte: reading it either fails
// with ErrMalformed or succeeds, and then every attachment yields exactly its
// Size.
func TestEveryTruncation(t *testing.T) {
	for _, name := range []string{"nested.eml", "filenames.eml", "forwarded.eml", "encodings.eml"} {
		data := mustRead(t, name)
		step := 1
		if testing.Short() {
			step = 7
		}
		for n := 0; n < len(data); n += step {
			m, err := newBytes(data[:n])
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%s cut at %d: %v is not ErrMalformed", name, n, err)
				}
				continue
			}
			checkSizes(t, m)
		}
	}
}

// checkSizes reads every attachment and checks it yields exactly Size bytes.
func checkSizes(t testing.TB, m *Message) {
	t.Helper()
	for _, a := range m.Attachments() {
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
}
