package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "w.responses.json"), []byte(exampleResponses), 0o644)
	uri := "file://" + filepath.ToSlash(filepath.Join(dir, "w.json"))
	c := newClient(t, Options{}, map[string]any{"textDocument": map[string]any{"hover": map[string]any{"contentFormat": []string{"markdown", "plaintext"}}}})
	c.open(uri, payable)
	tests := []struct {
		name   string
		at     string // the hover is on the first byte of the first occurrence
		span   string // the range the answer covers
		has    []string
		hasNot []string
	}{
		{"a body path", "steps.0.response.body.data.id}}/attachments", "${{steps.0.response.body.data.id}}", []string{
			"`data.id` in the JSON body of step 0's response",
			`Step 0: "crea la cuenta a pagar", POST https://erp.example.com/payables`,
			"Only earlier steps resolve",
			"In the example response (w.responses.json): `\"pay_7Hq2Xb\"`",
		}, nil},
		{"a secret", "FINANCE_TOKEN}}\" },\n      \"body\"", "${{secrets.FINANCE_TOKEN}}", []string{"The workspace secret **FINANCE_TOKEN**", "[redacted secrets.FINANCE_TOKEN]"}, nil},
		{"a run fact", "kobana.now", "${{kobana.now}}", []string{"Run fact **kobana.now**: the time the step starts"}, nil},
		{"a file in a form", "email.attachments.0", "${{email.attachments.0}}", []string{"Attachment 0 of the e-mail, sent as a file"}, []string{"as base64"}},
		{"a field", `expected_status"`, `"expected_status"`, []string{"`expected_status` of step 0", "from 100 to 599"}, nil},
	}
	for _, tc := range tests {
		off := strings.Index(payable, tc.at)
		span := strings.LastIndex(payable[:off+1], tc.span[:1])
		if tc.span[0] == '$' {
			span = strings.LastIndex(payable[:off], "${{")
		}
		var h *Hover
		if err := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(payable, off, UTF16)}, &h); err != nil {
			t.Fatal(err)
		}
		if h == nil {
			t.Errorf("%s: no hover", tc.name)
			continue
		}
		if h.Contents.Kind != "markdown" {
			t.Errorf("%s: kind %q", tc.name, h.Contents.Kind)
		}
		for _, s := range tc.has {
			if !strings.Contains(h.Contents.Value, s) {
				t.Errorf("%s: hover lacks %q:\n%s", tc.name, s, h.Contents.Value)
			}
		}
		for _, s := range tc.hasNot {
			if strings.Contains(h.Contents.Value, s) {
				t.Errorf("%s: hover holds %q:\n%s", tc.name, s, h.Contents.Value)
			}
		}
		want := Range{Start: posOf(payable, span, UTF16), End: posOf(payable, span+len(tc.span), UTF16)}
		if diff := cmp.Diff(&want, h.Range); diff != "" {
			t.Errorf("%s: range (-want +got):\n%s", tc.name, diff)
		}
	}
	// Nothing to say on literal text.
	var h *Hover
	c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(payable, strings.Index(payable, "ACME"), UTF16)}, &h)
	if h != nil {
		t.Errorf("hover on literal text: %+v", h)
	}
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	c := newClient(t, Options{}, nil)
	const uri = "file:///tmp/def.json"
	c.open(uri, payable)
	var locs []Location
	at := strings.Index(payable, "steps.0.response.body.data.id}} creada")
	if err := c.call("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(payable, at+6, UTF16)}, &locs); err != nil {
		t.Fatal(err)
	}
	start := strings.Index(payable, `{
      "type": "request",
      "label": "crea`)
	end := strings.Index(payable, `201
    }`) + len("201\n    }")
	want := []Location{{URI: uri, Range: Range{Start: posOf(payable, start, UTF16), End: posOf(payable, end, UTF16)}}}
	if diff := cmp.Diff(want, locs); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
	locs = nil
	c.call("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(payable, strings.Index(payable, "kobana.now"), UTF16)}, &locs)
	if len(locs) != 0 {
		t.Errorf("definition of a run fact: %+v", locs)
	}
}

// TestPositionEncodings checks ranges in each negotiated encoding on a line
// holding multi-byte characters, a character outside the BMP and JSON
// escapes before the reference.
func TestPositionEncodings(t *testing.T) {
	t.Parallel()
	doc := `{"result": "ok", "workflow": [{"type": "request", "label": "Ação 🚀", "url": "https://x/\u00e9\"é🚀/${{kobana.mow}}"}]}`
	start := strings.Index(doc, "${{kobana.mow}}")
	line := doc[:start]
	tests := []struct {
		caps   map[string]any
		enc    Encoding
		start  int
		legacy bool
	}{
		{map[string]any{}, UTF16, len([]rune(line)) + 2, false}, // two 🚀, each two UTF-16 units
		{map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}}}, UTF8, len(line), false},
		{map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-32"}}}, UTF32, len([]rune(line)), false},
		{map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-7", "utf-16"}}}, UTF16, len([]rune(line)) + 2, false},
		{map[string]any{"offsetEncoding": []string{"utf-8"}}, UTF8, len(line), true},
	}
	for _, tc := range tests {
		c, _ := startServer(t, Options{})
		var res initializeResult
		if err := c.call("initialize", map[string]any{"capabilities": tc.caps}, &res); err != nil {
			t.Fatal(err)
		}
		if res.Capabilities.PositionEncoding != string(tc.enc) || (res.OffsetEncoding != "") != tc.legacy {
			t.Errorf("%v: negotiated %q (offsetEncoding %q), want %q", tc.caps, res.Capabilities.PositionEncoding, res.OffsetEncoding, tc.enc)
		}
		ds := c.open("file:///enc.json", doc)
		if len(ds) != 1 {
			t.Fatalf("diagnostics: %+v", ds)
		}
		want := Range{Start: Position{0, tc.start}, End: Position{0, tc.start + len("${{kobana.mow}}")}}
		if ds[0].Range != want {
			t.Errorf("%s: range %+v, want %+v", tc.enc, ds[0].Range, want)
		}
		// Hover at the same position finds nothing (the reference is
		// invalid), completion inside it finds the kobana keys.
		var list CompletionList
		c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///enc.json"}, "position": Position{0, tc.start + len("${{kobana.")}}, &list)
		if len(list.Items) == 0 || list.Items[0].TextEdit.Range.Start != (Position{0, tc.start + len("${{kobana.")}) {
			t.Errorf("%s: completion %+v", tc.enc, list.Items)
		}
	}
}
