package lang

import (
	"strings"
	"testing"
)

var plain200 = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5)[:200]

const threeURL = "https://erp.example.com/payables/${{steps.0.response.body.data.id}}/attachments?t=${{kobana.now}}&k=${{secrets.KEY}}"

func BenchmarkParsePlain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(plain200); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseThree(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(threeURL); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSyntaxError measures the error path: the scanner stops and
// the grammar reads the string again.
func BenchmarkParseSyntaxError(b *testing.B) {
	b.ReportAllocs()
	const bad = "https://erp.example.com/payables/${{steps.0.response.body.data[0].id}}/attachments?t=${{kobana.now}}"
	for b.Loop() {
		if _, err := Parse(bad); err == nil {
			b.Fatal("no error")
		}
	}
}
