package mcpserver

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

type fuzzShape struct {
	List   []string            `json:"list"`
	Map    map[string][]int    `json:"map"`
	Nested []fuzzInner         `json:"nested"`
	Ptr    *fuzzInner          `json:"ptr"`
	Any    json.RawMessage     `json:"any"`
	Deep   map[string]fuzzDeep `json:"deep"`
}

type fuzzInner struct {
	Tags []string `json:"tags"`
	Name string   `json:"name"`
}

type fuzzDeep struct {
	Items [][]string `json:"items"`
}

// refFill is fillNulls on a decoded value: what the text version must do.
func refFill(s *jsonschema.Schema, v any) any {
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case nil:
		switch s.Type {
		case "array":
			return []any{}
		case "object":
			return map[string]any{}
		}
	case map[string]any:
		s = branchFor(s, "object")
		for k, val := range x {
			if p, ok := s.Properties[k]; ok {
				x[k] = refFill(p, val)
			} else if s.AdditionalProperties != nil {
				x[k] = refFill(s.AdditionalProperties, val)
			}
		}
	case []any:
		s = branchFor(s, "array")
		for i := range x {
			x[i] = refFill(s.Items, x[i])
		}
	}
	return v
}

// FuzzFillNulls: for any JSON text, fillNulls writes valid JSON holding the
// same values, with the nulls its schema does not allow filled in.
func FuzzFillNulls(f *testing.F) {
	for _, seed := range []string{
		`{"list":null,"map":{"a":null,"b":[1,2]},"nested":[{"tags":null,"name":"x"},null],"ptr":null,"any":null,"deep":{"k":{"items":[null,["a"]]}}}`,
		`{"list":["a\u0001b","\u2028","<&>","é😀"],"map":null}`,
		`{"any":{"x":null,"y":[null]},"nested":null}`,
		`[null,{"list":null}]`, `{"list":["a"],"list":null,"map":null,"map":{"x":null}}`, `null`, `"x"`, `1e400`, `{"list":[1.50,-0,12345678901234567890]}`,
	} {
		f.Add(seed)
	}
	s, err := schemaFor[fuzzShape]()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var want any
		if json.Unmarshal([]byte(in), &want) != nil {
			return // only JSON reaches fillNulls
		}
		out, err := fillNulls(s, []byte(in))
		if errors.Is(err, errRepeatedKey) {
			return // encoding/json never repeats a key
		}
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q gave invalid JSON %q: %v", in, out, err)
		}
		want = refFill(s, want)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%q → %q (-want +got):\n%s", in, out, d)
		}
	})
}
