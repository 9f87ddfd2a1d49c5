package lint_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/lang"
)

const schemaPath = "../../workflow.schema.json"

// rawSchema is workflow.schema.json decoded into maps.
func rawSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	return s
}

// at follows keys through nested objects of the decoded schema.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("schema: %s is not under an object", k)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("schema: no %q in %v", k, keys)
		}
	}
	return v
}

func workflowSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(schemaPath)
	if err != nil {
		t.Fatalf("%s does not compile: %v", schemaPath, err)
	}
	return sch
}

// TestSchemaInStepWithCompiler checks the schema's lists against the
// compiler's: step fields, methods, reserved headers, the step limit.
func TestSchemaInStepWithCompiler(t *testing.T) {
	t.Parallel()
	s := rawSchema(t)
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", s["$schema"])
	}
	step := at(t, s, "$defs", "step").(map[string]any)
	var fields []string
	for f := range at(t, step, "properties").(map[string]any) {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	want := compile.StepFields()
	sort.Strings(want)
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("step properties (-compile.StepFields +schema):\n%s", diff)
	}
	if step["additionalProperties"] != false {
		t.Error("steps must not admit unknown fields")
	}
	if diff := cmp.Diff([]any{"type", "url"}, step["required"]); diff != "" {
		t.Errorf("required: %s", diff)
	}
	// The step types: one is a const, more an enum.
	var types []string
	if c, ok := at(t, step, "properties", "type").(map[string]any)["const"].(string); ok {
		types = []string{c}
	} else {
		for _, v := range at(t, step, "properties", "type", "enum").([]any) {
			types = append(types, v.(string))
		}
	}
	if diff := cmp.Diff(compile.StepTypeNames(), types); diff != "" {
		t.Errorf("step types (-compile.StepTypes +schema):\n%s", diff)
	}
	var methods []string
	for _, m := range at(t, step, "properties", "method", "enum").([]any) {
		methods = append(methods, m.(string))
	}
	if diff := cmp.Diff(compile.Methods(), methods); diff != "" {
		t.Errorf("method enum (-compile.Methods +schema):\n%s", diff)
	}
	if got := at(t, s, "properties", "workflow", "maxItems"); got != float64(compile.MaxSteps) {
		t.Errorf("workflow maxItems = %v, want %d", got, compile.MaxSteps)
	}
	if lo, hi := at(t, step, "properties", "expected_status", "minimum"), at(t, step, "properties", "expected_status", "maximum"); lo != 100.0 || hi != 599.0 {
		t.Errorf("expected_status range %v–%v", lo, hi)
	}

	// Reserved names: each pattern spells one name case-insensitively, as
	// ^[Hh][Oo][Ss][Tt]$; the x-kobana- one is a prefix.
	var reserved []string
	prefix := ""
	cls := regexp.MustCompile(`\[(.)(.)\]|\\?(.)`)
	for _, p := range at(t, step, "properties", "headers", "propertyNames", "not", "anyOf").([]any) {
		pat := p.(map[string]any)["pattern"].(string)
		body := strings.TrimPrefix(pat, "^")
		exact := strings.HasSuffix(body, "$")
		body = strings.TrimSuffix(body, "$")
		var name strings.Builder
		for _, m := range cls.FindAllStringSubmatch(body, -1) {
			if m[1] != "" {
				if !strings.EqualFold(m[1], m[2]) || m[1] == m[2] {
					t.Errorf("pattern %s: class [%s%s] is not one letter in two cases", pat, m[1], m[2])
				}
				name.WriteString(strings.ToLower(m[1]))
			} else {
				name.WriteString(m[3])
			}
		}
		if exact {
			reserved = append(reserved, name.String())
		} else {
			prefix = name.String()
		}
	}
	var wantReserved []string
	for _, h := range append(compile.ReservedHeaders(), compile.TransportHeaders()...) {
		wantReserved = append(wantReserved, strings.ToLower(h))
	}
	if diff := cmp.Diff(wantReserved, reserved); diff != "" {
		t.Errorf("reserved headers (-compile.ReservedHeaders, TransportHeaders +schema):\n%s", diff)
	}
	if prefix != "x-kobana-" {
		t.Errorf("reserved prefix %q, want x-kobana-", prefix)
	}
}

// TestSchemaHasDescriptions checks that every property the schema defines
// has hover text.
func TestSchemaHasDescriptions(t *testing.T) {
	t.Parallel()
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name, p := range props {
					if d, _ := p.(map[string]any)["description"].(string); d == "" {
						t.Errorf("%s/properties/%s has no description", path, name)
					}
				}
			}
			for k, c := range v {
				walk(path+"/"+k, c)
			}
		case []any:
			for _, c := range v {
				walk(path+"/[]", c)
			}
		}
	}
	walk("", rawSchema(t))
}

func validates(t *testing.T, sch *jsonschema.Schema, doc []byte) (bool, error) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return false, err
	}
	err = sch.Validate(inst)
	return err == nil, err
}

// schemaLevel lists the codes of the invalid examples the schema must
// reject. The others are beyond a schema: JSON syntax and encoding,
// duplicate keys and headers, depth and size, forward references, the
// placeholder count, and warnings.
var schemaLevel = map[string]bool{
	compile.CodeNotObject: true, compile.CodeWorkflowType: true, compile.CodeTooManySteps: true,
	compile.CodeStepType: true, compile.CodeUnknownField: true, compile.CodeMissingField: true,
	compile.CodeFieldType: true, compile.CodeUnknownStepType: true, compile.CodeMethod: true,
	compile.CodeURL: true, compile.CodeReservedHeader: true, compile.CodeHeaderName: true,
	compile.CodeHeaderValue: true, compile.CodeBodyAndForm: true, compile.CodeFormFieldName: true,
	compile.CodeExpectedStatus: true, compile.CodeNotAllowed: true,
	compile.CodePlaceholderUnterminated: true, compile.CodePlaceholderEmpty: true,
	compile.CodePlaceholderSyntax: true, compile.CodeUnknownNamespace: true,
	compile.CodeSecretsReference: true, compile.CodeKobanaReference: true,
	compile.CodeUnknownKobanaKey: true, compile.CodeStepsReference: true,
	compile.CodeAttachmentsReference: true, compile.CodeIndexOutOfRange: true,
}

// TestSchemaOnExamples: every valid example validates; every example that
// compiles (warnings only) validates; every schema-level invalid example is
// rejected.
func TestSchemaOnExamples(t *testing.T) {
	t.Parallel()
	sch := workflowSchema(t)
	valid, _ := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if len(valid) == 0 {
		t.Fatal("no valid examples")
	}
	for _, p := range valid {
		doc, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := validates(t, sch, doc); !ok {
			t.Errorf("%s: %v", p, err)
		}
	}
	for code, p := range invalidExamples(t) {
		doc, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		plan, _ := compile.Compile(doc, compile.Options{})
		ok, err := validates(t, sch, doc)
		switch {
		case plan != nil && !ok:
			t.Errorf("%s compiles (warnings only) but the schema rejects it: %v", code, err)
		case schemaLevel[code] && ok:
			t.Errorf("the schema accepts %s.json", code)
		}
	}
}

// TestSchemaRules checks rules one document at a time, both ways.
func TestSchemaRules(t *testing.T) {
	t.Parallel()
	sch := workflowSchema(t)
	step := func(fields string) string {
		return `{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/x"` + fields + `}]}`
	}
	tests := []struct {
		name, doc string
	}{
		{"no workflow", `{"result": 1}`},
		{"null workflow", `{"result": 1, "workflow": null}`},
		{"extra top-level key (a warning)", `{"result": 1, "notes": "x"}`},
		{"all fields", step(`, "label": "a $ label {{x}}", "method": "PATCH", "headers": {"X-A": "v\t${{ secrets.A }}"}, "body": {"k": ["${{kobana.now}}", 1, true, null, {"n": "${{email.attachments.0.size}}"}]}, "expected_status": 204`)},
		{"form", step(`, "form": {"file": "${{email.attachments.0}}", "name": "${{email.attachments.0.filename}}"}`)},
		{"url from a placeholder", `{"workflow": [{"type": "request", "url": "${{secrets.U}}/x"}]}`},
		{"url with a placeholder host", `{"workflow": [{"type": "request", "url": "https://${{secrets.HOST}}/x"}]}`},
		{"string body", step(`, "body": "plain $ text with }} and {{ and $${ but no placeholder"`)},
		{"every kobana key", step(`, "body": "` + func() string {
			var b strings.Builder
			for _, k := range lang.KobanaKeys() {
				b.WriteString("${{kobana." + k + "}}")
			}
			return b.String()
		}() + `"`)},
		{"scheme, then a placeholder", `{"workflow": [{"type": "request", "url": "https:${{secrets.REST}}"}]}`},
		{"scheme and a slash, then a placeholder", `{"workflow": [{"type": "request", "url": "https:/${{secrets.REST}}"}]}`},
		{"user info, then a placeholder host", `{"workflow": [{"type": "request", "url": "https://u@${{secrets.HOST}}/x"}]}`},
		{"a placeholder before an empty host", `{"workflow": [{"type": "request", "url": "https://${{secrets.USER}}@/x"}]}`},
		{"a placeholder port", `{"workflow": [{"type": "request", "url": "https://:${{secrets.PORT}}/x"}]}`},
		{"an IPv6 literal", `{"workflow": [{"type": "request", "url": "https://[2001:db8::1]:8443/"}]}`},
		{"upper-case scheme, host only", `{"workflow": [{"type": "request", "url": "HTTP://A.EXAMPLE"}]}`},
		{"characters sent percent-encoded (a warning)", `{"workflow": [{"type": "request", "url": "https://bücher.example/a b?c=<d>"}]}`},
		{"the largest indices", step(`, "body": "${{email.attachments.65535}} ${{email.attachments.60000.size}} ${{email.attachments.9999}} ${{steps.0.response.status}}"`)},
		{"a forward reference (a warning)", `{"workflow": [{"type": "request", "url": "https://a.example/${{steps.65535.response.status}}"}]}`},
		{"every attachment suffix", step(`, "body": "` + func() string {
			var b strings.Builder
			for _, s := range lang.AttachmentSuffixes() {
				b.WriteString("${{email.attachments.3." + s + "}}")
			}
			return b.String()
		}() + `"`)},
	}
	for _, tc := range tests {
		if _, ds := compile.Compile([]byte(tc.doc), compile.Options{}); ds.HasErrors() {
			t.Fatalf("%s: the test document does not compile: %v", tc.name, ds)
		}
		if ok, err := validates(t, sch, []byte(tc.doc)); !ok {
			t.Errorf("%s: rejected: %v", tc.name, err)
		}
	}
	bad := []struct{ name, doc string }{
		{"reserved, lower case", step(`, "headers": {"host": "x"}`)},
		{"reserved, upper case", step(`, "headers": {"PROXY-AUTHORIZATION": "x"}`)},
		{"reserved prefix", step(`, "headers": {"X-KOBANA-Anything": "x"}`)},
		{"header name with a space", step(`, "headers": {"X A": "x"}`)},
		{"header value with LF", step(`, "headers": {"X-A": "a\nb"}`)},
		{"body and form", step(`, "body": "x", "form": {"a": "b"}`)},
		{"body number", step(`, "body": 1`)},
		{"body key placeholder", step(`, "body": {"${{secrets.K}}": 1}`)},
		{"form name empty", step(`, "form": {"": "x"}`)},
		{"form name placeholder", step(`, "form": {"${{secrets.K}}": "x"}`)},
		{"form value number", step(`, "form": {"a": 1}`)},
		{"label placeholder", step(`, "label": "${{kobana.now}}"`)},
		{"method lower case", step(`, "method": "get"`)},
		{"expected_status 600", step(`, "expected_status": 600`)},
		{"expected_status 99", step(`, "expected_status": 99`)},
		{"unknown namespace", step(`, "body": "${{secret.K}}"`)},
		{"unknown kobana key", step(`, "body": "${{kobana.nope}}"`)},
		{"unterminated", step(`, "body": "${{secrets.K"`)},
		{"relative url", `{"workflow": [{"type": "request", "url": "/x"}]}`},
		{"ftp url", `{"workflow": [{"type": "request", "url": "ftp://a.example/"}]}`},
		{"21 steps", `{"workflow": [` + strings.Repeat(`{"type": "request", "url": "https://a.example/"},`, 20) + `{"type": "request", "url": "https://a.example/"}]}`},
		{"unknown type", `{"workflow": [{"type": "Request", "url": "https://a.example/"}]}`},
		{"no authority", `{"workflow": [{"type": "request", "url": "https:a.example/x"}]}`},
		{"empty host", `{"workflow": [{"type": "request", "url": "https:///x"}]}`},
		{"user info and no host", `{"workflow": [{"type": "request", "url": "https://user@/x"}]}`},
		{"port and no host", `{"workflow": [{"type": "request", "url": "https://:8080/x"}]}`},
		{"scheme only", `{"workflow": [{"type": "request", "url": "https:"}]}`},
		{"scheme and slashes only", `{"workflow": [{"type": "request", "url": "https://"}]}`},
		{"no authority before a placeholder", `{"workflow": [{"type": "request", "url": "https:a.example/${{secrets.P}}"}]}`},
		{"empty host before a placeholder", `{"workflow": [{"type": "request", "url": "https:///${{secrets.P}}"}]}`},
		{"a path but no host before a placeholder", `{"workflow": [{"type": "request", "url": "https:/a/${{secrets.P}}"}]}`},
		{"tab in the url", `{"workflow": [{"type": "request", "url": "https://a.example/a\tb"}]}`},
		{"DEL in the url", `{"workflow": [{"type": "request", "url": "https://a.example/a\u007f"}]}`},
		{"attachment index 65536", step(`, "body": "${{email.attachments.65536}}"`)},
		{"attachment index 99999", step(`, "body": "${{email.attachments.99999.size}}"`)},
		{"step index 65536", step(`, "body": "${{steps.65536.response.status}}"`)},
		{"Trailer header", step(`, "headers": {"Trailer": "X"}`)},
		{"TE header", step(`, "headers": {"te": "trailers"}`)},
		{"Keep-Alive header", step(`, "headers": {"Keep-Alive": "timeout=5"}`)},
		{"Proxy-Connection header", step(`, "headers": {"PROXY-CONNECTION": "x"}`)},
		{"Expect header", step(`, "headers": {"Expect": "100-continue"}`)},
	}
	for _, tc := range bad {
		if _, ds := compile.Compile([]byte(tc.doc), compile.Options{}); !ds.HasErrors() {
			t.Fatalf("%s: the compiler accepts the test document", tc.name)
		}
		if ok, _ := validates(t, sch, []byte(tc.doc)); ok {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestSchemaPlaceholderPatterns compares the schema's two string patterns
// with package lang on random strings built from the placeholder
// language's pieces: a string lang parses must match the template pattern;
// one it rejects (other than for limits a pattern cannot count) must not;
// and the no-placeholder pattern matches exactly the strings without "${{".
func TestSchemaPlaceholderPatterns(t *testing.T) {
	t.Parallel()
	s := rawSchema(t)
	template := regexp.MustCompile(at(t, s, "$defs", "template", "pattern").(string))
	plain := regexp.MustCompile(at(t, s, "$defs", "noPlaceholder", "pattern").(string))
	pieces := []string{
		"$", "$", "{", "{", "}", "}}", "${{", "${{", "${{ ", " }}", "}}", "\t", " ", ".", ".", "x", "-", "_", "é", "\n", ":",
		"secrets", "secret", "kobana", "steps", "email", "attachments", "response", "body", "status", "headers",
		"0", "1", "01", "65535", "65536", "65529", "65499", "64999", "59999", "99999", "123456", "base64", "filename", "content_type", "size", "now", "email_id", "nope",
		"secrets.KEY", "kobana.now", "steps.0.response.body.a.0", "steps.1.response.headers.location", "email.attachments.0",
		"${{secrets.KEY}}", "${{ kobana.now }}", "${{steps.0.response.status}}", "${{email.attachments.0.filename}}",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var cases []string
	for range 30000 {
		var b strings.Builder
		for n := rng.IntN(12); n >= 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	// Well-formed references appear too rarely at random: add each shape.
	refs := []string{"secrets.A", "steps.0.response.status", "steps.12.response.body",
		"steps.3.response.body.data.items.0.id", "steps.0.response.headers.content-type", "email.attachments.0",
		"steps.0.response", "steps.0.response.status.x", "email.attachments.0.base64.x", "kobana.now.x",
		"kobana.nope", "kobana", "secrets", "secrets.A.B", "steps.0.body", "steps.a.response.status", "steps.01.response.status",
		"steps.0.response.headers", "steps.0.response.headers.a.b", "email.attachment.0", "email.attachments", "email.attachments.x",
		"email.attachments.0.name", "email.attachments.65535", "email.attachments.65536", "email.attachments.65599.size",
		"steps.65535.response.status", "steps.65536.response.status", "steps.70000.response.body", "steps.9999.response.body", "Secrets.A", "steps.-1.response.status", "secrets.A B", "secrets.A/B", "secrets..A", ".secrets.A", "secrets.A."}
	for _, k := range lang.KobanaKeys() {
		refs = append(refs, "kobana."+k, "kobana."+k+"x", "kobana."+strings.ToUpper(k))
	}
	for _, s := range lang.AttachmentSuffixes() {
		refs = append(refs, "email.attachments.1."+s, "email.attachments.1."+s+"x")
	}
	for _, ref := range refs {
		for _, f := range []string{"${{%s}}", "a${{ %s }}b", "$${{\t%s\t}}$", "${${{%s}}${", "${{%s}}${{%s}}"} {
			cases = append(cases, strings.ReplaceAll(f, "%s", ref))
		}
	}
	mismatches := 0
	for _, c := range cases {
		_, err := lang.Parse(c)
		limit := false // the placeholder count is beyond a pattern; index ranges are not
		if list, ok := err.(lang.ErrorList); ok {
			for _, e := range list {
				limit = limit || e.Code == lang.CodeTooManyRefs
			}
		}
		matched := template.MatchString(c)
		if (err == nil && !matched) || (err != nil && !limit && matched) {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("%q: lang error %v, template pattern matches: %v", c, err, matched)
			}
		}
		if want := !strings.Contains(c, "${{"); plain.MatchString(c) != want {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("%q: no-placeholder pattern matches: %v, want %v", c, !want, want)
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d mismatches in %d strings", mismatches, len(cases))
	}
}

// schemaExact lists the error codes whose rule the schema states exactly:
// a document the schema accepts never has one of them (as long as it has
// no duplicate keys, which the compiler reads first-wins and a JSON Schema
// validator last-wins).
var schemaExact = map[string]bool{
	compile.CodeNotObject: true, compile.CodeWorkflowType: true, compile.CodeTooManySteps: true,
	compile.CodeStepType: true, compile.CodeUnknownField: true, compile.CodeMissingField: true,
	compile.CodeFieldType: true, compile.CodeUnknownStepType: true, compile.CodeMethod: true,
	compile.CodeReservedHeader: true, compile.CodeHeaderName: true, compile.CodeHeaderValue: true,
	compile.CodeBodyAndForm: true, compile.CodeFormFieldName: true, compile.CodeNotAllowed: true,
	compile.CodePlaceholderUnterminated: true, compile.CodePlaceholderEmpty: true,
	compile.CodePlaceholderSyntax: true, compile.CodeUnknownNamespace: true,
	compile.CodeSecretsReference: true, compile.CodeKobanaReference: true,
	compile.CodeUnknownKobanaKey: true, compile.CodeStepsReference: true,
	compile.CodeAttachmentsReference: true, compile.CodeIndexOutOfRange: true,
}

// FuzzSchemaAcceptsWhatCompiles keeps the schema and the compiler in step
// both ways: the schema never rejects a document the compiler accepts (an
// editor must not mark a valid workflow), and it rejects every document
// whose only errors are ones it can state (schemaExact).
func FuzzSchemaAcceptsWhatCompiles(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	more, _ := filepath.Glob(filepath.Join(invalidDir, "*.json"))
	for _, p := range append(paths, more...) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 && !strings.HasSuffix(p, goldenJSON) {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"result": 1, "workflow": [{"type": "request", "url": "ab${{secrets.U}}", "label": "$ {{ }} ${", "headers": {"X-$": "a\tb ${{ kobana.now }}"}, "form": {"$${": "${${{email.attachments.0.size}}"}}]}`))
	f.Add([]byte(`{"workflow": [{"type": "request", "url": "https:///${{secrets.P}}", "headers": {"te": "x"}, "body": "${{email.attachments.65536}}"}]}`))
	f.Add([]byte(`{"workflow": [{"type": "request", "url": "https://u@:80/x\t"}]}`))
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(schemaPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		plan, ds := compile.Compile(doc, compile.Options{})
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if plan != nil {
			if err != nil {
				t.Fatalf("the document compiles but does not decode as JSON: %v", err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Fatalf("the document compiles but the schema rejects it: %v", err)
			}
			return
		}
		if err != nil || sch.Validate(inst) != nil {
			return
		}
		for _, d := range ds {
			if d.Code == compile.CodeDuplicateKey {
				return
			}
		}
		for _, d := range ds.Errors() {
			if schemaExact[d.Code] {
				t.Fatalf("the schema accepts a document with %v", d)
			}
		}
	})
}
