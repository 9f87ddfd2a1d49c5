package lsp

import (
	"fmt"
	"strings"
	"testing"
)

// twentySteps builds a workflow of 20 steps in the style of the complete example: each
// with headers, a JSON body and references to earlier steps, secrets, run
// facts and attachments.
func twentySteps() string {
	var b strings.Builder
	b.WriteString("{\n  \"result\": {\"supplier\": \"ACME\", \"amount\": 1250.5},\n  \"workflow\": [\n")
	for i := range 20 {
		if i > 0 {
			b.WriteString(",\n")
		}
		ref := "${{kobana.email_id}}"
		if i > 0 {
			ref = fmt.Sprintf("${{steps.%d.response.body.data.id}}", i-1)
		}
		fmt.Fprintf(&b, `    {
      "type": "request",
      "label": "paso %d: crea la cuenta a pagar",
      "method": "POST",
      "url": "https://erp.example.com/payables/%s/items?at=${{kobana.now}}",
      "headers": { "Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}", "X-Step": "%d" },
      "body": { "supplier": "ACME", "amount": 1250.5, "source": "${{kobana.email_id}}", "file": "${{email.attachments.0.filename}}", "lines": [1, 2, 3] },
      "expected_status": 201
    }`, i, ref, i)
	}
	b.WriteString("\n  ]\n}\n")
	return b.String()
}

// BenchmarkDiagnosticsLatency measures, in a Go client over in-memory pipes,
// the time from sending textDocument/didChange to reading the matching
// textDocument/publishDiagnostics for a 20-step document, with the debounce
// set to 0 (it is a wait the editor chooses, not work). "full" sends the
// whole text, as some clients do; "incremental" sends a one-character edit
// (a misspelt field, then its fix), as Neovim and VS Code do. Each operation
// includes framing and JSON on both sides, applying the change, compiling,
// placing the references and encoding the diagnostics.
func BenchmarkDiagnosticsLatency(b *testing.B) {
	doc := twentySteps()
	if ds := analyse(doc).diags; len(ds) != 0 {
		b.Fatalf("the 20-step document has diagnostics: %v", ds)
	}
	b.Run("full", func(b *testing.B) {
		c := newClient(b, Options{}, nil)
		const uri = "file:///bench/full.json"
		c.open(uri, doc)
		b.ReportAllocs()
		v := 1
		for b.Loop() {
			v++
			c.replace(uri, v, doc)
			c.diagnostics(uri, v)
		}
	})
	b.Run("incremental", func(b *testing.B) {
		c := newClient(b, Options{}, nil)
		const uri = "file:///bench/incremental.json"
		c.open(uri, doc)
		at := posOf(doc, strings.LastIndex(doc, "expected_status")+len("expected"), UTF16)
		edit := Range{Start: at, End: Position{at.Line, at.Character + 1}}
		b.ReportAllocs()
		v := 1
		for b.Loop() {
			v++
			ch := "-"
			if v%2 == 1 {
				ch = "_"
			}
			c.notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": v},
				"contentChanges": []map[string]any{{"range": edit, "text": ch}},
			})
			c.diagnostics(uri, v)
		}
	})
}

// BenchmarkCompileOnly is the baseline of BenchmarkDiagnosticsLatency: the
// compiler alone on the same document, without the protocol.
func BenchmarkCompileOnly(b *testing.B) {
	doc := []byte(twentySteps())
	b.ReportAllocs()
	for b.Loop() {
		analyse(string(doc))
	}
}
