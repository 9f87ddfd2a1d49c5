package eml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// summary describes a message's attachments for comparison: name, size and
// defect codes of each, then the message's own defect codes.
func summary(t *testing.T, m *Message) []string {
	t.Helper()
	var out []string
	for _, a := range m.Attachments() {
		codes := []string{}
		for _, d := range a.Defects {
			codes = append(codes, d.Code)
		}
		n, err := io.Copy(io.Discard, mustOpen(t, m, a.Index))
		if err != nil || n != a.Size {
			t.Fatalf("attachment %d: streamed %d bytes (%v), Size %d", a.Index, n, err, a.Size)
		}
		out = append(out, fmt.Sprintf("%s %d %v", a.Filename, a.Size, codes))
	}
	var codes []string
	for _, d := range m.Index().Defects {
		codes = append(codes, d.Code)
	}
	return append(out, fmt.Sprintf("message %v", codes))
}

// TestLenient reads broken messages the way mature readers do: what can be
// read is read, each repair is a defect, and one bad part never loses the
// others.
func TestLenient(t *testing.T) {
	t.Parallel()
	nested := mustRead(t, "nested.eml")
	pdfB64 := "JVBERi0xLjQKMSAwIG9iaiA8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4gZW5kb2Jq"
	mixed := "------=_Part_1_mixed.1701339238"
	cut := bytes.Index(nested, []byte(pdfB64)) + 42

	deep := func(depth int) []byte {
		var b strings.Builder
		b.WriteString("Content-Type: multipart/mixed; boundary=b0\r\n\r\n")
		for i := 1; i < depth; i++ {
			fmt.Fprintf(&b, "--b%d\r\nContent-Type: multipart/mixed; boundary=b%d\r\n\r\n", i-1, i)
		}
		fmt.Fprintf(&b, "--b%d\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=deep.txt\r\n\r\nx\r\n", depth-1)
		for i := depth - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "--b%d--\r\n", i)
		}
		return []byte(b.String())
	}
	all := []string{"logo.png 70 []", "nota fiscalç.pdf 329 []", "NFe35260512345678000190550010000000421000000428.xml 412 []", "boletos.csv 81 []"}

	for _, tc := range []struct {
		name string
		eml  []byte
		want []string
	}{
		{"intact", nested, append(all, "message []")},
		{"mbox From line", append([]byte("From erp@example.com.br Mon Nov 30 10:00:00 2026\n"), nested...),
			append(all, "message [mbox-from-line]")},
		{"truncated in an attachment", nested[:cut],
			[]string{"logo.png 70 []", "nota fiscalç.pdf 31 [base64-missing-padding missing-closing-boundary]", "message [missing-closing-boundary]"}},
		{"truncated in a header", nested[:bytes.Index(nested, []byte("Content-Transfer-Encoding: base64"))],
			// related, alternative and mixed all end unclosed
			[]string{"logo.png 0 [missing-closing-boundary]", "message [missing-closing-boundary missing-closing-boundary missing-closing-boundary]"}},
		{"missing closing boundary", bytes.TrimSuffix(nested, []byte(mixed+"--\r\n")),
			[]string{all[0], all[1], all[2], "boletos.csv 81 [missing-closing-boundary]", "message [missing-closing-boundary]"}},
		{"boundary in the header differs from the body", replaceOnce(t, nested, `boundary="----=_Part_1_mixed.1701339238"`, `boundary="----=_Part_9_mixed"`),
			[]string{"message []"}},
		{"invalid base64 character", replaceOnce(t, nested, pdfB64, strings.Replace(pdfB64, "JVBERi0x", "JVBE!Ri0x", 1)),
			[]string{all[0], "nota fiscalç.pdf 329 [base64-invalid-characters]", all[2], all[3], "message []"}},
		{"base64 cut mid-group", replaceOnce(t, nested, "iVBORw0KGgo", "iVBORw0KGg"),
			// the shifted groups leave "=" where it cannot be padding, and one character over
			[]string{"logo.png 69 [base64-invalid-characters base64-dangling-character]", all[1], all[2], all[3], "message []"}},
		{"unknown transfer encoding", replaceOnce(t, nested, "Content-Transfer-Encoding: 7bit", "Content-Transfer-Encoding: x-uuencode"),
			[]string{all[0], all[1], all[2], "boletos.csv 81 [unknown-transfer-encoding]", "message []"}},
		{"multipart without boundary", []byte("Content-Type: multipart/mixed\r\nContent-Disposition: attachment; filename=all.bin\r\n\r\nhello\r\n"),
			[]string{"all.bin 7 [multipart-without-boundary]", "message []"}},
		{"preamble line of 5000 bytes", []byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n" + strings.Repeat("x", 5000) +
			"\r\n--b\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nhi\r\n--b--\r\n"), []string{"a.txt 2 []", "message []"}},
		{"nested too deep", deep(MaxDepth + 2), []string{"message []"}},
		{"multipart header without its blank line", []byte("Content-Type: multipart/mixed; boundary=b\r\n--b\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nhi\r\n--b--\r\n"),
			[]string{"a.txt 2 []", "message [missing-header-separator]"}},
		{"header line without a colon", []byte("Subject: x\r\nnot a header\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nbody"),
			[]string{"message []"}},
		{"parts reusing the parent's boundary", []byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: multipart/alternative; boundary=b\r\n\r\n" +
			"--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: application/pdf; name=a.pdf\r\n\r\n%PDF\r\n--b--\r\n"),
			[]string{"a.pdf 4 []", "message []"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newBytes(tc.eml)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summary(t, m)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLimits: a message beyond MaxParts or MaxHeaderBytes is ErrMalformed.
func TestLimits(t *testing.T) {
	t.Parallel()
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
		want string
	}{
		{"too many parts", many(MaxParts + 1), "more than 10000 MIME parts"},
		{"part header too large", []byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nX-Big: " +
			strings.Repeat("a", 2*MaxHeaderBytes) + "\r\n\r\nbody\r\n--b--\r\n"), "a header block larger than 1024 KiB"},
		{"message header too large", []byte("Subject: " + strings.Repeat("a ", MaxHeaderBytes) + "\r\n\r\nbody"), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newBytes(tc.eml)
			if err == nil {
				t.Fatalf("New succeeded with %d attachments, want an error", m.Len())
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}

// TestLimitsAccept checks that messages just inside the limits are read.
func TestLimitsAccept(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
