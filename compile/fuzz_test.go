package compile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// hostileSeeds are inputs a careless or hostile agent could produce.
var hostileSeeds = []string{
	"",
	" ",
	"null",
	"\xef\xbb\xbf{\"result\": 1}", // a byte-order mark
	"{\"result\": \"\xff\xfe\"}",
	"{\"result\": \"\xed\xa0\x80\"}", // an encoded surrogate
	"{\"result\": \"\\ud800\"}",      // a lone surrogate escape
	"{\"result\"\x00: 1}",
	"{\"res\\u0000ult\": 1}",
	strings.Repeat("[", 100000),
	strings.Repeat("{\"a\":", 5000) + "1" + strings.Repeat("}", 5000),
	`{"result": 1e999999999, "workflow": [{"type": "request", "url": "https://a.example/", "expected_status": 1` + strings.Repeat("0", 400) + `}]}`,
	`{"result": -0.0e-0, "workflow": [{"type": "request", "url": "https://a.example/", "expected_status": 2.01e2}]}`,
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "body": "` + strings.Repeat("${{kobana.now}}", 10000) + `"}]}`,
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "body": "` + strings.Repeat("${{", 10000) + `"}]}`,
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "body": {"` + strings.Repeat("${{secrets.A}}", 300) + `": 1}}]}`,
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/\u0024{{secret.X}}", "label": "\"q\" \u00e9 \n ${{kobana.now}}",
	 "body": {"a": "caf\u00e9 \"x\" \\ \/ \t${{kobana.nope}} \ud83d\ude00 ${{steps.3.response.status}}"}, "headers": {"X": "\u0024\u007b{ }}"}}]}`,
	"{\"result\": 1,\r\n \"workflow\": [{\"type\": \"request\",\r\n\t\"url\": \"https://a.example/\\u00e9${{secret.X}}\"}]}",
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "headers": {"X-A": "\u2028${{secrets.A}}\r\n"}}]}`,
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/${{steps.99999999999999999999.response.status}}"}]}`,
	`{"result": 1, "workflow": [` + strings.Repeat(`{"type": "request", "url": "https://a.example/"},`, 40) + `{}]}`,
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "type": "request", "url": "x"}], "workflow": 2}`,
	`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "form": {"": "${{email.attachments.0}}", "a\u0000": "b"}, "body": 1}]}`,
	`{"result": "unterminated`,
	`{"result": 1} trailing`,
}

// fuzzExamples returns every example document: the valid ones and the
// invalid ones of examples/workflows/invalid (goldens and documents larger
// than the corpus should hold are left out).
func fuzzExamples(t testing.TB) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, pattern := range []string{"../examples/workflows/*.json", "../examples/workflows/invalid/*.json"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, ".diagnostics.json") {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) <= 64<<10 {
				docs = append(docs, b)
			}
		}
	}
	if len(docs) < 10 {
		t.Fatalf("only %d example documents found", len(docs))
	}
	return docs
}

// FuzzCompile checks properties of Compile on any input: it never panics;
// every diagnostic has a known code, a severity, a message and a range
// inside the input whose line and column agree with its byte offset; a
// range said to cover a placeholder starts at its "${{" in the source,
// through escapes; the diagnostics are in order; a Plan exists exactly when there is no error;
// and a valid document compiles again, and re-indented, to an equal Plan.
func FuzzCompile(f *testing.F) {
	for _, doc := range fuzzExamples(f) {
		f.Add(doc)
	}
	for _, s := range hostileSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		plan, ds := Compile(doc, Options{})
		checkDiagnostics(t, doc, ds)
		checkPlaceholderRanges(t, doc, ds)
		if (plan != nil) == ds.HasErrors() {
			t.Fatalf("plan %v with errors %v: %v", plan != nil, ds.HasErrors(), ds)
		}
		if plan == nil {
			return
		}
		again, ds2 := Compile(doc, Options{})
		if diff := cmp.Diff(plan, again); diff != "" {
			t.Fatalf("a second compile differs:\n%s", diff)
		}
		if diff := cmp.Diff(ds, ds2); diff != "" {
			t.Fatalf("a second compile reports differently:\n%s", diff)
		}
		checkReformatted(t, doc, plan, ds)
	})
}

// checkReformatted compiles doc re-indented (same tokens, other
// whitespace): the Plan must be the same but for Result's whitespace, and
// the same codes must be reported.
func checkReformatted(t *testing.T, doc []byte, plan *Plan, ds Diagnostics) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, doc, "\t", " \t "); err != nil {
		t.Fatalf("the document compiles, but encoding/json does not take it as JSON: %v", err)
	}
	plan2, ds2 := Compile(buf.Bytes(), Options{})
	if plan2 == nil {
		t.Fatalf("re-indented, the document no longer compiles: %v", ds2)
	}
	if diff := cmp.Diff(plan, plan2, cmpopts.IgnoreFields(Plan{}, "Result")); diff != "" {
		t.Fatalf("re-indented, the plan differs:\n%s", diff)
	}
	if !bytes.Equal(compact(t, plan.Result), compact(t, plan2.Result)) {
		t.Fatalf("re-indented, the result differs: %s vs %s", plan.Result, plan2.Result)
	}
	codes := func(ds Diagnostics) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Code)
		}
		return out
	}
	if diff := cmp.Diff(codes(ds), codes(ds2)); diff != "" {
		t.Fatalf("re-indented, other diagnostics:\n%s", diff)
	}
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	if raw == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatalf("result %q: %v", raw, err)
	}
	return buf.Bytes()
}

// checkDiagnostics asserts the invariants every diagnostic list must hold.
func checkDiagnostics(t *testing.T, doc []byte, ds Diagnostics) {
	t.Helper()
	prev := 0
	for i, d := range ds {
		if !slices.Contains(allCodes[:], d.Code) {
			t.Fatalf("diagnostic %d: code %q is not in AllCodes", i, d.Code)
		}
		if d.Severity != SeverityError && d.Severity != SeverityWarning {
			t.Fatalf("diagnostic %d: severity %v", i, d.Severity)
		}
		if d.Message == "" {
			t.Fatalf("diagnostic %d (%s): no message", i, d.Code)
		}
		if d.Pointer != "" && d.Pointer[0] != '/' {
			t.Fatalf("diagnostic %d (%s): pointer %q", i, d.Code, d.Pointer)
		}
		s, e := d.Range.Start, d.Range.End
		if s.Byte < 0 || s.Byte > e.Byte || e.Byte > len(doc) {
			t.Fatalf("diagnostic %d (%s): range %d–%d outside the %d-byte input", i, d.Code, s.Byte, e.Byte, len(doc))
		}
		for _, p := range []Pos{s, e} {
			if want := posAt(doc, p.Byte); p != want {
				t.Fatalf("diagnostic %d (%s): position %+v, but offset %d is %+v", i, d.Code, p, p.Byte, want)
			}
		}
		if s.Byte < prev {
			t.Fatalf("diagnostic %d (%s) at %d comes after one at %d", i, d.Code, s.Byte, prev)
		}
		prev = s.Byte
	}
}

// wholePlaceholderCodes are the codes whose range is a whole placeholder,
// from its "${{".
var wholePlaceholderCodes = []string{
	CodeUnknownNamespace, CodeSecretsReference, CodeKobanaReference, CodeUnknownKobanaKey,
	CodeStepsReference, CodeAttachmentsReference, CodeIndexOutOfRange, CodeForwardReference,
	CodeNotAllowed, CodePlaceholderEmpty, CodePlaceholderUnterminated,
}

// checkPlaceholderRanges checks that a range said to cover a placeholder
// does, in the source: read as the inside of a JSON string (escapes and
// all), it starts with "${{". This holds the mapping of decoded offsets back
// through escapes to account.
func checkPlaceholderRanges(t *testing.T, doc []byte, ds Diagnostics) {
	t.Helper()
	for i, d := range ds {
		if !slices.Contains(wholePlaceholderCodes, d.Code) {
			continue
		}
		src := doc[d.Range.Start.Byte:d.Range.End.Byte]
		var text string
		if err := json.Unmarshal([]byte(`"`+string(src)+`"`), &text); err != nil {
			t.Fatalf("diagnostic %d (%s): range %q is not the inside of a JSON string: %v", i, d.Code, src, err)
		}
		if !strings.HasPrefix(text, "${{") {
			t.Fatalf("diagnostic %d (%s): range %q (%q decoded) does not start at a placeholder", i, d.Code, src, text)
		}
	}
}

// posAt computes the line and column of a byte offset the slow way.
func posAt(doc []byte, off int) Pos {
	before := doc[:off]
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return Pos{Line: 1 + bytes.Count(before, []byte("\n")), Column: 1 + utf8.RuneCount(before[lineStart:]), Byte: off}
}

// TestFuzzSeedsHostile checks that every hostile input is answered with
// well-formed diagnostics, and that input encoding/json rejects never passes
// without one.
func TestFuzzSeedsHostile(t *testing.T) {
	t.Parallel()
	for _, s := range hostileSeeds {
		_, ds := Compile([]byte(s), Options{})
		checkDiagnostics(t, []byte(s), ds)
		if len(s) > 0 && len(ds) == 0 && !json.Valid([]byte(s)) {
			t.Errorf("%.60q: not JSON, yet no diagnostic", s)
		}
	}
}

// TestDocumentSizeLimit checks the limit on a real document: one byte over
// 1 MiB is refused with a single diagnostic, exactly 1 MiB compiles.
func TestDocumentSizeLimit(t *testing.T) {
	t.Parallel()
	build := func(size int) []byte {
		head := `{"result": {"text": "`
		tail := `"}, "workflow": [{"type": "request", "url": "https://a.example/"}]}`
		return []byte(head + strings.Repeat("a", size-len(head)-len(tail)) + tail)
	}
	atLimit := build(MaxDocumentSize)
	if plan, ds := Compile(atLimit, Options{}); plan == nil || len(ds) != 0 {
		t.Errorf("a %d-byte document: %v", len(atLimit), ds)
	}
	over := build(MaxDocumentSize + 1)
	plan, ds := Compile(over, Options{})
	if plan != nil || len(ds) != 1 || ds[0].Code != CodeTooLarge || !strings.Contains(ds[0].Message, "1048577 bytes") {
		t.Fatalf("a %d-byte document: %v", len(over), ds)
	}
	checkDiagnostics(t, over, ds)
}

// TestManyPlaceholders checks that 10 000 placeholders in one string end in
// a bounded list of diagnostics at the right place.
func TestManyPlaceholders(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("${{kobana.now}}", 10000)
	doc := []byte(`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "body": "` + body + `"}]}`)
	plan, ds := Compile(doc, Options{})
	if plan != nil || len(ds) != 1 || ds[0].Code != CodeTooManyPlaceholders {
		t.Fatalf("%d diagnostics: %.300v", len(ds), ds)
	}
	checkDiagnostics(t, doc, ds)
}

// TestEmptyURLIsAnError: found by FuzzSchemaAcceptsWhatCompiles
// (compile/lint). An empty url is not an absolute http(s) URL and not built
// of placeholders, so it must not compile.
func TestEmptyURLIsAnError(t *testing.T) {
	t.Parallel()
	plan, ds := Compile([]byte(`{"result": 1, "workflow": [{"type": "request", "url": ""}]}`), Options{})
	if plan != nil || len(ds) != 1 || ds[0].Code != CodeURL || ds[0].Pointer != "/workflow/0/url" {
		t.Errorf("an empty url: plan %v, diagnostics %v; want one url-invalid error", plan != nil, ds)
	}
}
