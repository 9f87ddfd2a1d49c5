package emit_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/resolvetest"
	"github.com/kobana/workflow/runrecord"
)

var pdf = append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0, 1, 2, 0xff, '\r', '\n', '"'}, 5000)...)

func plan(t testing.TB, doc string) *compile.Plan {
	t.Helper()
	p, ds := compile.Compile([]byte(doc), compile.Options{})
	if p == nil {
		t.Fatalf("compile: %v", ds)
	}
	return p
}

func scope(atts *resolvetest.Attachments) *resolve.Scope {
	s := &resolve.Scope{
		Secrets: resolve.SecretMap{"FINANCE_TOKEN": "tok-123", "SLACK_WEBHOOK_URL": "https://hooks.example.com/T0/B0/xyz", "FINANCE_API_URL": "https://finance.example.com/api"},
		Facts:   resolve.FactMap{"email_id": "em_42"},
		Attachments: func() (resolve.Attachments, error) {
			return atts, nil
		},
	}
	s.Redactor = resolve.NewRedactor(s.Secrets)
	return s
}

func pdfAttachments() *resolvetest.Attachments {
	return &resolvetest.Attachments{Files: []resolvetest.File{{Filename: `nota "fiscal".pdf`, ContentType: "application/pdf", Data: pdf}}}
}

func readAll(t testing.TB, r *emit.Request) []byte {
	t.Helper()
	rc := r.Body()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != r.ContentLength() {
		t.Fatalf("body is %d bytes, Content-Length says %d", len(b), r.ContentLength())
	}
	return b
}

func recordJSON(t testing.TB, r *emit.Request) string {
	b, err := json.Marshal(r.Record)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPayableExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../examples/workflows/payable.json")
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, string(doc))
	atts := pdfAttachments()
	s := scope(atts)
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

	// Step 0: JSON body.
	s.Begin(0, now)
	r0, err := emit.Render(p.Steps[0], s)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(readAll(t, r0)); got != `{"supplier":"ACME","amount":1250.5,"source_email_id":"em_42"}` {
		t.Errorf("step 0 body: %s", got)
	}
	if r0.Method != "POST" || r0.URL.String() != "https://erp.example.com/payables" || r0.Header.Get("Authorization") != "Bearer tok-123" || r0.Header.Get("Content-Type") != "application/json" {
		t.Errorf("step 0: %s %s %v", r0.Method, r0.URL, r0.Header)
	}
	if got := recordJSON(t, r0); got != `{"method":"POST","url":"https://erp.example.com/payables","headers":{"Authorization":"Bearer [redacted secrets.FINANCE_TOKEN]","Content-Type":"application/json"},"body":{"supplier":"ACME","amount":1250.5,"source_email_id":"em_42"}}` {
		t.Errorf("step 0 record: %s", got)
	}
	s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"data":{"id":"pay_9"}}`)}})

	// Step 1: multipart with the attachment as a file.
	s.Begin(1, now)
	r1, err := emit.Render(p.Steps[1], s)
	if err != nil {
		t.Fatal(err)
	}
	if r1.URL.String() != "https://erp.example.com/payables/pay_9/attachments" {
		t.Errorf("step 1 url %s", r1.URL)
	}
	mt, params, err := mime.ParseMediaType(r1.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("content type %q", r1.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(readAll(t, r1)), params["boundary"])
	part, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if part.FormName() != "file" || part.FileName() != `nota "fiscal".pdf` || part.Header.Get("Content-Type") != "application/pdf" {
		t.Errorf("file part: %v %q", part.Header, part.FileName())
	}
	got, _ := io.ReadAll(part)
	if !bytes.Equal(got, pdf) {
		t.Errorf("file bytes differ: %d vs %d", len(got), len(pdf))
	}
	part, err = mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := io.ReadAll(part); part.FormName() != "kobana_email_id" || string(v) != "em_42" {
		t.Errorf("text part %s=%s", part.FormName(), v)
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("extra part: %v", err)
	}
	rec := recordJSON(t, r1)
	if !strings.Contains(rec, `"form":{"file":{"attachment":0,"filename":"nota \"fiscal\".pdf","content_type":"application/pdf","size":35009},"kobana_email_id":"em_42"}`) {
		t.Errorf("step 1 record: %s", rec)
	}
	if strings.Contains(rec, "%PDF") || strings.Contains(rec, "tok-123") {
		t.Errorf("record leaks: %s", rec)
	}
	s.Record(1, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200}})

	// Step 2: the whole URL is a secret.
	s.Begin(2, now)
	r2, err := emit.Render(p.Steps[2], s)
	if err != nil {
		t.Fatal(err)
	}
	if r2.URL.String() != "https://hooks.example.com/T0/B0/xyz" {
		t.Errorf("step 2 url %s", r2.URL)
	}
	if got := string(readAll(t, r2)); got != `{"text":"Cuenta pay_9 creada el 2026-11-30T10:00:00.000Z"}` {
		t.Errorf("step 2 body %s", got)
	}
	if rec := recordJSON(t, r2); !strings.Contains(rec, `"url":"[redacted secrets.SLACK_WEBHOOK_URL]"`) || strings.Contains(rec, "hooks.example.com") {
		t.Errorf("step 2 record: %s", rec)
	}
}

func TestAttachmentBase64Example(t *testing.T) {
	t.Parallel()
	doc, _ := os.ReadFile("../examples/workflows/attachment-base64.json")
	p := plan(t, string(doc))
	s := scope(pdfAttachments())
	r, err := emit.Render(p.Steps[0], s)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(readAll(t, r), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"filename": `nota "fiscal".pdf`, "content_type": "application/pdf", "content": base64.StdEncoding.EncodeToString(pdf)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got): %s", diff)
	}
	rec := recordJSON(t, r)
	if !strings.Contains(rec, `"content":"[attachment 0: nota \"fiscal\".pdf, application/pdf, 35009 bytes]"`) || strings.Contains(rec, got["content"][:40]) {
		t.Errorf("record: %s", rec)
	}
}

func TestAttachmentMultipartExample(t *testing.T) {
	t.Parallel()
	doc, _ := os.ReadFile("../examples/workflows/attachment-multipart.json")
	p := plan(t, string(doc))
	r, err := emit.Render(p.Steps[0], scope(pdfAttachments()))
	if err != nil {
		t.Fatal(err)
	}
	if r.URL.String() != "https://finance.example.com/api/attachments" {
		t.Errorf("url %s", r.URL)
	}
	req, err := r.HTTPRequest(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != r.ContentLength() || req.ContentLength <= int64(len(pdf)) {
		t.Errorf("ContentLength %d", req.ContentLength)
	}
	if err := req.ParseMultipartForm(1 << 20); err != nil {
		t.Fatal(err)
	}
	if req.FormValue("title") != `nota "fiscal".pdf` {
		t.Errorf("title %q", req.FormValue("title"))
	}
	f, fh, err := req.FormFile("file")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	if !bytes.Equal(b, pdf) || fh.Size != int64(len(pdf)) {
		t.Errorf("file differs")
	}
	// GetBody replays the same bytes.
	rc, _ := req.GetBody()
	again, _ := io.ReadAll(rc)
	if int64(len(again)) != r.ContentLength() {
		t.Errorf("replay %d bytes", len(again))
	}
	if rec := recordJSON(t, r); !strings.Contains(rec, `"url":"[redacted secrets.FINANCE_API_URL]/attachments"`) {
		t.Errorf("record %s", rec)
	}
}

func TestTextBodyAndInlineBase64(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/x?k=${{secrets.FINANCE_TOKEN}}","headers":{"X-Small":"${{email.attachments.1}}","Content-Type":"text/plain"},"body":"tok-123 and ${{email.attachments.1.base64}} and ${{kobana.email_id}}"}]}`)
	atts := &resolvetest.Attachments{Files: []resolvetest.File{{Filename: "a.pdf", Data: pdf}, {Filename: "s.txt", ContentType: "text/plain", Data: []byte("hi\n")}}}
	r, err := emit.Render(p.Steps[0], scope(atts))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(readAll(t, r)); got != "tok-123 and aGkK and em_42" {
		t.Errorf("body %q", got)
	}
	if r.Header.Get("X-Small") != "aGkK" || r.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("headers %v", r.Header)
	}
	rec := recordJSON(t, r)
	for _, leak := range []string{"tok-123", "aGkK"} {
		if strings.Contains(rec, leak) {
			t.Errorf("record leaks %q: %s", leak, rec)
		}
	}
	if !strings.Contains(rec, `"body":"[redacted secrets.FINANCE_TOKEN] and [attachment 1: s.txt, text/plain, 3 bytes] and em_42"`) || !strings.Contains(rec, `"url":"https://a.example/x?k=[redacted secrets.FINANCE_TOKEN]"`) {
		t.Errorf("record %s", rec)
	}
}

func TestFailBeforeSend(t *testing.T) {
	t.Parallel()
	atts := pdfAttachments()
	atts.Files = append(atts.Files, resolvetest.File{Filename: "big.bin", Data: make([]byte, emit.MaxInlineAttachment+1)})
	tests := []struct {
		doc  string
		want string
	}{
		{`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","headers":{"X-A":"${{secrets.NL}}"}}]}`, "carriage return (CR)"},
		{`{"result":1,"workflow":[{"type":"request","url":"https://a.example/${{secrets.NL}}"}]}`, "carriage return (CR)"},
		{`{"result":1,"workflow":[{"type":"request","url":"${{secrets.FTP}}"}]}`, "http or https"},
		{`{"result":1,"workflow":[{"type":"request","url":"${{secrets.NOHOST}}"}]}`, "no host"},
		{`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","headers":{"X-F":"${{email.attachments.1}}"}}]}`, "too large to inline"},
		{`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","body":"${{secrets.MISSING}}"}]}`, `no secret "MISSING"`},
		{`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"f":"${{email.attachments.4}}"}}]}`, "email has 2 attachments; attachment 4 does not exist"},
	}
	for _, tc := range tests {
		p := plan(t, tc.doc)
		s := scope(atts)
		s.Secrets = resolve.SecretMap{"NL": "a\r\nX-Injected: 1", "FTP": "ftp://a.example/", "NOHOST": "https:///x"}
		_, err := emit.Render(p.Steps[0], s)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !emit.IsFailBeforeSend(err) {
			t.Errorf("%s: got %v, want ~%q", tc.doc, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "X-Injected") {
			t.Errorf("error message leaks the secret: %v", err)
		}
	}
}

func TestSkip(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/"},{"type":"request","url":"https://a.example/${{steps.0.response.status}}"}]}`)
	s := scope(nil)
	s.Record(0, &resolve.Result{State: runrecord.Failed})
	s.Begin(1, time.Now())
	_, err := emit.Render(p.Steps[1], s)
	var se *resolve.SkipError
	if !errors.As(err, &se) || emit.IsFailBeforeSend(err) {
		t.Fatalf("got %v", err)
	}
}

func TestJSONEscapingOfSubstitutedValues(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/"},{"type":"request","url":"https://a.example/","body":{"k\"ey":["${{steps.0.response.body}}", "\u00e9\n", 1e3, null, true, {}, []],"v":"${{steps.0.response.body}}"}}]}`)
	s := scope(nil)
	s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200, Body: []byte("quote\" back\\ nl\n tab\t ctl\x01 bad\xff <&> \u2028")}})
	s.Begin(1, time.Now())
	r, err := emit.Render(p.Steps[1], s)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, r)
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if arr := got["k\"ey"].([]any); len(arr) != 7 || arr[1] != "\u00e9\n" || arr[2] != 1000.0 || arr[3] != nil || arr[4] != true {
		t.Errorf("array %#v", arr)
	}
	if got["v"] != "quote\" back\\ nl\n tab\t ctl\x01 bad\ufffd <&> \u2028" {
		t.Errorf("round trip %q", got["v"])
	}
	if !json.Valid([]byte(r.Record.Body)) {
		t.Errorf("record body invalid: %s", r.Record.Body)
	}
}

func TestSecretEchoedInResponseIsRedactedInRecord(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/"},{"type":"request","url":"https://a.example/","body":{"echo":"${{steps.0.response.body.v}}"}}]}`)
	s := scope(nil)
	s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"v":"you sent tok-123"}`)}})
	s.Begin(1, time.Now())
	r, err := emit.Render(p.Steps[1], s)
	if err != nil {
		t.Fatal(err)
	}
	if rec := recordJSON(t, r); strings.Contains(rec, "tok-123") || !strings.Contains(rec, "you sent [redacted secrets.FINANCE_TOKEN]") {
		t.Errorf("record %s", rec)
	}
}

type shrinking struct{ resolvetest.Attachments }

func (s *shrinking) Open(i int) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(s.Files[i].Data[:10])), nil
}

func TestAttachmentThatShrinksAbortsTheBody(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"f":"${{email.attachments.0}}"}}]}`)
	atts := &shrinking{*pdfAttachments()}
	s := scope(nil)
	s.Attachments = func() (resolve.Attachments, error) { return atts, nil }
	r, err := emit.Render(p.Steps[0], s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(r.Body())
	if !errors.Is(err, emit.ErrBodyChanged) {
		t.Fatalf("got %v", err)
	}
}

func TestNoBody(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"result":1,"workflow":[{"type":"request","method":"GET","url":"https://a.example/"}]}`)
	r, err := emit.Render(p.Steps[0], scope(nil))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := r.HTTPRequest(t.Context())
	if req.Body != nil || req.ContentLength != 0 || r.Record.Body != nil {
		t.Errorf("GET has a body")
	}
	if n, _ := io.Copy(io.Discard, r.Body()); n != 0 {
		t.Error("body")
	}
}

// TestRecordSecrets: a request carries the secrets its placeholders
// substitute, wherever they stand, and a secret value echoed back by an
// earlier response and forwarded; not the secrets of other steps.
func TestRecordSecrets(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"result": 1, "workflow": [
  {"type": "request", "url": "https://a.example/x"},
  {"type": "request", "url": "https://b.example/${{secrets.FINANCE_API_URL}}", "headers": {"X-T": "Bearer ${{secrets.FINANCE_TOKEN}}"}},
  {"type": "request", "url": "https://c.example/x", "body": {"echo": "${{steps.0.response.body.token}}"}},
  {"type": "request", "url": "https://c.example/x", "form": {"f": "${{secrets.SLACK_WEBHOOK_URL}}"}},
  {"type": "request", "url": "https://c.example/x", "body": "no secret here"}
]}`)
	s := scope(pdfAttachments())
	s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"token": "tok-123"}`)}})
	for i, want := range [][]string{1: {"FINANCE_API_URL", "FINANCE_TOKEN"}, 2: {"FINANCE_TOKEN"}, 3: {"SLACK_WEBHOOK_URL"}, 4: nil} {
		if i == 0 {
			continue
		}
		s.Begin(i, time.Now())
		req, err := emit.Render(p.Steps[i], s)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := req.Secrets(); !cmp.Equal(got, want) {
			t.Errorf("step %d carries %v, want %v", i, got, want)
		}
	}
}
