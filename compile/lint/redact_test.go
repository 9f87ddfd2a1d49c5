package lint

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile"
)

// hide is a stand-in for kobana run's redactor: it replaces one value.
func hide(value string) func(string) string {
	return func(s string) string { return strings.ReplaceAll(s, value, "[redacted secrets.T]") }
}

func TestRedactLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		line       string
		start, end int
		want       string // the line with the mapped range in ⟦⟧
	}{
		{"nothing to hide", `"a": "b"`, 0, 3, `⟦"a"⟧: "b"`},
		{"before the range", `"x": "SECRET", "Host": 1`, 15, 21, `"x": "[redacted secrets.T]", ⟦"Host"⟧: 1`},
		{"after the range", `"Host": "SECRET"`, 0, 6, `⟦"Host"⟧: "[redacted secrets.T]"`},
		{"the range", `{"SECRET": 1}`, 1, 9, `{⟦"[redacted secrets.T]"⟧: 1}`},
		{"across the start", `ab SECRET cd`, 5, 12, `ab ⟦[redacted secrets.T] cd⟧`},
		{"across the end", `ab SECRET cd`, 0, 5, `⟦ab [redacted secrets.T]⟧ cd`},
		{"inside the value", `ab SECRET cd`, 4, 6, `ab ⟦[redacted secrets.T]⟧ cd`},
		{"empty range inside", `ab SECRET cd`, 5, 5, `ab ⟦[redacted secrets.T]⟧ cd`},
		{"empty range at the end", `ab SECRET`, 9, 9, `ab [redacted secrets.T]⟦⟧`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, s, e := redactLine(tc.line, tc.start, tc.end, hide("SECRET"))
			if got := out[:s] + "⟦" + out[s:e] + "⟧" + out[e:]; got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestWriteTextRedacts: with Redact, neither the message nor the quoted
// line shows the value, and the underline is under the replacement.
func TestWriteTextRedacts(t *testing.T) {
	t.Parallel()
	doc := `{"workflow": [{"SECRET": 1}]}`
	d := compile.Diagnostic{Severity: compile.SeverityError, Code: compile.CodeUnknownField, Message: `unknown field "SECRET"`,
		Range: compile.Range{Start: compile.Pos{Line: 1, Column: 16, Byte: 15}, End: compile.Pos{Line: 1, Column: 24, Byte: 23}}}
	var b bytes.Buffer
	if err := WriteText(&b, []Report{{File: "x.json", Source: []byte(doc), Diagnostics: compile.Diagnostics{d}}}, TextOptions{NoSummary: true, Redact: hide("SECRET")}); err != nil {
		t.Fatal(err)
	}
	want := `x.json:1:16: error: unknown field "[redacted secrets.T]" [step-unknown-field]
 1 | {"workflow": [{"[redacted secrets.T]": 1}]}
   |                ^~~~~~~~~~~~~~~~~~~~~~
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// FuzzRedactLine: whatever the line, range and value, the rewritten line is
// what is printed (the value never shows) and the mapped range lies in it.
func FuzzRedactLine(f *testing.F) {
	f.Add(`ab SECRET cd`, "SECRET", 5, 12)
	f.Add(`"x": "tok", "Host": 1`, "tok", 13, 19)
	f.Add(`aaaa`, "aa", 1, 3)
	f.Fuzz(func(t *testing.T, line, value string, start, end int) {
		if value == "" || len(line) > 1<<10 {
			return
		}
		start = clamp(start, 0, len(line))
		end = clamp(end, start, len(line))
		redact := func(s string) string { return strings.ReplaceAll(s, value, "\x00") }
		out, s, e := redactLine(line, start, end, redact)
		if out != redact(line) {
			t.Fatalf("redactLine(%q) printed %q, not the line rewritten whole %q", line, out, redact(line))
		}
		if s < 0 || s > e || e > len(out) {
			t.Fatalf("range [%d, %d) outside %q", s, e, out)
		}
	})
}
