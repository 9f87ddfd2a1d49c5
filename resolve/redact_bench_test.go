package resolve_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kobana/workflow/resolve"
)

// benchBody is a 1 MiB JSON response with a secret echoed near the end,
// the worst case for redaction at the edge: every byte is looked at.
var benchBody = func() string {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, `{"id":"item_%d","url":"https://erp.example.com/items/%d?x=a%%20b","note":"caf\u00e9 \"%d\"","n":%d},`, i, i, i, i)
	}
	b.WriteString(`{"echo":"tok-9f8e7d-secret"}]}`)
	return b.String()
}()

// BenchmarkRedactor redacts benchBody as text and as JSON, next to the
// floor of the same work done naively: one strings.Replacer over the raw
// value only (which misses every encoded form).
func BenchmarkRedactor(b *testing.B) {
	secrets := resolve.SecretMap{"T": "tok-9f8e7d-secret", "P": "483920", "U": "https://hooks.example.com/T0/B0/key"}
	red := resolve.NewRedactor(secrets)
	b.Run("String", func(b *testing.B) {
		b.SetBytes(int64(len(benchBody)))
		b.ReportAllocs()
		for b.Loop() {
			if out := red.String(benchBody); !strings.Contains(out, "[redacted secrets.T]") {
				b.Fatal("not redacted")
			}
		}
	})
	b.Run("JSON", func(b *testing.B) {
		doc := []byte(benchBody)
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if out, ok := red.JSON(doc); !ok || !strings.Contains(string(out[len(out)-40:]), "[redacted secrets.T]") {
				b.Fatal("not redacted")
			}
		}
	})
	b.Run("floor-strings.Replacer", func(b *testing.B) {
		r := strings.NewReplacer("https://hooks.example.com/T0/B0/key", "[redacted secrets.U]", "tok-9f8e7d-secret", "[redacted secrets.T]", "483920", "[redacted secrets.P]")
		b.SetBytes(int64(len(benchBody)))
		b.ReportAllocs()
		for b.Loop() {
			if out := r.Replace(benchBody); !strings.Contains(out, "[redacted secrets.T]") {
				b.Fatal("not redacted")
			}
		}
	})
}

// BenchmarkRedactorAdversarial: text built to make a matcher work hard — a
// value of 63 backslashes and an "x" against 64 KiB of escaped backslashes,
// which a receiver could send — next to an ordinary 64-byte token against
// the same text. The work stays linear in the value's length at each
// position (no backtracking), so the ratio is about the value's length.
func BenchmarkRedactorAdversarial(b *testing.B) {
	text := strings.Repeat(`\\`, 32<<10)
	for _, tc := range []struct{ name, value string }{
		{"backslashes", strings.Repeat(`\`, 63) + "x"},
		{"ordinary-token", "tok_" + strings.Repeat("9f8e7d6c5b", 6)},
	} {
		red := resolve.NewRedactor(resolve.SecretMap{"K": tc.value})
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				red.String(text)
			}
		})
	}
}
