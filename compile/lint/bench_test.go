package lint_test

import (
	"io"
	"os"
	"testing"

	"github.com/kobana/workflow/compile/lint"
)

// BenchmarkLint measures linting one document and printing it in each
// format: the complete (valid) example, and an invalid one with a long line.
func BenchmarkLint(b *testing.B) {
	for _, name := range []string{"payable.json", "invalid/kobana-unknown-key.json", "invalid/workflow-too-many-steps.json"} {
		doc, err := os.ReadFile(examplesDir + "/" + name)
		if err != nil {
			b.Fatal(err)
		}
		for _, format := range []string{"text", "json", "sarif"} {
			b.Run(name+"/"+format, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(doc)))
				for b.Loop() {
					reports := []lint.Report{lint.Bytes(name, doc, lint.Options{})}
					var err error
					switch format {
					case "text":
						err = lint.WriteText(io.Discard, reports, lint.TextOptions{})
					case "json":
						err = lint.WriteJSON(io.Discard, reports)
					default:
						err = lint.WriteSARIF(io.Discard, reports)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
