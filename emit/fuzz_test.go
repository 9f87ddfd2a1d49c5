package emit_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/resolvetest"
)

const marker = "\x00ATTACHMENT-MARKER-7f3a\x00"

// FuzzEmit renders every step of any valid workflow with a fuzzed secret and
// a fuzzed earlier response: the live body always has the announced length
// and parses as its declared content type, and the record never holds the
// secret value or attachment bytes.
func FuzzEmit(f *testing.F) {
	paths, _ := filepath.Glob("../examples/workflows/*.json")
	for _, p := range paths {
		doc, _ := os.ReadFile(p)
		f.Add(string(doc), "tok-123", []byte(`{"data":{"id":"pay_1"}}`))
	}
	f.Add(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/${{secrets.S}}","headers":{"X":"${{secrets.S}}"},"body":"${{secrets.S}} ${{email.attachments.1.base64}}"}]}`, "a\"b\\c", []byte("x"))
	f.Add(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","form":{"${{x}}":"1"}}]}`, "1234", []byte("1234"))
	f.Add(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","body":{"n":1234,"s":"${{secrets.S}}"}}]}`, "1234", []byte("1234"))
	f.Add(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/"},{"type":"request","url":"https://a.example/","form":{"f":"${{email.attachments.0}}","g":"${{steps.0.response.body}}"}}]}`, "secret", []byte("secret\r\n--x"))
	f.Fuzz(func(t *testing.T, doc, secret string, respBody []byte) {
		p, _ := compile.Compile([]byte(doc))
		if p == nil {
			return
		}
		atts := &resolvetest.Attachments{Files: []resolvetest.File{
			{Filename: "nota.pdf", ContentType: "application/pdf", Data: []byte("%PDF" + marker + strings.Repeat("z", 300))},
			{Filename: "s.txt", ContentType: "text/plain", Data: []byte(marker)},
		}}
		secrets := resolve.SecretMap{"S": secret, "FINANCE_TOKEN": "tok-finance-1", "SLACK_WEBHOOK_URL": "https://hooks.example/x", "FINANCE_API_URL": "https://fin.example"}
		s := &resolve.Scope{Secrets: secrets, Facts: resolve.FactMap{"email_id": "em_1"},
			Attachments: func() (resolve.Attachments, error) { return atts, nil }}
		s.Redactor = resolve.NewRedactor(secrets)
		for i, step := range p.Steps {
			s.Begin(i, time.Unix(0, 0))
			r, err := emit.Render(step, s)
			if err != nil {
				s.Record(i, &resolve.Result{State: resolve.StateFailed})
				continue
			}
			checkLive(t, r)
			checkRecord(t, r, secrets, atts)
			s.Record(i, &resolve.Result{State: resolve.StateSucceeded, Response: &resolve.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: respBody}})
		}
	})
}

func checkLive(t *testing.T, r *emit.Request) {
	t.Helper()
	rc := r.Body()
	body, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	if int64(len(body)) != r.ContentLength() {
		t.Fatalf("body %d bytes, Content-Length %d", len(body), r.ContentLength())
	}
	for name, vs := range r.Header {
		for _, v := range vs {
			if strings.ContainsAny(name+v, "\r\n\x00") {
				t.Fatalf("header %q: %q", name, v)
			}
		}
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/json" && r.Record.Body != nil && r.Record.Body[0] != '"':
		if !json.Valid(body) {
			t.Fatalf("invalid JSON body: %q", body)
		}
	case mt == "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("multipart: %v in %q", err, body)
			}
			io.Copy(io.Discard, part)
		}
	}
}

func checkRecord(t *testing.T, r *emit.Request, secrets resolve.SecretMap, atts *resolvetest.Attachments) {
	t.Helper()
	raw, err := json.Marshal(r.Record)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("record is not JSON: %s", raw)
	}
	// Every string and number of the record, and the keys the workflow
	// chose (headers, body, form), but not the record's own field names.
	var texts []string
	var walk func(x any, ownKeys bool)
	walk = func(x any, ownKeys bool) {
		switch x := x.(type) {
		case string:
			texts = append(texts, x)
		case json.Number:
			texts = append(texts, x.String())
		case []any:
			for _, e := range x {
				walk(e, false)
			}
		case map[string]any:
			for k, e := range x {
				if !ownKeys {
					texts = append(texts, k)
				}
				walk(e, false)
			}
		}
	}
	top, _ := v.(map[string]any)
	for k, e := range top {
		if k == "method" {
			continue // one of five fixed words, never the workflow's text
		}
		if k != "form" {
			walk(e, false) // method, url, headers, body
			continue
		}
		for name, fv := range e.(map[string]any) {
			texts = append(texts, name)
			_, isFile := fv.(map[string]any) // {"attachment":…,"filename":…}
			walk(fv, isFile)
		}
	}
	for _, text := range texts {
		for key, val := range secrets {
			// Cut the redactions out, without joining what stood around them.
			clean := text
			for other := range secrets {
				clean = strings.ReplaceAll(clean, resolve.Placeholder(other), "\uffff")
			}
			if val != "" && strings.Contains(clean, val) {
				t.Fatalf("record holds the value of secret %s (%q): %s", key, val, raw)
			}
		}
		if strings.Contains(text, "ATTACHMENT-MARKER") {
			t.Fatalf("record holds attachment bytes: %s", raw)
		}
		for _, f := range atts.Files {
			if strings.Contains(text, base64.StdEncoding.EncodeToString(f.Data)) {
				t.Fatalf("record holds attachment base64: %s", raw)
			}
		}
	}
}
