package emit_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/valyala/fasttemplate"

	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

// The 107-byte URL of the speed reference, with three placeholders.
const benchURL = "https://erp.example.com/p/${{steps.0.response.body.data.id}}/nt?w=${{kobana.workspace_id}}&t=${{secrets.T}}"

var benchValues = map[string]string{
	"steps.0.response.body.data.id": "pay_01HZX3Q9",
	"kobana.workspace_id":           "wsp_42",
	"secrets.T":                     "tok-abcdef",
}

// BenchmarkRenderURL renders a step whose URL holds three placeholders (a
// value from an earlier response, a run fact and a secret) the way a run
// does — emit.Render against a resolve.Scope: resolution, the URL made
// valid and parsed, its redacted record — next to fasttemplate's
// ExecuteFuncString and text/template substituting the same values into
// the same text (which do only the substitution).
func BenchmarkRenderURL(b *testing.B) {
	if len(benchURL) != 107 {
		b.Fatalf("URL is %d bytes", len(benchURL))
	}
	want := "https://erp.example.com/p/pay_01HZX3Q9/nt?w=wsp_42&t=tok-abcdef"
	b.Run("Render", func(b *testing.B) {
		p := plan(b, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/"},{"type":"request","method":"GET","url":"`+benchURL+`"}]}`)
		secrets := resolve.SecretMap{"T": "tok-abcdef"}
		s := &resolve.Scope{Secrets: secrets, Facts: resolve.FactMap{"workspace_id": "wsp_42"}, Redactor: resolve.NewRedactor(secrets)}
		s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 201,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"data":{"id":"pay_01HZX3Q9"}}`)}})
		s.Begin(1, time.Unix(0, 0))
		b.ReportAllocs()
		for b.Loop() {
			r, err := emit.Render(p.Steps[1], s)
			if err != nil || r.URL.String() != want {
				b.Fatal(r.URL, err)
			}
		}
	})
	b.Run("fasttemplate", func(b *testing.B) {
		b.ReportAllocs()
		ft := fasttemplate.New(strings.NewReplacer("${{", "{{").Replace(benchURL), "{{", "}}")
		fn := func(w io.Writer, tag string) (int, error) { return io.WriteString(w, benchValues[tag]) }
		for b.Loop() {
			s := ft.ExecuteFuncString(fn)
			if len(s) != len(want) {
				b.Fatal(s)
			}
		}
	})
	b.Run("text-template", func(b *testing.B) {
		b.ReportAllocs()
		src := benchURL
		for k := range benchValues {
			src = strings.ReplaceAll(src, "${{"+k+"}}", `{{index . "`+k+`"}}`)
		}
		tt := template.Must(template.New("u").Parse(src))
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := tt.Execute(&buf, benchValues); err != nil || buf.Len() != len(want) {
				b.Fatal(buf.String(), err)
			}
		}
	})
}

// encodedPart returns a base64 body part (76-column lines) of size bytes.
func encodedPart(size int) string {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	enc := base64.StdEncoding.EncodeToString(data)
	var lines strings.Builder
	for len(enc) > 76 {
		lines.WriteString(enc[:76])
		lines.WriteString("\r\n")
		enc = enc[76:]
	}
	lines.WriteString(enc + "\r\n")
	return lines.String()
}

// writeEML writes an .eml with one base64 attachment of size bytes.
func writeEML(b *testing.B, size int) string {
	b.Helper()
	var f bytes.Buffer
	f.WriteString("From: a@example.com\r\nTo: b@example.com\r\nSubject: bench\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"BB\"\r\n\r\n")
	f.WriteString("--BB\r\nContent-Type: text/plain\r\n\r\nhello\r\n")
	f.WriteString("--BB\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"big.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	f.WriteString(encodedPart(size))
	f.WriteString("--BB--\r\n")
	path := filepath.Join(b.TempDir(), "big.eml")
	if err := os.WriteFile(path, f.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

type heapMax struct{ max uint64 }

// sampleWriter discards what it is given and samples the live heap every
// 4 MiB written, to show memory does not grow with the attachment.
type sampleWriter struct {
	h       *heapMax
	written int64
	next    int64
}

func (w *sampleWriter) Write(p []byte) (int, error) {
	w.written += int64(len(p))
	if w.written >= w.next {
		w.next += 4 << 20
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.h.max = max(w.h.max, ms.HeapInuse)
	}
	return len(p), nil
}

func benchStream(b *testing.B, doc string) {
	for _, mib := range []int{1, 64} {
		path := writeEML(b, mib<<20)
		msg, err := eml.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		p := plan(b, doc)
		b.Run(fmt.Sprintf("emit/%dMiB", mib), func(b *testing.B) {
			s := &resolve.Scope{Attachments: func() (resolve.Attachments, error) { return msg, nil }}
			b.SetBytes(int64(mib << 20))
			b.ReportAllocs()
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			h := &heapMax{max: base.HeapInuse}
			for b.Loop() {
				r, err := emit.Render(p.Steps[0], s)
				if err != nil {
					b.Fatal(err)
				}
				body := r.Body()
				n, err := io.Copy(&sampleWriter{h: h}, body)
				body.Close()
				if err != nil || n != r.ContentLength() {
					b.Fatal(n, err)
				}
			}
			// Heap in use above what it was before the first render: it must
			// not grow with the attachment's size.
			b.ReportMetric(float64(h.max-base.HeapInuse)/(1<<20), "MiB-heap-growth")
		})
		b.Run(fmt.Sprintf("floor-base64-decode/%dMiB", mib), func(b *testing.B) {
			encoded := []byte(encodedPart(mib << 20))
			b.SetBytes(int64(mib << 20))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, bytes.NewReader(encoded))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamMultipart streams an attachment from an .eml into a
// multipart body read to io.Discard, next to the floor: base64-decoding the
// same part straight to io.Discard.
func BenchmarkStreamMultipart(b *testing.B) {
	benchStream(b, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"file":"${{email.attachments.0}}","title":"x"}}]}`)
}

// BenchmarkStreamJSONBase64 does the same with the attachment inlined as
// base64 in a JSON body.
func BenchmarkStreamJSONBase64(b *testing.B) {
	benchStream(b, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/","body":{"name":"${{email.attachments.0.filename}}","content":"${{email.attachments.0.base64}}"}}]}`)
}
