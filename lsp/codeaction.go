package lsp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// codeActions answers textDocument/codeAction with a quick fix for each
// diagnostic in the range that has a suggested spelling: the did-you-mean
// of the compiler (and of the secret names) applied as an edit.
func (s *Server) codeActions(p codeActionParams) []CodeAction {
	actions := []CodeAction{}
	if len(p.Context.Only) > 0 && !slices.ContainsFunc(p.Context.Only, func(k string) bool { return k == "quickfix" || k == "" }) {
		return actions
	}
	d, an, enc := s.snapshot(p.TextDocument.URI, true)
	if d == nil {
		return actions
	}
	s.mu.Lock()
	names := s.secretNamesLocked(d.uri)
	docChanges := s.docChanges
	s.mu.Unlock()
	s.flushLogs()
	start, end := d.lines.offset(p.Range.Start, enc), d.lines.offset(p.Range.End, enc)
	for _, diag := range s.diagnostics(d.text, an, d.lines, enc, names) {
		if diag.Data == nil {
			continue
		}
		ds, de := d.lines.offset(diag.Range.Start, enc), d.lines.offset(diag.Range.End, enc)
		if de < start || ds > end {
			continue
		}
		te := TextEdit{Range: diag.Range, NewText: replacement(d.text[ds:de], diag.Data.Suggestion)}
		edit := &WorkspaceEdit{}
		if docChanges {
			edit.DocumentChanges = []textDocumentEdit{{TextDocument: versionedTextDocumentIdentifier{URI: d.uri, Version: d.version}, Edits: []TextEdit{te}}}
		} else {
			edit.Changes = map[string][]TextEdit{d.uri: {te}}
		}
		actions = append(actions, CodeAction{
			Title:       fmt.Sprintf("Change to %s", diag.Data.Suggestion),
			Kind:        "quickfix",
			Diagnostics: []Diagnostic{diag},
			IsPreferred: true,
			Edit:        edit,
		})
	}
	return actions
}

// replacement is the text that puts suggestion in place of the source text
// old: a whole JSON string token (a key, a method) is replaced by the
// suggestion as a JSON string; text inside a string (a placeholder) by the
// suggestion escaped for a JSON string.
func replacement(old, suggestion string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(suggestion) // a string always encodes
	quoted := strings.TrimSuffix(b.String(), "\n")
	if len(old) >= 2 && old[0] == '"' && old[len(old)-1] == '"' {
		return quoted
	}
	return quoted[1 : len(quoted)-1]
}
