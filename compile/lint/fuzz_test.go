package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var headerLine = regexp.MustCompile(`^doc\.json:(\d+):(\d+): (error|warning): .* \[([a-z0-9-]+)\]$`)

// FuzzWriters checks the three writers on any document: they never fail or
// panic, every text diagnostic is one header line plus a two-line snippet
// that is valid UTF-8 without control characters, and the json and sarif
// outputs are JSON with one entry per diagnostic.
func FuzzWriters(f *testing.F) {
	paths, _ := filepath.Glob("../../examples/workflows/invalid/*.json")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 && !strings.HasSuffix(p, ".diagnostics.json") {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "\r\n\r\n", "{\"a\x1b[2J\": \"\xff\"\r", "{\"result\": 1,\t\t\t\t\t\t\t\t\t\t\t}", strings.Repeat("東", 300) + "{"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rep := Bytes("doc.json", doc, Options{})
		var text, js, sarif bytes.Buffer
		if err := WriteText(&text, []Report{rep}, TextOptions{MaxWidth: 60}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
		if len(lines) != 3*len(rep.Diagnostics)+1 {
			t.Fatalf("%d lines for %d diagnostics:\n%s", len(lines), len(rep.Diagnostics), text.String())
		}
		for i, d := range rep.Diagnostics {
			m := headerLine.FindStringSubmatch(lines[3*i])
			if m == nil || m[1] != fmt.Sprint(d.Range.Start.Line) || m[2] != fmt.Sprint(d.Range.Start.Column) || m[4] != d.Code {
				t.Fatalf("header line %q for %v", lines[3*i], d)
			}
			for _, l := range lines[3*i+1 : 3*i+3] {
				if !utf8.ValidString(l) || strings.IndexFunc(l, isControl) >= 0 {
					t.Fatalf("snippet line %q holds invalid UTF-8 or a control character", l)
				}
			}
			if src := lines[3*i+1]; utf8.RuneCountInString(src) > 60+10+len(fmt.Sprint(d.Range.Start.Line)) && !strings.Contains(src, "\t") {
				t.Fatalf("snippet line too long (%d): %q", utf8.RuneCountInString(src), src)
			}
			if !strings.Contains(lines[3*i+2], "^") {
				t.Fatalf("no caret: %q", lines[3*i+2])
			}
		}
		if err := WriteJSON(&js, []Report{rep}); err != nil {
			t.Fatal(err)
		}
		var out JSONOutput
		if err := json.Unmarshal(js.Bytes(), &out); err != nil || len(out.Diagnostics) != len(rep.Diagnostics) {
			t.Fatalf("json output: %v, %d entries", err, len(out.Diagnostics))
		}
		if err := WriteSARIF(&sarif, []Report{rep}); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(sarif.Bytes()) {
			t.Fatal("sarif output is not JSON")
		}
	})
}
