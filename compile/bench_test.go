package compile

import (
	"encoding/json"
	"testing"
)

// BenchmarkCompileSeedExample compiles the seed's complete example; the
// Unmarshal sub-benchmark decodes the same bytes into any with
// encoding/json, the reference the compiler is measured against.
func BenchmarkCompileSeedExample(b *testing.B) {
	doc := readExample(b, "seed-complete.json")
	b.Run("Compile", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if plan, _ := Compile(doc); plan == nil {
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
