package resolve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kobana/workflow/resolve"
)

func TestRedactorCoversEveryForm(t *testing.T) {
	t.Parallel()
	red := resolve.NewRedactor(resolve.SecretMap{
		"T":     "my secret token",
		"V":     "secret-value",
		"Q":     `a"b/c\d`,
		"E":     "tok😀en",
		"U":     "ção-123",
		"P":     "483920",
		"X":     "secrets",
		"FIN":   "tok-fin-1",
		"C":     "C",
		"A":     "abc",
		"LONG":  "abcdef",
		"EMPTY": "",
	})
	tests := []struct{ in, want string }{
		{"Bearer my secret token", "Bearer [redacted secrets.T]"},
		{"/p/my%20secret%20token?x", "/p/[redacted secrets.T]?x"},
		{"q=my+secret+token&", "q=[redacted secrets.T]&"},
		{"q=my%20secret+token", "q=[redacted secrets.T]"},
		{"%73%65%63%72%65%74-value", "[redacted secrets.V]"},
		{"secret%2dvalue and secret%2Dvalue", "[redacted secrets.V] and [redacted secrets.V]"},
		{`{"you_sent":"s\u0065cret-value","k":"S\u0045CRET-VALUE"}`, `{"you_sent":"[redacted secrets.V]","k":"S\u0045CRET-VALUE"}`},
		{`x s\u0065cr\u0045t-value`, `x s\u0065cr\u0045t-value`}, // \u0045 is "E", not "e"
		{`"a\"b\/c\\d"`, `"[redacted secrets.Q]"`},
		{`a%22b%2Fc%5Cd`, `[redacted secrets.Q]`},
		{`tok\ud83d\ude00en / tok\uD83D\uDE00en / tok%F0%9F%98%80en`, `[redacted secrets.E] / [redacted secrets.E] / [redacted secrets.E]`},
		{`%C3%A7%C3%A3o-123 \u00e7\u00e3o-123 %c3%a7ão-123`, `[redacted secrets.U] [redacted secrets.U] [redacted secrets.U]`},
		{"pin 483920.", "pin [redacted secrets.P]."},
		{"[redacted secrets.FIN] holds secrets", "[redacted secrets.FIN] holds [redacted secrets.X]"},
		{"tok-fin-1 [redacted secrets.X]", "[redacted secrets.FIN] [redacted secrets.X]"},
		{"x abcdef y abc z", "x [redacted secrets.LONG] y [redacted secrets.A] z"},
		// Values shorter than resolve.MinSubstring are redacted as whole words only.
		{"Content-Type: C", "Content-Type: [redacted secrets.C]"},
		{"pin=C&x=1", "pin=[redacted secrets.C]&x=1"},
		{"C", "[redacted secrets.C]"},
		{"ABC abcd xabc", "ABC abcd xabc"},
		{"[redacted secrets.A]C", "[redacted secrets.A]C"},
		{"", ""},
	}
	for _, tc := range tests {
		got := red.String(tc.in)
		if got != tc.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if again := red.String(got); again != got {
			t.Errorf("String is not idempotent on %q: %q, then %q", tc.in, got, again)
		}
	}
}

func TestRedactorJSON(t *testing.T) {
	t.Parallel()
	red := resolve.NewRedactor(resolve.SecretMap{"PIN": "483920", "B": "false", "V": "secret-value", "BS": `a\`, "C": "C"})
	tests := []struct{ in, want string }{
		{`{"pin":483920}`, `{"pin":"[redacted secrets.PIN]"}`},
		{`{ "pin" : 483920 , "n": 4839201, "f": false, "t": true, "s": "x483920y",
  "k": {"483920": [483920, -483920, 483920.0]}, "c": "C", "cc": "Cc" }`,
			`{ "pin" : "[redacted secrets.PIN]" , "n": 4839201, "f": "[redacted secrets.B]", "t": true, "s": "x[redacted secrets.PIN]y",
  "k": {"[redacted secrets.PIN]": ["[redacted secrets.PIN]", -483920, 483920.0]}, "c": "[redacted secrets.C]", "cc": "Cc" }`},
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{`{"e":"s\u0065cret-value","f":"secret%2Dvalue"}`, `{"e":"[redacted secrets.V]","f":"[redacted secrets.V]"}`},
		{`["a\\\"b", "a\\", "xa\\", "x a\\"]`, `["[redacted secrets.BS]\"b", "[redacted secrets.BS]", "xa\\", "x [redacted secrets.BS]"]`},
		{`{"x":"a\ud800b","y":"\udc00","z":"\ud83d\ude00"}`, `{"x":"a\ufffdb","y":"\ufffd","z":"\ud83d\ude00"}`},
		{`483920`, `"[redacted secrets.PIN]"`},
	}
	for _, tc := range tests {
		got, ok := red.JSON([]byte(tc.in))
		if !ok || string(got) != tc.want {
			t.Errorf("JSON(%s)\n got %s (%v)\nwant %s", tc.in, got, ok, tc.want)
			continue
		}
		if !json.Valid(got) {
			t.Errorf("JSON(%s) = %s: not JSON", tc.in, got)
		}
		if again, _ := red.JSON(got); string(again) != string(got) {
			t.Errorf("JSON is not idempotent on %s: %s, then %s", tc.in, got, again)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1} x`, `{"a":01}`, "\"\xff\"", `[1,]`} {
		if _, ok := red.JSON([]byte(bad)); ok {
			t.Errorf("JSON(%q) accepted", bad)
		}
	}
}

func TestRedactorReplaceAndMarkers(t *testing.T) {
	t.Parallel()
	red := resolve.NewRedactor(resolve.SecretMap{"K": "application"})
	desc := "[attachment 0: nota.pdf, application/pdf, 20 bytes]"
	red.Replace("%PDF-1.7 binary bytes", desc)
	red.Replace("short", "[x]") // too short to replace anywhere
	got := red.String("echo: %PDF-1.7 binary bytes; " + desc + "; short; application/json")
	want := "echo: " + desc + "; " + desc + "; short; [redacted secrets.K]/json"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// A secret with an empty value redacts nothing, yet its marker (which a
	// request that used it records) is still a marker.
	empty := resolve.NewRedactor(resolve.SecretMap{"E": "", "K": "secr"})
	if got := empty.String("[redacted secrets.E] secr"); got != "[redacted secrets.E] [redacted secrets.K]" {
		t.Errorf("an empty secret's marker: %q", got)
	}
	var none *resolve.Redactor
	if none.String("x") != "x" {
		t.Error("a nil Redactor changes text")
	}
	if b, ok := none.JSON([]byte(`{"a":1}`)); !ok || string(b) != `{"a":1}` {
		t.Error("a nil Redactor changes JSON")
	}
}

func TestRedactorLearnsResolvedSecrets(t *testing.T) {
	t.Parallel()
	s := &resolve.Scope{Secrets: resolve.SecretMap{"T": "tok"}, Redactor: &resolve.Redactor{}}
	if _, err := s.Resolve(ref(t, "secrets.T")); err != nil {
		t.Fatal(err)
	}
	if got := s.Redactor.String("Bearer tok"); got != "Bearer [redacted secrets.T]" {
		t.Errorf("learned: %q", got)
	}
	if got := s.Redactor.String(strings.Repeat("tok", 2)); got != "toktok" {
		t.Errorf("a 3-byte value inside a word: %q", got)
	}
}
