package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClip checks the shortening of text for an error message: clip (no
// panic, at most n bytes and an ellipsis, a prefix of the text, UTF-8 when
// the text was) and what fixAnswer makes of an SDK error with that text (a
// code, the id, a message of at most maxErrorMessage bytes and an
// ellipsis, in UTF-8).
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "x", strings.Repeat("é", 200), strings.Repeat("日本", 150), strings.Repeat("\xff", 400),
		"handling 'tools/call': json: cannot unmarshal number into Go struct field .arguments of type string",
		"handling '" + strings.Repeat("é", 100) + "': unknown field \"" + strings.Repeat("日", 50) + "\"",
		"handling 'initialize': " + strings.Repeat("\x80", 300)} {
		f.Add(s, 200)
	}
	f.Add(strings.Repeat("ab", 300), 1)
	f.Add("é", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<12 {
			t.Skip()
		}
		out := clip(s, n)
		if len(out) > n+len("…") {
			t.Errorf("clip(%q, %d): %d bytes", s, n, len(out))
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(out, "…")) {
			t.Errorf("clip(%q, %d) = %q, not a prefix", s, n, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("clip(%q, %d) = %q: not UTF-8", s, n, out)
		}
		// What a client reads of an SDK error of that text, of code 0 or
		// -32602 (fixAnswer, errorCodeOf).
		for _, code := range []int{0, -32602} {
			in, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": code, "message": s}})
			var a struct {
				ID    json.RawMessage
				Error struct {
					Code    int64
					Message string
				}
			}
			if err := json.Unmarshal(fixAnswer(in), &a); err != nil {
				t.Fatalf("fixAnswer of %q: %v", s, err)
			}
			if a.Error.Code == 0 || string(a.ID) != "1" {
				t.Errorf("fixAnswer of %q: code %d, id %s", s, a.Error.Code, a.ID)
			}
			if len(a.Error.Message) > maxErrorMessage+len("…") {
				t.Errorf("fixAnswer of %q: a message of %d bytes", s, len(a.Error.Message))
			}
			if !utf8.ValidString(a.Error.Message) {
				t.Errorf("fixAnswer of %q: %q is not UTF-8", s, a.Error.Message)
			}
		}
	})
}
