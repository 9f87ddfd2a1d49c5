package lsp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kobana/workflow/lang"
)

// twoSteps is a document with the cursor in step 2; %s is where the test's
// text goes.
const twoSteps = `{
  "result": {},
  "workflow": [
    {"type": "request", "label": "crea", "method": "POST", "url": "https://erp.example.com/payables"},
    {"type": "request", "url": "https://erp.example.com/payables/x", "method": "PUT"},
    {"type": "request", %s}
  ]
}`

const exampleResponses = `{
  "0": {"status": 201, "headers": {"Location": "/payables/pay_1", "x-request-id": "r1"},
        "body": {"data": {"id": "pay_7Hq2Xb", "amount": 1250.5, "tags": ["a", "b"], "bad key": 1}, "ok": true}},
  "1": {"status": 200, "body": [{"id": "att_1"}]}
}`

func TestCompletion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := filepath.Join(dir, "w.json")
	if err := os.WriteFile(filepath.Join(dir, "w.responses.json"), []byte(exampleResponses), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + filepath.ToSlash(doc)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"namespaces", `"url": "${{|"`, lang.Namespaces()},
		{"namespaces after blanks", `"url": "https://x/${{ |"`, lang.Namespaces()},
		{"namespace being typed", `"url": "${{ste|"`, lang.Namespaces()},
		{"earlier steps only", `"url": "${{steps.|"`, []string{"0", "1"}},
		{"response", `"url": "${{steps.1.|"`, []string{"response"}},
		{"response parts", `"headers": {"X": "a ${{steps.0.response.|}}"}`, []string{"status", "body", "headers"}},
		{"body paths from the example", `"body": {"k": "${{steps.0.response.body.|"}`, []string{"data", "ok"}},
		{"nested body paths, valid names only", `"body": {"k": ["${{steps.0.response.body.data.|"]}`, []string{"amount", "id", "tags"}},
		{"array indices", `"body": "${{steps.0.response.body.data.tags.|"`, []string{"0", "1"}},
		{"array body", `"form": {"f": "${{steps.1.response.body.0.|"}`, []string{"id"}},
		{"no example for the path", `"url": "${{steps.0.response.body.nope.|"`, nil},
		{"header names from the example", `"url": "${{steps.0.response.headers.|"`, []string{"Location", "x-request-id"}},
		{"kobana keys", `"url": "${{kobana.|"`, lang.KobanaKeys()},
		{"secret names", `"url": "${{secrets.|"`, []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}},
		{"email", `"url": "${{email.|"`, []string{"attachments"}},
		{"attachment index", `"form": {"file": "${{email.attachments.|"}`, []string{"0", "1", "2"}},
		{"attachment parts", `"form": {"name": "${{email.attachments.0.|"}`, lang.AttachmentSuffixes()},
		{"closed placeholder", `"url": "${{kobana.now}}|"`, nil},
		{"a space in the reference", `"url": "${{kobana .|"`, nil},
		{"not in a label", `"label": "${{|"`, nil},
		{"not in a header name", `"headers": {"${{|": "x"}`, nil},
		{"not in a body key", `"body": {"${{|": "x"}`, nil},
		{"fields in a key", `"|"`, []string{"label", "method", "url", "headers", "body", "form", "expected_status"}},
		{"fields outside a string", `"url": "https://x",
       |`, []string{"label", "method", "headers", "body", "form", "expected_status"}},
		{"methods", `"method": "|"`, []string{"GET", "POST", "PUT", "PATCH", "DELETE"}},
		{"methods outside a string", `"method": |`, []string{"GET", "POST", "PUT", "PATCH", "DELETE"}},
	}
	c := newClient(t, Options{SecretNames: []string{"SLACK_WEBHOOK_URL", "FINANCE_TOKEN"}}, nil)
	c.open(uri, "{}")
	for i, tc := range tests {
		text, off := cursorDoc(t, strings.Replace(twoSteps, "%s", tc.in, 1))
		c.replace(uri, i+2, text)
		var list CompletionList
		if err := c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(text, off, UTF16)}, &list); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, labels(list)); diff != "" {
			t.Errorf("%s: labels (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestCompletionEdits(t *testing.T) {
	t.Parallel()
	c := newClient(t, Options{}, nil)
	const uri = "file:///tmp/e.json"
	c.open(uri, "{}")
	tests := []struct {
		name, in      string
		label         string
		before, after string // the text the edit replaces, around the cursor
		newText       string
		detail        string
	}{
		{"a namespace being typed", `"url": "${{ kob|"`, "kobana", "kob", "", "kobana", "namespace"},
		{"the rest of the word", `"url": "${{kobana.no|w}}"`, "now", "no", "w", "now", lang.KobanaKeyDoc("now")},
		{"after an escape", `"url": "\u00e9${{kobana.|"`, "env", "", "", "env", lang.KobanaKeyDoc("env")},
		{"an earlier step", `"url": "${{steps.|"`, "0", "", "", "0", `step 0: "crea", POST https://erp.example.com/payables`},
		{"a field in a key", `"exp|"`, "expected_status", "exp", "", "expected_status", "the one status that counts as success"},
		{"a field outside a string", `|`, "form", "", "", `"form": `, "field name → value, sent as multipart/form-data"},
		{"a method outside a string", `"method": |`, "PATCH", "", "", `"PATCH"`, methodDocs["PATCH"]},
	}
	for i, tc := range tests {
		text, off := cursorDoc(t, strings.Replace(twoSteps, "%s", tc.in, 1))
		c.replace(uri, i+2, text)
		var list CompletionList
		if err := c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(text, off, UTF16)}, &list); err != nil {
			t.Fatal(err)
		}
		var it *CompletionItem
		for j := range list.Items {
			if list.Items[j].Label == tc.label {
				it = &list.Items[j]
			}
		}
		if it == nil {
			t.Errorf("%s: no item %q in %v", tc.name, tc.label, labels(list))
			continue
		}
		want := TextEdit{Range: Range{Start: posOf(text, off-len(tc.before), UTF16), End: posOf(text, off+len(tc.after), UTF16)}, NewText: tc.newText}
		if diff := cmp.Diff(&want, it.TextEdit); diff != "" || it.Detail != tc.detail {
			t.Errorf("%s: detail %q, edit (-want +got):\n%s", tc.name, it.Detail, diff)
		}
	}
}

func TestCompletionFromARunRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	record := `{"status": "succeeded", "steps": [{"index": 0, "state": "succeeded",
	  "response": {"status": 201, "headers": {"content-type": "application/json"}, "body": {"data": {"id": "pay_1"}}, "size": 26}}]}`
	os.WriteFile(filepath.Join(dir, "flow.run.json"), []byte(record), 0o644)
	uri := "file://" + filepath.ToSlash(filepath.Join(dir, "flow.json"))
	c := newClient(t, Options{}, nil)
	text, off := cursorDoc(t, strings.Replace(twoSteps, "%s", `"url": "${{steps.0.response.body.data.|"`, 1))
	c.open(uri, text)
	var list CompletionList
	c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(text, off, UTF16)}, &list)
	if got := labels(list); !slices.Equal(got, []string{"id"}) || list.Items[0].Detail != `string "pay_1"` {
		t.Errorf("items from the run record: %+v", list.Items)
	}
}
