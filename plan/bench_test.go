package plan_test

import (
	"context"
	"os"
	"testing"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/plan"
)

// BenchmarkMakePayableExample plans the complete example with every
// input (the playground does this after each edit); Compile, the
// compiler alone on the same document, is the baseline.
func BenchmarkMakePayableExample(b *testing.B) {
	doc, err := os.ReadFile("../examples/workflows/payable.json")
	if err != nil {
		b.Fatal(err)
	}
	in := inputs(b, "payable-full")
	b.Run("Make", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p := plan.Make(context.Background(), doc, in); p.Summary.Send != 3 {
				b.Fatalf("summary %+v", p.Summary)
			}
		}
	})
	b.Run("Compile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p, _ := compile.Compile(doc, compile.Options{}); p == nil {
				b.Fatal("no plan")
			}
		}
	})
}
