package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

type schemaInner struct {
	A string `json:"a"`
}

type schemaShapes struct {
	List     []string          `json:"list"`
	OptList  []string          `json:"opt_list,omitempty"`
	Map      map[string]int    `json:"map"`
	OptPtr   *schemaInner      `json:"opt_ptr,omitempty"`
	Ptr      *schemaInner      `json:"ptr"`
	OptName  *string           `json:"opt_name,omitempty"`
	Raw      json.RawMessage   `json:"raw"`
	Any      any               `json:"any,omitempty"`
	Nested   []schemaInner     `json:"nested"`
	Ptrs     []*schemaInner    `json:"ptrs"`
	Labels   map[string]string `json:"labels,omitempty"`
	Embedded schemaEmbedded    `json:"embedded"`
}

type schemaEmbedded struct {
	schemaTagged
}

type schemaTagged struct {
	Month  string   `json:"month" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])$"`
	Reason string   `json:"reason" minLength:"15" maxLength:"255"`
	Events []string `json:"events" enum:"email.received,run.failed" minItems:"1" maxItems:"2"`
	Limit  int      `json:"limit,omitempty" minimum:"1" maximum:"100"`
	Kind   int      `json:"kind,omitempty" enum:"1,2"`
	Date   string   `json:"date,omitempty" format:"date"`
}

func schemaJSON(t *testing.T, s *jsonschema.Schema) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// walkSchema calls f on every node of a schema in its JSON form.
func walkSchema(node any, path string, f func(path string, node map[string]any)) {
	m, ok := node.(map[string]any)
	if !ok {
		return
	}
	f(path, m)
	for _, key := range []string{"properties", "$defs"} {
		if sub, ok := m[key].(map[string]any); ok {
			for k, v := range sub {
				walkSchema(v, path+"/"+key+"/"+k, f)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		walkSchema(m[key], path+"/"+key, f)
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := m[key].([]any); ok {
			for i, v := range list {
				walkSchema(v, path+"/"+key+"/"+string(rune('0'+i)), f)
			}
		}
	}
}

func TestSchemasArePortable(t *testing.T) {
	s, err := schemaFor[schemaShapes]()
	if err != nil {
		t.Fatal(err)
	}
	m := schemaJSON(t, s)
	walkSchema(m, "", func(path string, node map[string]any) {
		if _, ok := node["type"].([]any); ok {
			t.Errorf("%s: type is an array: %v", path, node["type"])
		}
		if len(node) == 0 || (len(node) == 1 && node["description"] != nil) {
			t.Errorf("%s: constrains nothing: %v", path, node)
		}
	})
	props := m["properties"].(map[string]any)
	want := map[string]any{
		"list":     "array",
		"opt_list": "array",
		"map":      "object",
		"opt_ptr":  "object",
		"opt_name": "string",
		"nested":   "array",
	}
	for k, typ := range want {
		if got := props[k].(map[string]any)["type"]; got != typ {
			t.Errorf("%s: type %v, want %v", k, got, typ)
		}
	}
	// A required pointer can be null: two branches.
	ptr := props["ptr"].(map[string]any)
	if branches, _ := ptr["anyOf"].([]any); len(branches) != 2 || branches[1].(map[string]any)["type"] != "null" {
		t.Errorf("ptr: %v, want anyOf [object, null]", ptr)
	}
	// Elements of a slice of pointers too.
	items := props["ptrs"].(map[string]any)["items"].(map[string]any)
	if branches, _ := items["anyOf"].([]any); len(branches) != 2 {
		t.Errorf("ptrs items: %v, want anyOf [object, null]", items)
	}
	for _, k := range []string{"raw", "any"} {
		if branches, _ := props[k].(map[string]any)["anyOf"].([]any); len(branches) != 6 {
			t.Errorf("%s: %v, want an explicit anyOf of the six JSON types", k, props[k])
		}
	}
}

func TestSchemaConstraintTags(t *testing.T) {
	s, err := schemaFor[schemaShapes]()
	if err != nil {
		t.Fatal(err)
	}
	tagged := schemaJSON(t, s)["properties"].(map[string]any)["embedded"].(map[string]any)["properties"].(map[string]any)
	got := map[string]any{}
	for k, v := range tagged {
		node := v.(map[string]any)
		delete(node, "type")
		got[k] = node
	}
	want := map[string]any{
		"month":  map[string]any{"pattern": "^[0-9]{4}-(0[1-9]|1[0-2])$"},
		"reason": map[string]any{"minLength": 15.0, "maxLength": 255.0},
		"events": map[string]any{"minItems": 1.0, "maxItems": 2.0, "items": map[string]any{"type": "string", "enum": []any{"email.received", "run.failed"}}},
		"limit":  map[string]any{"minimum": 1.0, "maximum": 100.0},
		"kind":   map[string]any{"enum": []any{1.0, 2.0}},
		"date":   map[string]any{"format": "date"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("constraints (-want +got):\n%s", d)
	}
}

func TestSchemaTagErrorsNameTheField(t *testing.T) {
	type badPattern struct {
		ID string `json:"id" pattern:"(["`
	}
	type badLength struct {
		Items []struct {
			Note string `json:"note" maxLength:"long"`
		} `json:"items"`
	}
	type badEnum struct {
		On bool `json:"on" enum:"yes"`
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{second(schemaFor[badPattern]()), "field id: tag pattern"},
		{second(schemaFor[badLength]()), "field items[].note: tag maxLength"},
		{second(schemaFor[badEnum]()), "field on: tag enum"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestEncodeSendsEmptyCollectionsAndChecksTheSchema(t *testing.T) {
	type listed struct {
		List []string `json:"list"`
	}
	type out struct {
		Items  []string          `json:"items"`
		Labels map[string]string `json:"labels"`
		Ptr    *schemaInner      `json:"ptr"`
		Nested []listed          `json:"nested"`
	}
	tool := NewTool(ToolSpec{Name: "t"}, func(ctx context.Context, c *Caller, in struct{}) (out, error) { return out{}, nil })
	if tool.err != nil {
		t.Fatal(tool.err)
	}
	b, err := tool.encode(out{Nested: []listed{{}}})
	if err != nil {
		t.Fatalf("encode: %v (%s)", err, b)
	}
	var got map[string]any
	json.Unmarshal(b, &got)
	if d := cmp.Diff([]any{}, got["items"]); d != "" {
		t.Errorf("items: %s", d)
	}
	if d := cmp.Diff(map[string]any{}, got["labels"]); d != "" {
		t.Errorf("labels: %s", d)
	}
	if got["ptr"] != nil {
		t.Errorf("ptr: %v, want null (it may be)", got["ptr"])
	}
	nested := got["nested"].([]any)[0].(map[string]any)
	if d := cmp.Diff([]any{}, nested["list"]); d != "" {
		t.Errorf("nested list: %s", d)
	}

	// Filling in nulls keeps every other value as it was.
	type texts struct {
		Text  string         `json:"text"`
		Nums  []float64      `json:"nums"`
		Any   any            `json:"any"`
		Empty []string       `json:"empty"`
		Map   map[string]any `json:"map"`
	}
	tricky := texts{Text: "a \"quote\" <b>&amp; é 😀 \u2028 \\ \n\t\x01", Nums: []float64{1e21, 0.1, -0, 12345678901234567}, Any: map[string]any{"null": nil, "list": []any{nil, "x"}},
		Map: map[string]any{"k": nil}}
	tt := NewTool(ToolSpec{Name: "tt"}, func(ctx context.Context, c *Caller, in struct{}) (texts, error) { return texts{}, nil })
	b, err = tt.encode(tricky)
	if err != nil {
		t.Fatal(err)
	}
	var back, want map[string]any
	orig, _ := json.Marshal(tricky)
	json.Unmarshal(orig, &want)
	want["empty"] = []any{}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if d := cmp.Diff(want, back); d != "" {
		t.Errorf("values changed (-want +got):\n%s\n%s", d, b)
	}

	// A value its schema refuses is reported, with its JSON.
	type constrained struct {
		Month string `json:"month" pattern:"^[0-9]{4}-[0-9]{2}$"`
	}
	bad := NewTool(ToolSpec{Name: "b"}, func(ctx context.Context, c *Caller, in struct{}) (constrained, error) { return constrained{}, nil })
	if b, err := bad.encode(constrained{Month: "November"}); err == nil || !strings.Contains(string(b), "November") {
		t.Errorf("got %s, %v; want the JSON and a schema error", b, err)
	}
}

func TestArgumentProblemsNameTheArgument(t *testing.T) {
	type inner struct {
		Tag string `json:"tag" pattern:"^[a-z]+$"`
	}
	type in struct {
		ID    string  `json:"id" pattern:"^inv_[0-9]+$"`
		Model string  `json:"model,omitempty" enum:"a,b"`
		Tags  []inner `json:"tags,omitempty"`
		Note  string  `json:"note,omitempty" maxLength:"10"`
		N     int     `json:"n,omitempty" maximum:"5"`
	}
	tool := NewTool(ToolSpec{Name: "x"}, func(context.Context, *Caller, in) (struct{}, error) { return struct{}{}, nil })
	huge := strings.Repeat("X", 3<<20)
	for args, want := range map[string]string{
		`{}`:                                    `missing required argument(s) ["id"]`,
		`{"id":"x"}`:                            `argument id: pattern: "x" does not match regular expression "^inv_[0-9]+$"`,
		`{"id":"inv_1","model":"c"}`:            `argument model: enum: c does not equal any of: [a b]`,
		`{"id":"inv_1","tags":[{"tag":"A"}]}`:   `argument tags[].tag: pattern: "A" does not match regular expression "^[a-z]+$"`,
		`{"id":"inv_1","extra":1}`:              `unknown argument(s) ["extra"]; the tool's input schema lists the arguments it takes`,
		`{"id":"inv_1","tags":[{"tag":"abc"}]}`: ``,
		// A value of megabytes is named by its size, never sent back; the
		// argument and the rule stay.
		`{"id":"inv_1","note":"` + huge + `"}`: `argument note: maxLength: "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX…" (3145728 bytes) contains 3145728 Unicode code points, more than 10`,
		`{"id":"inv_1","` + huge + `":1}`:      `unknown argument(s) ["XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX…" (3145728 bytes)]; the tool's input schema lists the arguments it takes`,
		`{"id":"inv_1","n":99}`:                `argument n: maximum: 99 is greater than 5`,
	} {
		err := tool.validate(json.RawMessage(args))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", args, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%.80s: got %.700v, want %.700s", args, err, want)
		}
	}
	// An enum's value is not quoted: both ends of the message stay, the
	// middle is left out.
	err := tool.validate(json.RawMessage(`{"id":"inv_1","model":"` + huge + `"}`))
	if msg := fmt.Sprint(err); len(msg) > 700 || !strings.HasPrefix(msg, "argument model: enum: XXX") ||
		!strings.HasSuffix(msg, "X does not equal any of: [a b]") || !strings.Contains(msg, " bytes left out) …") {
		t.Errorf("a huge enum value: %.800s", msg)
	}
}
