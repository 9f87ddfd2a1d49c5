package emit_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/resolve/resolvetest"
)

// TestFixtureAttachmentsUploadByteExact sends every attachment of the .eml
// fixtures as a multipart file and as inline base64, and compares what a
// receiver parses back with the bytes the .eml holds.
func TestFixtureAttachmentsUploadByteExact(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("../resolve/eml/testdata/*.eml")
	if len(paths) == 0 {
		t.Fatal("no fixtures")
	}
	checked := 0
	for _, path := range paths {
		msg, err := eml.Open(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for i, a := range msg.Attachments() {
			rc, err := msg.Open(i)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := io.ReadAll(rc)
			rc.Close()
			doc := fmt.Sprintf(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"file":"${{email.attachments.%d}}","name":"${{email.attachments.%d.filename}}"}},{"type":"request","url":"https://a.example/","body":{"b":"${{email.attachments.%d}}"}}]}`, i, i, i)
			p := plan(t, doc)
			s := &resolve.Scope{Attachments: resolve.EMLFile(path)}
			r, err := emit.Render(p.Steps[0], s)
			if err != nil {
				t.Fatalf("%s #%d: %v", path, i, err)
			}
			_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			mr := multipart.NewReader(bytes.NewReader(readAll(t, r)), params["boundary"])
			part, err := mr.NextPart()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(part)
			if !bytes.Equal(got, want) || part.Header.Get("Content-Type") != a.ContentType {
				t.Errorf("%s #%d (%s): multipart bytes or type differ (%d vs %d bytes, %q vs %q)", path, i, a.Filename, len(got), len(want), part.Header.Get("Content-Type"), a.ContentType)
			}
			r, err = emit.Render(p.Steps[1], s)
			if err != nil {
				t.Fatal(err)
			}
			var body struct{ B string }
			if err := json.Unmarshal(readAll(t, r), &body); err != nil {
				t.Fatal(err)
			}
			if body.B != base64.StdEncoding.EncodeToString(want) {
				t.Errorf("%s #%d: inline base64 differs", path, i)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Errorf("only %d attachments checked", checked)
	}
}

// TestLargeAttachmentStreams uploads a 24 MiB attachment generated at test
// time and compares the sha256 of what the receiver parses.
func TestLargeAttachmentStreams(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("large attachment")
	}
	const size = 24 << 20
	path := filepath.Join(t.TempDir(), "large.eml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "From: a@example.com\r\nTo: b@example.com\r\nSubject: large\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"L\"\r\n\r\n--L\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n--L\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"dump.zip\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	sum := sha256.New()
	data := make([]byte, 57*1024)
	rng := rand.NewChaCha8([32]byte{1, 2, 3})
	for left := size; left > 0; {
		n := min(left, len(data))
		rng.Read(data[:n])
		sum.Write(data[:n])
		enc := base64.StdEncoding.EncodeToString(data[:n])
		for len(enc) > 76 {
			w.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		w.WriteString(enc + "\r\n")
		left -= n
	}
	fmt.Fprint(w, "--L--\r\n")
	w.Flush()
	f.Close()

	p := plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"file":"${{email.attachments.0}}"}}]}`)
	r, err := emit.Render(p.Steps[0], &resolve.Scope{Attachments: resolve.EMLFile(path)})
	if err != nil {
		t.Fatal(err)
	}
	if r.ContentLength() <= size {
		t.Fatalf("Content-Length %d", r.ContentLength())
	}
	_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body := r.Body()
	defer body.Close()
	counted := &countingReader{r: body}
	mr := multipart.NewReader(counted, params["boundary"])
	part, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if part.Header.Get("Content-Type") != "application/zip" {
		t.Errorf("inferred type %q", part.Header.Get("Content-Type"))
	}
	got := sha256.New()
	n, err := io.Copy(got, part)
	if err != nil || n != size || !bytes.Equal(got.Sum(nil), sum.Sum(nil)) {
		t.Fatalf("received %d bytes (%v), sha256 match %v", n, err, bytes.Equal(got.Sum(nil), sum.Sum(nil)))
	}
	io.Copy(io.Discard, counted)
	if counted.n != r.ContentLength() {
		t.Errorf("body is %d bytes, Content-Length %d", counted.n, r.ContentLength())
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestStreamFailureStopsShort: an attachment that cannot be read mid-body
// stops the body before its Content-Length, with a *StreamError saying how
// far it got, and the request's GetBody refuses to send it again.
func TestStreamFailureStopsShort(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789"), 10000)
	gone := fmt.Errorf("%w: the file was truncated", eml.ErrChanged)
	for _, doc := range []string{
		`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"file":"${{email.attachments.0}}"}}]}`,
		`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","body":{"f":"${{email.attachments.0.base64}}"}}]}`,
	} {
		atts := &resolvetest.Attachments{Files: []resolvetest.File{{Filename: "a.bin", ContentType: "application/octet-stream", Data: data, Err: gone, FailAt: 70000}}}
		r, err := emit.Render(plan(t, doc).Steps[0], &resolve.Scope{Attachments: func() (resolve.Attachments, error) { return atts, nil }})
		if err != nil {
			t.Fatal(err)
		}
		req, err := r.HTTPRequest(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, req.Body)
		var se *emit.StreamError
		if !errors.As(err, &se) || !errors.Is(err, eml.ErrChanged) || se.Attachment != 0 || se.Sent != n || se.Length != r.ContentLength() {
			t.Fatalf("body error %v (%d bytes read), want a *StreamError wrapping ErrChanged", err, n)
		}
		if n >= r.ContentLength() {
			t.Fatalf("read %d of %d bytes", n, r.ContentLength())
		}
		if _, err := req.GetBody(); !errors.As(err, &se) {
			t.Fatalf("GetBody after the failure: %v, want the *StreamError", err)
		}
	}

	// A stream that ends early without an error is held back too: the
	// bytes of the read that came up short are not returned.
	short := &shortAttachments{resolvetest.Attachments{Files: []resolvetest.File{{Filename: "a.bin", Data: data}}}}
	r, err := emit.Render(plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"file":"${{email.attachments.0}}"}}]}`).Steps[0],
		&resolve.Scope{Attachments: func() (resolve.Attachments, error) { return short, nil }})
	if err != nil {
		t.Fatal(err)
	}
	body := r.Body()
	n, err := io.Copy(io.Discard, body)
	if !errors.Is(err, emit.ErrBodyChanged) || n >= r.ContentLength()-int64(len(data))/2 {
		t.Fatalf("short stream: %d bytes, %v", n, err)
	}
}

// shortAttachments streams only the first half of each attachment, then
// io.EOF.
type shortAttachments struct{ resolvetest.Attachments }

func (s *shortAttachments) Open(i int) (io.ReadCloser, error) {
	rc, err := s.Attachments.Open(i)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(io.LimitReader(rc, int64(len(s.Files[i].Data))/2)), nil
}

// TestDefectsInTheRecord: an attachment read with repairs says so in the
// record, as the defects of a form file and in the description of inline
// base64.
func TestDefectsInTheRecord(t *testing.T) {
	t.Parallel()
	const msg = "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n" +
		"--b\r\nContent-Type: application/pdf; name=a.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0x!LjQ\r\n--b--\r\n"
	m, err := eml.New(strings.NewReader(msg), int64(len(msg)))
	if err != nil {
		t.Fatal(err)
	}
	s := &resolve.Scope{Attachments: func() (resolve.Attachments, error) { return m, nil }}
	p := plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"file":"${{email.attachments.0}}"}},{"type":"request","url":"https://a.example/","body":{"f":"${{email.attachments.0.base64}}"}}]}`)
	r, err := emit.Render(p.Steps[0], s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"file":{"attachment":0,"filename":"a.pdf","content_type":"application/pdf","size":8,"defects":[{"code":"base64-invalid-characters","message":"characters outside the base64 alphabet were skipped"},{"code":"base64-missing-padding","message":"the base64 data end without their padding; the last group was decoded as far as it goes"}]}}`
	if string(r.Record.Form) != want {
		t.Errorf("form record\n got %s\nwant %s", r.Record.Form, want)
	}
	r, err = emit.Render(p.Steps[1], s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"f":"[attachment 0: a.pdf, application/pdf, 8 bytes; repaired: base64-invalid-characters, base64-missing-padding]"}`; string(r.Record.Body) != want {
		t.Errorf("body record\n got %s\nwant %s", r.Record.Body, want)
	}
}
