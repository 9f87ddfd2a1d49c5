package jsonpos

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{"a":1,"b":[true,false,null,"x\"y\u00e9\ud83d\ude00"],"c":{"d":-1.5e+3}}`,
		` [ ] `, `"s"`, `0`, `{"":{}}`, "[\"\\/\\b\\f\\n\\r\\t\"]",
	}
	for _, doc := range docs {
		root, probs, fatal := Parse([]byte(doc))
		if fatal || len(probs) > 0 {
			t.Fatalf("%s: %v", doc, probs)
		}
		var want any
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		got := toAny(t, root)
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Errorf("%s: got %s, want %s", doc, b, a)
		}
		if root.Start != strings.IndexAny(doc, "[{\"0") || root.End != len(strings.TrimRight(doc, " ")) {
			t.Errorf("%s: root range %d-%d", doc, root.Start, root.End)
		}
	}
}

func toAny(t *testing.T, v *Value) any {
	switch v.Kind {
	case Null:
		return nil
	case Bool:
		return v.Text == "true"
	case Number:
		var f float64
		if err := json.Unmarshal([]byte(v.Text), &f); err != nil {
			t.Fatal(err)
		}
		return f
	case String:
		return v.Text
	case Array:
		out := []any{}
		for _, e := range v.Elems {
			out = append(out, toAny(t, e))
		}
		return out
	default:
		out := map[string]any{}
		for _, m := range v.Members {
			out[m.Key.Text] = toAny(t, m.Value)
		}
		return out
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc   string
		code  string
		start int
		msg   string
	}{
		{`{"a":1,}`, CodeSyntax, 7, "expected an object key"},
		{`{"a" 1}`, CodeSyntax, 5, "expected ':'"},
		{`[1 2]`, CodeSyntax, 3, "expected ',' or ']'"},
		{`{"a":tru}`, CodeSyntax, 5, `invalid literal "tru"`},
		{`{"a":01}`, CodeSyntax, 5, "invalid number"},
		{`{"a":"x`, CodeSyntax, 5, "unterminated string"},
		{"{\"a\":\"\x01\"}", CodeSyntax, 6, "control character"},
		{`{"a":"\q"}`, CodeSyntax, 6, "invalid escape"},
		{`{"a":1} x`, CodeSyntax, 8, "after the end"},
		{``, CodeSyntax, 0, "unexpected end"},
		{strings.Repeat("[", 100), CodeTooDeep, MaxDepth, "nesting deeper"},
		{`{"a":1,"a":2}`, CodeDuplicateKey, 7, `duplicate key "a"`},
		{"{\"a\":\"\xff\"}", CodeInvalidUTF8, 6, "invalid UTF-8"},
	} {
		_, probs, _ := Parse([]byte(tc.doc))
		if len(probs) != 1 || probs[0].Code != tc.code || probs[0].Start != tc.start || !strings.Contains(probs[0].Message, tc.msg) {
			t.Errorf("%q: got %+v, want %s at %d ~%q", tc.doc, probs, tc.code, tc.start, tc.msg)
		}
	}
}

func TestDuplicateKeysManyMembers(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 20; i++ {
		b.WriteString(`"k` + string(rune('a'+i)) + `":1,`)
	}
	b.WriteString(`"kc":2}`)
	_, probs, _ := Parse([]byte(b.String()))
	if len(probs) != 1 || probs[0].Key.Text != "kc" {
		t.Fatalf("got %+v", probs)
	}
}

func TestSourceOffset(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"k": "a\"b\u00e9c\nd\ud83d\ude00e"}`)
	root, _, _ := Parse(doc)
	v := root.Get("k")
	// decoded: a " b é(2 bytes) c \n d 😀(4 bytes) e
	want := map[int]string{0: "a", 1: `\"`, 2: "b", 3: `\u00e9`, 5: "c", 6: `\n`, 7: "d", 8: `\ud83d`, 12: "e"}
	for d, prefix := range want {
		off := SourceOffset(doc, v, d)
		if !strings.HasPrefix(string(doc[off:]), prefix) {
			t.Errorf("decoded %d -> %d (%q), want %q", d, off, doc[off:], prefix)
		}
	}
	if got := SourceOffset(doc, v, len(v.Text)); doc[got] != '"' {
		t.Errorf("end maps to %d", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x\u00e9",{"b":null}]}`, `[`, `{"a":1,"a":2}`, `"\ud800"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		root, probs, fatal := Parse(doc)
		for _, p := range probs {
			if p.Start < 0 || p.End > len(doc) || p.Start > p.End {
				t.Fatalf("problem range %d-%d outside %d bytes", p.Start, p.End, len(doc))
			}
		}
		valid := json.Valid(doc)
		if fatal == valid {
			// A document encoding/json accepts must parse, and vice versa,
			// except that deep nesting is refused here.
			if !fatal || !strings.Contains(probs[len(probs)-1].Message, "nesting") {
				t.Fatalf("fatal=%v but json.Valid=%v: %+v", fatal, valid, probs)
			}
		}
		if root != nil && (root.Start < 0 || root.End > len(doc)) {
			t.Fatalf("root range outside input")
		}
	})
}
