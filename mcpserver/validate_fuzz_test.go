package mcpserver

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClipValues checks what a validation message shows of a value: it
// never panics, stays within maxProblemBytes, is UTF-8 when the message
// was, and keeps the argument and the rule it names at its start. The
// value is quoted as jsonschema-go quotes it (%q), so values of escapes —
// NULs, quotes, control characters, invalid UTF-8 — are long quoted and
// short unquoted.
func FuzzClipValues(f *testing.F) {
	for _, v := range []string{
		"", "x", strings.Repeat("\x00", 20), strings.Repeat("\x00", 33), strings.Repeat(`"`, 40),
		strings.Repeat("é", 40), strings.Repeat("\xff", 40), strings.Repeat("\x80", 50), "abc\u2028def" + strings.Repeat("z", 40),
		strings.Repeat("日本", 20), strings.Repeat("x", 3<<10),
	} {
		f.Add("id", "pattern", v, " does not match \"^em_\"")
	}
	f.Add("status", "enum", "", " is not one of [a b c]")
	f.Add("limit", "maximum", "", "99/1 is greater than 5.000000")
	f.Fuzz(func(t *testing.T, name, rule, value, rest string) {
		name, rule = letters(name), letters(rule)
		if name == "" || rule == "" || len(name) > 40 || len(rule) > 40 {
			t.Skip()
		}
		head := "argument " + name + ": " + rule + ": "
		msg := head + strconv.Quote(value) + rest
		out := clipValues(msg)
		if len(out) > maxProblemBytes {
			t.Errorf("%d bytes, want at most %d: %q", len(out), maxProblemBytes, out)
		}
		if utf8.ValidString(msg) && !utf8.ValidString(out) {
			t.Errorf("not UTF-8: %q", out)
		}
		if !strings.HasPrefix(out, head) {
			t.Errorf("the argument and rule are lost: %q", out)
		}
		// A short value is shown whole; a long one by its start and size.
		if len(value) <= maxShownValue && len(msg) <= maxProblemBytes/2 && !strings.Contains(out, strconv.Quote(value)) {
			t.Errorf("short value %q not shown whole: %q", value, out)
		}
		if len(value) > maxShownValue && strings.Contains(out, strconv.Quote(value)) {
			t.Errorf("long value %q shown whole: %q", value, out)
		}
	})
}

// letters keeps the ASCII letters of s: a name and a rule as a validation
// message writes them.
func letters(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, s)
}
