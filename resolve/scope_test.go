package resolve_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/resolve/resolvetest"
	"github.com/kobana/workflow/runrecord"
)

func ref(t *testing.T, s string) *lang.Ref {
	t.Helper()
	tpl, err := lang.Parse("${{" + s + "}}")
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return tpl.WholeRef()
}

func jsonResponse(body string) *resolve.Response {
	return &resolve.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Location": {"/a/1"}, "X-Multi": {"a", "b"}}, Body: []byte(body)}
}

func newScope() *resolve.Scope {
	s := &resolve.Scope{
		Secrets: resolve.SecretMap{"TOKEN": "s3cr3t-value"},
		Facts:   resolve.FactMap{"email_id": "em_42", "env": "sandbox", "workspace_slug": ""},
		Attachments: func() (resolve.Attachments, error) {
			return &resolvetest.Attachments{Files: []resolvetest.File{{Filename: "nota.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4 x")}}}, nil
		},
	}
	s.Begin(0, time.Date(2026, 11, 30, 12, 1, 2, 345678000, time.FixedZone("BRT", -3*3600)))
	s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: jsonResponse(`{"data":{"id":"pay_1","n":12.50,"ok":true,"nil":null,"items":[{"id":"i0"},{"id":"i1"}],"obj":{"a":[1,2]},"__proto__":{"x":"own"}}}`)})
	s.Record(1, &resolve.Result{State: runrecord.Failed, Response: jsonResponse(`{}`)})
	s.Record(2, &resolve.Result{State: runrecord.Skipped})
	s.Record(3, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<p>hi</p>")}})
	s.Record(4, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Truncated: true, Limit: 10 << 20}})
	s.Record(5, &resolve.Result{State: runrecord.Succeeded, Response: &resolve.Response{Status: 200, Header: http.Header{"Content-Type": {"application/problem+json"}}, Body: []byte(`{"a":`)}})
	s.Begin(6, time.Date(2026, 11, 30, 12, 1, 2, 345678000, time.FixedZone("BRT", -3*3600)))
	return s
}

func TestResolveValues(t *testing.T) {
	t.Parallel()
	s := newScope()
	for in, want := range map[string]string{
		"secrets.TOKEN":                          "s3cr3t-value",
		"kobana.email_id":                        "em_42",
		"kobana.now":                             "2026-11-30T15:01:02.345Z",
		"steps.0.response.status":                "201",
		"steps.0.response.headers.location":      "/a/1",
		"steps.0.response.headers.x-multi":       "a, b",
		"steps.0.response.body.data.id":          "pay_1",
		"steps.0.response.body.data.n":           "12.50",
		"steps.0.response.body.data.ok":          "true",
		"steps.0.response.body.data.items.1.id":  "i1",
		"steps.0.response.body.data.obj":         `{"a":[1,2]}`,
		"steps.0.response.body.data.obj.a":       `[1,2]`,
		"steps.0.response.body.data.__proto__.x": "own",
		"steps.3.response.body":                  "<p>hi</p>",
		"email.attachments.0.filename":           "nota.pdf",
		"email.attachments.0.content_type":       "application/pdf",
		"email.attachments.0.size":               "10",
	} {
		v, err := s.Resolve(ref(t, in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if v.Text != want {
			t.Errorf("%s = %q, want %q", in, v.Text, want)
		}
	}
	if v, _ := s.Resolve(ref(t, "secrets.TOKEN")); v.Kind != resolve.Secret {
		t.Errorf("secret kind %v", v.Kind)
	}
	if v, _ := s.Resolve(ref(t, "email.attachments.0")); v.Kind != resolve.File || v.Attachment.Size != 10 {
		t.Errorf("attachment: %+v", v)
	}
	if v, _ := s.Resolve(ref(t, "email.attachments.0.base64")); v.Kind != resolve.Base64 {
		t.Errorf("base64: %+v", v)
	}
}

func TestResolveFailures(t *testing.T) {
	t.Parallel()
	s := newScope()
	for in, want := range map[string]struct {
		reason runrecord.Reason
		msg    string
	}{
		"secrets.NOPE":                            {runrecord.ReasonMissingSecret, `no secret "NOPE"`},
		"kobana.workspace_slug":                   {runrecord.ReasonUndefinedFact, "has no value"},
		"kobana.inbox_id":                         {runrecord.ReasonUndefinedFact, "has no value"},
		"steps.7.response.status":                 {runrecord.ReasonForward, "forward reference"},
		"steps.6.response.status":                 {runrecord.ReasonForward, "forward reference"},
		"steps.0.response.body.data.nil":          {runrecord.ReasonNullValue, "null"},
		"steps.0.response.body.data.missing.x":    {runrecord.ReasonMissingPath, `has no "missing": body.data is an object with "id"`},
		"steps.0.response.body.data.items.2":      {runrecord.ReasonMissingPath, `has no "2": body.data.items is an array of 2`},
		"steps.0.response.body.data.items.length": {runrecord.ReasonMissingPath, `has no "length"`},
		"steps.0.response.body.data.constructor":  {runrecord.ReasonMissingPath, `has no "constructor"`},
		"steps.0.response.body.data.id.length":    {runrecord.ReasonMissingPath, `body.data.id is a string`},
		"steps.0.response.headers.etag":           {runrecord.ReasonMissingHeader, `no header "etag"`},
		"steps.3.response.body.p":                 {runrecord.ReasonNotJSON, "not JSON (content type text/html)"},
		"steps.4.response.body.a":                 {runrecord.ReasonNotCaptured, "capture limit (10 MiB)"},
		"steps.4.response.body":                   {runrecord.ReasonNotCaptured, "capture limit"},
		"steps.5.response.body.a":                 {runrecord.ReasonNotJSON, "does not parse"},
		"email.attachments.3":                     {runrecord.ReasonMissingAttachment, "email has 1 attachment; attachment 3 does not exist"},
	} {
		_, err := s.Resolve(ref(t, in))
		var re *resolve.RefError
		if !errors.As(err, &re) {
			t.Errorf("%s: got %v, want a RefError", in, err)
			continue
		}
		if re.Reason != want.reason || !strings.Contains(re.Error(), want.msg) || re.Ref != in {
			t.Errorf("%s: got reason %s %q, want %s ~%q", in, re.Reason, re.Error(), want.reason, want.msg)
		}
	}
}

func TestSkipOnFailedDependency(t *testing.T) {
	t.Parallel()
	s := newScope()
	for in, state := range map[string]runrecord.State{"steps.1.response.status": runrecord.Failed, "steps.2.response.body": runrecord.Skipped} {
		_, err := s.Resolve(ref(t, in))
		var se *resolve.SkipError
		if !errors.As(err, &se) || se.State != state {
			t.Errorf("%s: %v", in, err)
		}
	}
	var se *resolve.SkipError
	if err := s.Check([]int{0, 2}); !errors.As(err, &se) || se.Step != 2 || !strings.Contains(err.Error(), "step 2, which was skipped") {
		t.Errorf("Check: %v", err)
	}
	if err := s.Check([]int{0, 3}); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestEmailUnreadable(t *testing.T) {
	t.Parallel()
	opened := 0
	s := &resolve.Scope{Attachments: func() (resolve.Attachments, error) {
		opened++
		return nil, eml.ErrUnreadable
	}}
	for i := 0; i < 2; i++ {
		_, err := s.Resolve(ref(t, "email.attachments.0.filename"))
		var re *resolve.RefError
		if !errors.As(err, &re) || re.Reason != runrecord.ReasonEmailUnreadable || !errors.Is(err, eml.ErrUnreadable) {
			t.Fatalf("got %v", err)
		}
	}
	if opened != 1 {
		t.Errorf("opened %d times, want once", opened)
	}
	var nilScope resolve.Scope
	if _, err := nilScope.Resolve(ref(t, "email.attachments.0")); !errors.Is(err, eml.ErrUnreadable) {
		t.Errorf("no e-mail: %v", err)
	}
	purged := &resolve.Scope{Attachments: resolve.EMLFile(filepath.Join(t.TempDir(), "purged.eml"))}
	if _, err := purged.Resolve(ref(t, "email.attachments.0")); !errors.Is(err, eml.ErrUnreadable) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("purged e-mail: %v", err)
	}
	if err := purged.Close(); err != nil {
		t.Errorf("Close of a scope whose e-mail could not be opened: %v", err)
	}
}

// TestEmailGoneBeforeSending: once the run's snapshot of the e-mail can no
// longer be read, references that would send its bytes fail before anything
// is sent; its metadata, taken when the run started, still resolves.
func TestEmailGoneBeforeSending(t *testing.T) {
	t.Parallel()
	atts := &resolvetest.Attachments{Files: []resolvetest.File{{Filename: "nota.pdf", ContentType: "application/pdf", Data: []byte("%PDF")}}}
	s := &resolve.Scope{Attachments: func() (resolve.Attachments, error) { return atts, nil }}
	if _, err := s.Resolve(ref(t, "email.attachments.0")); err != nil {
		t.Fatal(err)
	}
	atts.Gone = fmt.Errorf("%w: the file was truncated", eml.ErrChanged)
	for _, r := range []string{"email.attachments.0", "email.attachments.0.base64"} {
		_, err := s.Resolve(ref(t, r))
		var re *resolve.RefError
		if !errors.As(err, &re) || re.Reason != runrecord.ReasonEmailUnreadable || !errors.Is(err, eml.ErrChanged) ||
			!strings.Contains(err.Error(), "attachment 0 is not sent") {
			t.Fatalf("%s: %v, want EmailUnreadable wrapping ErrChanged", r, err)
		}
	}
	if v, err := s.Resolve(ref(t, "email.attachments.0.filename")); err != nil || v.Text != "nota.pdf" {
		t.Fatalf("filename: %+v, %v", v, err)
	}
	if atts.Opens != 0 {
		t.Errorf("%d streams opened", atts.Opens)
	}
}

func TestSecretSourceFailure(t *testing.T) {
	t.Parallel()
	s := &resolve.Scope{Secrets: resolvetest.FailingSecrets{}}
	_, err := s.Resolve(ref(t, "secrets.A"))
	var re *resolve.RefError
	if !errors.As(err, &re) || re.Reason != runrecord.ReasonSecretSourceFailed {
		t.Fatalf("got %v", err)
	}
}

func TestBodyParsedOnce(t *testing.T) {
	t.Parallel()
	s := newScope()
	resp := s.Result(0).Response
	if _, err := s.Resolve(ref(t, "steps.0.response.body.data.id")); err != nil {
		t.Fatal(err)
	}
	resp.Body = []byte(`{"data":{"id":"changed"}}`) // a second parse would see this
	v, err := s.Resolve(ref(t, "steps.0.response.body.data.id"))
	if err != nil || v.Text != "pay_1" {
		t.Fatalf("body parsed again: %q %v", v.Text, err)
	}
}

// TestResponseBodiesReadAsJavaScriptDoes: in a response body, the last of
// duplicate keys wins (as JSON.parse and encoding/json read it) — also when
// an object is JSON-encoded in place, which keeps each key once, where it
// first appeared — and a lone UTF-16 surrogate escape reads as U+FFFD, as
// the run record shows it.
func TestResponseBodiesReadAsJavaScriptDoes(t *testing.T) {
	t.Parallel()
	s := &resolve.Scope{}
	s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: jsonResponse(
		`{"id":"first","id":"last","d":{"id":1},"d":{"id":2,"id":3},"o":{"x":1},"o":5,` +
			`"lone":"x\ud800y","low":"\udc00","pair":"\ud83d\ude00","bad":"\ud800\u0041","k\ud800":"key","esc":"\\ud800",` +
			`"whole":{"a":"\ud800","a":"z"},"order":{"a":1,"b":[{"c":1,"c":2}],"a":3}}`)})
	s.Begin(1, time.Now())
	for in, want := range map[string]string{
		"steps.0.response.body.id":      "last",
		"steps.0.response.body.d.id":    "3",
		"steps.0.response.body.d":       `{"id":3}`,
		"steps.0.response.body.order":   `{"a":3,"b":[{"c":2}]}`,
		"steps.0.response.body.lone":    "x\uFFFDy",
		"steps.0.response.body.low":     "\uFFFD",
		"steps.0.response.body.pair":    "😀",
		"steps.0.response.body.bad":     "\uFFFDA",
		"steps.0.response.body.esc":     `\ud800`,
		"steps.0.response.body.whole":   `{"a":"z"}`,
		"steps.0.response.body.whole.a": "z",
	} {
		v, err := s.Resolve(ref(t, in))
		if err != nil || v.Text != want {
			t.Errorf("%s = %q, %v; want %q", in, v.Text, err, want)
		}
	}
	if _, err := s.Resolve(ref(t, "steps.0.response.body.o.x")); err == nil {
		t.Error("o.x resolved, but the last o is 5")
	}
}

// TestEncodedObjectsAreJavaScriptJSON: an object or array referenced whole
// is JSON that JSON.parse reads back as the response's value — control
// characters escaped (\t, \n… or \u00XX), U+2028 and U+2029 too, < > &
// as they are — with the numbers the response wrote.
func TestEncodedObjectsAreJavaScriptJSON(t *testing.T) {
	t.Parallel()
	s := &resolve.Scope{}
	s.Record(0, &resolve.Result{State: runrecord.Succeeded, Response: jsonResponse(
		`{"o":{"ctl":"a\u0001b","tab":"a\tb\n","q":"\"\\/","bell":"\u0007\u001f","k\u0001":1,"u":"\u2028é<>&"},"a":["\u000b",1.50,true,null]}`)})
	s.Begin(1, time.Now())
	for in, want := range map[string]string{
		"steps.0.response.body.o": `{"ctl":"a\u0001b","tab":"a\tb\n","q":"\"\\/","bell":"\u0007\u001f","k\u0001":1,"u":"\u2028é<>&"}`,
		"steps.0.response.body.a": `["\u000b",1.50,true,null]`,
	} {
		v, err := s.Resolve(ref(t, in))
		if err != nil || v.Text != want || !json.Valid([]byte(v.Text)) {
			t.Errorf("%s = %s, %v; want %s", in, v.Text, err, want)
		}
	}
}

func TestCheckFact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, value string
		ok         bool
	}{
		{"email_id", "em_1", true}, {"env", "sandbox", true}, {"env", "staging", false}, {"env", "Production", false},
		{"app_url", "https://app.kobana.com.br", true}, {"app_url", "app.kobana.com.br", false}, {"app_url", "https://u@h/", false},
		{"inbox_email", "ap@inbox.example", true}, {"inbox_email", "AP <ap@inbox.example>", false},
		{"now", "2026-01-01T00:00:00Z", false}, {"kobana.email_id", "em_1", false}, {"emailid", "em_1", false},
	} {
		if err := resolve.CheckFact(tc.key, tc.value); (err == nil) != tc.ok {
			t.Errorf("CheckFact(%q, %q) = %v, want ok %v", tc.key, tc.value, err, tc.ok)
		}
	}
}
