package compile

import (
	"encoding/json"
	"testing"
)

// BenchmarkCompilePayableExample compiles the complete example; the
// Unmarshal sub-benchmark decodes the same bytes into any with
// encoding/json, the reference the compiler is measured against.
func BenchmarkCompilePayableExample(b *testing.B) {
	doc := readExample(b, "payable.json")
	b.Run("Compile", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if plan, _ := Compile(doc, Options{}); plan == nil {
				b.Fatal("no plan")
			}
		}
	})
	b.Run("encoding-json-Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
