package lint_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
)

// multiline is a document with several problems on lines with escapes and
// non-ASCII text, so that lines, columns and offsets differ.
const multiline = "{\"result\": {\"nota\": \"caf\u00e9 \\u00e9 \\\"q\\\"\"},\n" +
	" \"workflow\": [{\"type\": \"request\", \"method\": \"post\",\n" +
	"  \"url\": \"https://a.example/\\u00e9/${{secret.T}}\",\n" +
	"  \"headers\": {\"Host\": \"x\", \"Content-Type\": \"text/plain\"}, \"form\": {\"f\": \"${{email.attachments.0}}\"}}],\n" +
	" \"extra\": 1}"

func multilineReports() []lint.Report {
	return []lint.Report{
		lint.Bytes("docs/a b.json", []byte(multiline), lint.Options{}),
		lint.Bytes("clean.json", []byte(`{"result": 1}`), lint.Options{}),
	}
}

func TestWriteJSON(t *testing.T) {
	t.Parallel()
	reports := multilineReports()
	var buf bytes.Buffer
	if err := lint.WriteJSON(&buf, reports); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	ds := reports[0].Diagnostics
	if len(out.Diagnostics) != len(ds) || len(ds) < 4 {
		t.Fatalf("%d diagnostics in the output, %d reported", len(out.Diagnostics), len(ds))
	}
	names := []string{"file", "severity", "code", "message", "pointer", "range"}
	for i, got := range out.Diagnostics {
		d := ds[i]
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		want := append([]string(nil), names...)
		if d.Suggestion != "" {
			want = append(want, "suggestion")
		}
		sort.Strings(keys)
		sort.Strings(want)
		if diff := cmp.Diff(want, keys); diff != "" {
			t.Errorf("diagnostic %d keys (-want +got):\n%s", i, diff)
		}
		// The range is compile's: start and end, each with exactly a line,
		// a column and a byte offset.
		pos := func(end string) compile.Pos {
			rng, _ := got["range"].(map[string]any)
			p, _ := rng[end].(map[string]any)
			if len(rng) != 2 || len(p) != 3 {
				t.Fatalf("diagnostic %d: range %v, want {start, end} of {line, column, offset}", i, got["range"])
			}
			n := func(k string) int {
				v, err := p[k].(json.Number).Int64()
				if err != nil {
					t.Fatalf("diagnostic %d: range.%s.%s: %v", i, end, k, err)
				}
				return int(v)
			}
			return compile.Pos{Line: n("line"), Column: n("column"), Byte: n("offset")}
		}
		start, end := pos("start"), pos("end")
		if got["file"] != "docs/a b.json" || got["code"] != d.Code || got["severity"] != d.Severity.String() ||
			got["message"] != d.Message || got["pointer"] != d.Pointer || start != d.Range.Start || end != d.Range.End {
			t.Errorf("diagnostic %d = %v, want %+v", i, got, d)
		}
		// line/column agree with the byte offset in the document.
		for _, p := range []compile.Pos{start, end} {
			line := 1 + strings.Count(multiline[:p.Byte], "\n")
			col := 1 + utf8.RuneCountInString(multiline[strings.LastIndexByte(multiline[:p.Byte], '\n')+1:p.Byte])
			if line != p.Line || col != p.Column {
				t.Errorf("diagnostic %d at %d:%d, offset %d is %d:%d", i, p.Line, p.Column, p.Byte, line, col)
			}
		}
	}
	// The suggestion is present when the compiler offers one.
	var sugg int
	for _, d := range out.Diagnostics {
		if _, ok := d["suggestion"]; ok {
			sugg++
		}
	}
	if sugg < 2 {
		t.Errorf("%d diagnostics carry a suggestion, want the method's and the namespace's", sugg)
	}

	buf.Reset()
	if err := lint.WriteJSON(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(buf.String()), ""); got != `{"diagnostics":[]}` {
		t.Errorf("no reports: %s", got)
	}
}

// sarifSchema compiles the OASIS SARIF 2.1.0 JSON schema, kept unmodified in
// testdata (from the sarif-spec repository, as published by OASIS).
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validateJSON(t *testing.T, sch *jsonschema.Schema, doc []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

func TestWriteSARIF(t *testing.T) {
	t.Parallel()
	sch := sarifSchema(t)
	reports := multilineReports()
	reports = append(reports, lint.Report{File: "/abs/missing.json", Err: errors.New("open /abs/missing.json: no such file or directory")})
	var buf bytes.Buffer
	if err := lint.WriteSARIF(&buf, reports); err != nil {
		t.Fatal(err)
	}
	if err := validateJSON(t, sch, buf.Bytes()); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, buf.String())
	}
	// The schema check is not vacuous: a level SARIF lacks is refused.
	if bad := bytes.Replace(buf.Bytes(), []byte(`"level": "error"`), []byte(`"level": "fatal"`), 1); validateJSON(t, sch, bad) == nil {
		t.Error("the SARIF schema accepted level \"fatal\"")
	}

	type region struct {
		StartLine, StartColumn, EndLine, EndColumn     *int
		CharOffset, CharLength, ByteOffset, ByteLength *int
	}
	var log struct {
		Schema  string `json:"$schema"`
		Version string
		Runs    []struct {
			ColumnKind string
			Tool       struct {
				Driver struct {
					Name, InformationURI string
					Rules                []struct {
						ID                   string
						ShortDescription     struct{ Text string }
						HelpURI              string
						DefaultConfiguration struct{ Level string }
					}
				}
			}
			Invocations []struct {
				ExecutionSuccessful        bool
				ToolExecutionNotifications []struct {
					Level   string
					Message struct{ Text string }
				}
			}
			Results []struct {
				RuleID    string
				RuleIndex int
				Level     string
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           region
					}
				}
				Properties struct{ Pointer, Suggestion string }
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || log.Schema == "" || len(log.Runs) != 1 {
		t.Fatalf("log header: %q %q, %d runs", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	if run.ColumnKind != "unicodeCodePoints" || run.Tool.Driver.Name != "validate-workflow" || !strings.HasPrefix(run.Tool.Driver.InformationURI, "https://") {
		t.Errorf("run: columnKind %q, driver %q %q", run.ColumnKind, run.Tool.Driver.Name, run.Tool.Driver.InformationURI)
	}
	// One rule per code, each described.
	var ids []string
	for _, r := range run.Tool.Driver.Rules {
		ids = append(ids, r.ID)
		if r.ShortDescription.Text == "" || !strings.HasSuffix(r.HelpURI, "#"+r.ID) || (r.DefaultConfiguration.Level != "error" && r.DefaultConfiguration.Level != "warning") {
			t.Errorf("rule %+v", r)
		}
	}
	if diff := cmp.Diff(compile.AllCodes(), ids); diff != "" {
		t.Errorf("rule ids (-codes +rules):\n%s", diff)
	}
	// The unreadable file is a notification, and the run did not succeed.
	if inv := run.Invocations; len(inv) != 1 || inv[0].ExecutionSuccessful || len(inv[0].ToolExecutionNotifications) != 1 ||
		!strings.Contains(inv[0].ToolExecutionNotifications[0].Message.Text, "missing.json") {
		t.Errorf("invocations: %+v", inv)
	}
	ds := reports[0].Diagnostics
	if len(run.Results) != len(ds) {
		t.Fatalf("%d results for %d diagnostics", len(run.Results), len(ds))
	}
	for i, res := range run.Results {
		d := ds[i]
		if res.RuleID != d.Code || run.Tool.Driver.Rules[res.RuleIndex].ID != d.Code || res.Level != d.Severity.String() ||
			res.Message.Text != d.Message || res.Properties.Pointer != d.Pointer || res.Properties.Suggestion != d.Suggestion {
			t.Errorf("result %d = %+v, want %+v", i, res, d)
		}
		if len(res.Locations) != 1 {
			t.Fatalf("result %d has %d locations", i, len(res.Locations))
		}
		loc := res.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URI != "docs/a%20b.json" {
			t.Errorf("uri %q", loc.ArtifactLocation.URI)
		}
		r := loc.Region
		for name, p := range map[string]*int{"startLine": r.StartLine, "startColumn": r.StartColumn, "endLine": r.EndLine, "endColumn": r.EndColumn,
			"charOffset": r.CharOffset, "charLength": r.CharLength, "byteOffset": r.ByteOffset, "byteLength": r.ByteLength} {
			if p == nil {
				t.Fatalf("result %d: region has no %s", i, name)
			}
		}
		if *r.StartLine != d.Range.Start.Line || *r.StartColumn != d.Range.Start.Column || *r.EndLine != d.Range.End.Line || *r.EndColumn != d.Range.End.Column {
			t.Errorf("result %d region %d:%d-%d:%d, want %+v", i, *r.StartLine, *r.StartColumn, *r.EndLine, *r.EndColumn, d.Range)
		}
		// The three descriptions of the region agree.
		text := multiline[*r.ByteOffset : *r.ByteOffset+*r.ByteLength]
		runes := []rune(multiline)
		if string(runes[*r.CharOffset:*r.CharOffset+*r.CharLength]) != text || *r.ByteOffset != d.Range.Start.Byte {
			t.Errorf("result %d: char region %q, byte region %q", i, string(runes[*r.CharOffset:*r.CharOffset+*r.CharLength]), text)
		}
	}
}

// TestSARIFOfEveryExample checks that the SARIF of every example, valid and
// invalid (including invalid UTF-8 and an oversized document), satisfies the
// SARIF 2.1.0 schema.
func TestSARIFOfEveryExample(t *testing.T) {
	t.Parallel()
	sch := sarifSchema(t)
	paths, _ := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	for _, p := range invalidExamples(t) {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	reports := make([]lint.Report, len(paths))
	for i, p := range paths {
		reports[i] = lint.Files(exampleOptions(t, p), p)[0]
	}
	var buf bytes.Buffer
	if err := lint.WriteSARIF(&buf, reports); err != nil {
		t.Fatal(err)
	}
	if err := validateJSON(t, sch, buf.Bytes()); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v", err)
	}
	var log struct {
		Runs []struct{ Results []struct{ Level string } }
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range reports {
		n += len(r.Diagnostics)
	}
	if len(log.Runs[0].Results) != n || n < len(compile.AllCodes()) {
		t.Errorf("%d results for %d diagnostics", len(log.Runs[0].Results), n)
	}
}

// TestRules checks that every code has a rule, in the order of
// compile.AllCodes, with the severity the compiler reports it with.
// TestRulesCannotBeChangedFromOutside: Rules hands out a copy; editing it
// changes neither the next copy nor what SARIF output and RuleFor say.
func TestRulesCannotBeChangedFromOutside(t *testing.T) {
	t.Parallel()
	mine := lint.Rules()
	want := mine[0]
	mine[0].Summary = "changed"
	mine[0].Severity = compile.SeverityWarning
	if got := lint.Rules()[0]; got != want {
		t.Errorf("Rules()[0] = %+v after a caller edited its copy, want %+v", got, want)
	}
	if got, _ := lint.RuleFor(want.Code); got != want {
		t.Errorf("RuleFor(%q) = %+v, want %+v", want.Code, got, want)
	}
}

func TestRules(t *testing.T) {
	t.Parallel()
	var codes []string
	for _, r := range lint.Rules() {
		codes = append(codes, r.Code)
		if r.Summary == "" || !strings.HasSuffix(r.Summary, ".") {
			t.Errorf("rule %s: summary %q", r.Code, r.Summary)
		}
	}
	if diff := cmp.Diff(compile.AllCodes(), codes); diff != "" {
		t.Fatalf("rules (-compile.AllCodes +lint.Rules):\n%s", diff)
	}
	for code, path := range invalidExamples(t) {
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, diags := compile.Compile(doc, exampleOptions(t, path))
		for _, d := range diags {
			if d.Code != code {
				continue
			}
			if r, ok := lint.RuleFor(code); !ok || r.Severity != d.Severity {
				t.Errorf("rule %s has severity %s, the compiler reports %s", code, r.Severity, d.Severity)
			}
		}
	}
	if _, ok := lint.RuleFor("no-such-code"); ok {
		t.Error("RuleFor found an unknown code")
	}
}
