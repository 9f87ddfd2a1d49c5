package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppend(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":            "plain",
		"q\"b\\":           `q\"b\\`,
		"t\tn\nr\r":        `t\tn\nr\r`,
		"\x00\x01\x1f\x7f": `\u0000\u0001\u001f` + "\x7f",
		"<>&é😀":            "<>&é😀",
		"\u2028\u2029":     `\u2028\u2029`,
		"a\xffb\xc3":       `a\ufffdb\ufffd`,
		"/":                "/",
	} {
		if got := string(Append([]byte("x"), in)); got != "x"+want {
			t.Errorf("Append(%q) = %s, want x%s", in, got, want)
		}
	}
}

// FuzzAppend: the literal is JSON, and decodes to s (each byte of invalid
// UTF-8 read as U+FFFD, as encoding/json reads it).
func FuzzAppend(f *testing.F) {
	f.Add("a\"b\\c\x01\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		lit := `"` + string(Append(nil, s)) + `"`
		var got string
		if err := json.Unmarshal([]byte(lit), &got); err != nil {
			t.Fatalf("%q: %s is not a JSON string: %v", s, lit, err)
		}
		var want strings.Builder
		for _, r := range s {
			want.WriteRune(r)
		}
		if got != want.String() {
			t.Errorf("%q: %s decodes to %q", s, lit, got)
		}
	})
}
