package lsp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadCursor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      cursor
	}{
		{"in a url", `{"workflow": [{"type": "request"}, {"url": "https://x/${{st|`, cursor{
			path:     []pathElem{{key: "workflow", isKey: true}, {index: 1}, {key: "url", isKey: true}},
			inString: true, decoded: "https://x/${{st", keys: []string{"url"},
			steps: []stepSummary{{}, {}},
		}},
		{"after escapes", `{"workflow": [{"label": "a\"b", "url": "\u00e9\ud83d\ude80${{|"}]}`, cursor{
			path:     []pathElem{{key: "workflow", isKey: true}, {index: 0}, {key: "url", isKey: true}},
			inString: true, decoded: "é🚀${{", keys: []string{"label", "url"},
			steps: []stepSummary{{label: `a"b`}},
		}},
		{"a key", `{"workflow": [{"method": "GET", "u|`, cursor{
			path:     []pathElem{{key: "workflow", isKey: true}, {index: 0}},
			inString: true, isKey: true, decoded: "u", keys: []string{"method"},
			steps: []stepSummary{{method: "GET"}},
		}},
		{"between tokens", `{"result": [1, {"a": true}], "workflow": [{"url": "x"}, |`, cursor{
			path:  []pathElem{{key: "workflow", isKey: true}, {index: 1}},
			steps: []stepSummary{{url: "x"}},
		}},
		{"a broken line before", "{\"workflow\": [{\"label\": \"ab\n, \"url\": \"${{|", cursor{
			path:     []pathElem{{key: "workflow", isKey: true}, {index: 0}, {key: "url", isKey: true}},
			inString: true, decoded: "${{", keys: []string{"label", "url"},
			steps: []stepSummary{{}},
		}},
	}
	for _, tc := range tests {
		doc, off := cursorDoc(t, tc.doc)
		got := readCursor(doc, off)
		if got.inString && (len(got.source) != len(got.decoded)+1 || got.source[len(got.decoded)] != off) {
			t.Errorf("%s: source map %v for %q", tc.name, got.source, got.decoded)
		}
		got.source = nil
		if diff := cmp.Diff(&tc.want, got, cmp.AllowUnexported(cursor{}, pathElem{}, stepSummary{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// FuzzReadCursor reads every offset of any text: no panic, and the decoded
// text before the cursor maps to offsets that rise up to the cursor.
func FuzzReadCursor(f *testing.F) {
	f.Add(payable)
	f.Add(`{"workflow": [{"url": "\u00e9\ud83d${{steps.0.`)
	f.Add(`{"a": "\`)
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 1024 {
			return
		}
		// Every offset of a short text, about 64 spread over a longer one.
		for off := 0; off <= len(doc); off += max(1, len(doc)/64) {
			c := readCursor(doc, off)
			if !c.inString {
				continue
			}
			if len(c.source) != len(c.decoded)+1 || c.source[len(c.decoded)] != off {
				t.Fatalf("%q at %d: source map %v for %q", doc, off, c.source, c.decoded)
			}
			for i := 1; i < len(c.source); i++ {
				if c.source[i] < c.source[i-1] {
					t.Fatalf("%q at %d: source map falls: %v", doc, off, c.source)
				}
			}
		}
	})
}
