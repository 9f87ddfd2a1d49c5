package resolve_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kobana/workflow/resolve"
)

// coveredForms lists the forms of v that redaction promises to remove,
// computed independently of the Redactor: as written, percent-encoded as
// net/url writes paths and queries (and with lower-case hex, and %20 for a
// space), JSON-string escaped as encoding/json writes it, and with every
// character escaped as \uXXXX.
func coveredForms(v string) []string {
	q := url.QueryEscape(v)
	forms := []string{v, url.PathEscape(v), q, strings.ReplaceAll(q, "+", "%20"), lowerHex(q)}
	if utf8.ValidString(v) {
		b, _ := json.Marshal(v)
		forms = append(forms, string(b[1:len(b)-1]))
		var all strings.Builder
		for _, r := range v {
			if r > 0xffff {
				r1, r2 := r>>10+0xd7c0, r&0x3ff|0xdc00
				fmt.Fprintf(&all, `\u%04x\u%04X`, r1, r2)
				continue
			}
			fmt.Fprintf(&all, `\u%04x`, r)
		}
		forms = append(forms, all.String())
	}
	return forms
}

func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = toLower(b[i+1])
			b[i+2] = toLower(b[i+2])
		}
	}
	return string(b)
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// unmark replaces every marker with a letter that is no part of a value, so
// no form is found across one.
func unmark(s string, markers []string) string {
	for _, m := range markers {
		s = strings.ReplaceAll(s, m, "\u0100")
	}
	return s
}

func isWord(c byte) bool {
	return c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// wordAt reports an occurrence of v in s standing as a whole word.
func wordAt(s, v string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], v)
		if j < 0 {
			return false
		}
		at := i + j
		if (at == 0 || !isWord(s[at-1])) && (at+len(v) == len(s) || !isWord(s[at+len(v)])) {
			return true
		}
		i = at + 1
	}
}

// FuzzRedactor: for random secrets and text, no covered form of a secret
// (a value shorter than MinSubstring: no whole-word occurrence) survives
// String or, in a JSON document, JSON; markers already in the text are kept;
// redacting twice equals redacting once; JSON output stays valid JSON.
func FuzzRedactor(f *testing.F) {
	f.Add("my secret token", "483920", `echo my%20secret%20token and {"pin":483920}`)
	f.Add("secrets", "tok-fin-1", "[redacted secrets.B] [redacted secrets.A] tok-fin-1")
	f.Add("C", "secret-value", `Content-Type: C; s\u0065cret-value; secret%2Dvalue`)
	f.Add("a\"b/c\\d", "ção-1", `a\"b\/c\\d %C3%A7%C3%A3o-1 \u00e7\u00e3o-1`)
	f.Add("%25%", "\\\\u", `%25%25% \\\\u \\u005c`)
	f.Fuzz(func(t *testing.T, a, b, text string) {
		secrets := resolve.SecretMap{"A": a, "B": b}
		red := resolve.NewRedactor(secrets)
		markers := []string{resolve.Placeholder("A"), resolve.Placeholder("B")}
		out := red.String(text)
		if again := red.String(out); again != out {
			t.Fatalf("String(%q) = %q, then %q", text, out, again)
		}
		for _, m := range markers {
			if strings.Count(out, m) < strings.Count(text, m) {
				t.Fatalf("String(%q) = %q rewrote the marker %s", text, out, m)
			}
		}
		check := func(where, s string) {
			s = unmark(s, markers)
			for key, v := range secrets {
				if v == "" || strings.ContainsAny(v, "[]\u0100") {
					continue // empty, or holds marker text
				}
				if len(v) < resolve.MinSubstring {
					if wordAt(s, v) {
						t.Fatalf("%s: secret %s %q survives as a word in %q", where, key, v, s)
					}
					continue
				}
				for _, form := range coveredForms(v) {
					if strings.Contains(s, form) {
						t.Fatalf("%s: secret %s %q survives as %q in %q", where, key, v, form, s)
					}
				}
			}
		}
		check(fmt.Sprintf("String(%q)", text), out)

		doc, _ := json.Marshal(map[string]any{"k": text, text: []any{text, 1}})
		jout, ok := red.JSON(doc)
		if !ok || !json.Valid(jout) {
			t.Fatalf("JSON(%s) = %s, %v", doc, jout, ok)
		}
		if again, _ := red.JSON(jout); string(again) != string(jout) {
			t.Fatalf("JSON(%s) = %s, then %s", doc, jout, again)
		}
		var decoded map[string][]any
		if err := json.Unmarshal(jout, &decoded); err == nil {
			for k, vs := range decoded {
				check("JSON key", k)
				for _, v := range vs {
					if s, ok := v.(string); ok {
						check("JSON value", s)
					}
				}
			}
		}
	})
}
