package emit_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/resolvetest"
	"github.com/kobana/workflow/runrecord"
)

const marker = "\x00ATTACHMENT-MARKER-7f3a\x00"

// FuzzEmit renders every step of any valid workflow with a fuzzed secret and
// a fuzzed earlier response: the live body always has the announced length
// and parses as its declared content type, and the record holds no
// attachment byte and no secret value, whether the step substituted it,
// a receiver echoed it back into a later step, or the workflow wrote it —
// as resolve's package documentation defines it: a value of at least
// resolve.MinSubstring bytes nowhere (as written or percent-encoded), a
// shorter one nowhere as a whole word (the one-character secret "C" is not
// redacted out of "Content-Type", text the platform wrote).
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
	// The audit's counterexample: a one-character secret no step uses, and
	// a record that holds Content-Type.
	f.Add(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","body":{"a":1}}]}`, "C", []byte("x"))
	// Short secrets substituted and echoed back as whole words.
	f.Add(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/${{secrets.S}}","headers":{"X":"${{secrets.S}}"}},{"type":"request","url":"https://a.example/","body":{"e":"${{steps.0.response.body.e}}","n":"C"}}]}`, "C", []byte(`{"e":"C"}`))
	f.Add(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/"},{"type":"request","url":"https://a.example/?q=${{steps.0.response.body.e}}","body":"${{steps.0.response.body}}"}]}`, "my secret", []byte(`{"e":"my%20secret","f":"my+secret"}`))
	f.Fuzz(func(t *testing.T, doc, secret string, respBody []byte) {
		p, _ := compile.Compile([]byte(doc), compile.Options{})
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
				s.Record(i, &resolve.Result{State: runrecord.Failed})
				continue
			}
			checkLive(t, r)
			checkRecord(t, r, secrets, atts, s.Redactor)
			s.Record(i, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: respBody}})
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

func checkRecord(t *testing.T, r *emit.Request, secrets resolve.SecretMap, atts *resolvetest.Attachments, red *resolve.Redactor) {
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
	// The markers the record may hold, cut out without joining what stood
	// around them.
	var markers []string
	for key := range secrets {
		markers = append(markers, resolve.Placeholder(key))
	}
	for i, f := range atts.Files {
		markers = append(markers, fmt.Sprintf("[attachment %d: %s, %s, %d bytes]", i, red.String(f.Filename), red.String(f.ContentType), len(f.Data)))
	}
	for _, text := range texts {
		clean := text
		for _, m := range markers {
			clean = strings.ReplaceAll(clean, m, "\u0100")
		}
		for key, val := range secrets {
			if val == "" || strings.ContainsAny(val, "[]\u0100") {
				continue
			}
			if len(val) < resolve.MinSubstring {
				if wholeWord(clean, val) {
					t.Fatalf("record holds the short secret %s (%q) as a word: %s", key, val, raw)
				}
				continue
			}
			for _, form := range []string{val, url.PathEscape(val), url.QueryEscape(val)} {
				if strings.Contains(clean, form) {
					t.Fatalf("record holds the value of secret %s (%q) as %q: %s", key, val, form, raw)
				}
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

// wholeWord reports an occurrence of v in s with no letter, digit or
// non-ASCII character right before or after it.
func wholeWord(s, v string) bool {
	word := func(c byte) bool {
		return c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], v)
		if j < 0 {
			return false
		}
		at := i + j
		if (at == 0 || !word(s[at-1])) && (at+len(v) == len(s) || !word(s[at+len(v)])) {
			return true
		}
		i = at + 1
	}
}
