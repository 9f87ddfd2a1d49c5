package lsp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/lang"
)

// completion answers textDocument/completion.
func (s *Server) completion(p textDocumentPositionParams) CompletionList {
	d, _, enc := s.snapshot(p.TextDocument.URI, false)
	list := CompletionList{Items: []CompletionItem{}}
	if d == nil {
		return list
	}
	off := d.lines.offset(p.Position, enc)
	c := readCursor(d.text, off)
	end := off
	for end < len(d.text) && (isWordByte(d.text[end]) || d.text[end] == '-') {
		end++
	}
	edit := func(start int, text string) *TextEdit {
		return &TextEdit{Range: d.lines.rng(start, end, enc), NewText: text}
	}
	var items []CompletionItem
	stepPath := c.stepPath()
	switch {
	case c.inString && !c.isKey && placeholderAllowed(stepPath):
		items = s.placeholderItems(p.TextDocument.URI, c, edit)
	case c.isKey && c.stepIndex() >= 0 && len(c.path) == 2:
		items = fieldItems(c, edit, off)
	case c.isKey && len(c.path) == 0:
		items = topLevelItems(c, edit, off)
	case !c.isKey && len(stepPath) == 1 && stepPath[0].isKey && (stepPath[0].key == "method" || stepPath[0].key == "type"):
		items = valueItems(stepPath[0].key, c, edit, off)
	}
	for i := range items {
		items[i].SortText = fmt.Sprintf("%04d", i)
		if items[i].FilterText == "" {
			items[i].FilterText = items[i].Label
		}
	}
	list.Items = append(list.Items, items...)
	return list
}

// placeholderAllowed reports whether a string at path (inside a step) may
// hold placeholders: the url, header values, body strings, form values.
func placeholderAllowed(path []pathElem) bool {
	if len(path) == 0 || !path[0].isKey {
		return false
	}
	switch path[0].key {
	case "url":
		return len(path) == 1
	case "headers", "form":
		return len(path) == 2
	case "body":
		return true
	}
	return false
}

// editFunc makes the edit that replaces the text from start to the end of
// the word under the cursor.
type editFunc func(start int, text string) *TextEdit

// placeholderItems completes the reference being written inside "${{".
func (s *Server) placeholderItems(uri string, c *cursor, edit editFunc) []CompletionItem {
	open := strings.LastIndex(c.decoded, "${{")
	if open < 0 || strings.Contains(c.decoded[open:], "}}") {
		return nil
	}
	inner := c.decoded[open+3:]
	ref := strings.TrimLeft(inner, " \t")
	for i := 0; i < len(ref); i++ {
		if !(isWordByte(ref[i]) || ref[i] == '-' || ref[i] == '.') {
			return nil // not a reference being written: a space, say
		}
	}
	segs := strings.Split(ref, ".")
	typed := segs[:len(segs)-1]
	partial := segs[len(segs)-1]
	start := c.source[len(c.decoded)-len(partial)]
	item := func(label string, kind int, detail, doc string) CompletionItem {
		it := CompletionItem{Label: label, Kind: kind, Detail: detail, TextEdit: edit(start, label)}
		if doc != "" {
			it.Documentation = &markupContent{Kind: "markdown", Value: doc}
		}
		return it
	}
	var items []CompletionItem
	switch {
	case len(typed) == 0:
		for _, ns := range lang.Namespaces() {
			items = append(items, item(ns, kindModule, "namespace", namespaceDocs[ns]))
		}
	case len(typed) == 1 && typed[0] == "secrets":
		s.mu.Lock()
		names := s.secretNamesLocked(uri)
		s.mu.Unlock()
		s.flushLogs()
		for _, n := range names {
			items = append(items, item(n, kindVariable, "workspace secret", fmt.Sprintf(ruleSecret, n)))
		}
	case len(typed) == 1 && typed[0] == "kobana":
		for _, k := range lang.KobanaKeys() {
			items = append(items, item(k, kindConstant, lang.KobanaKeyDoc(k), "Run fact **kobana."+k+"**: "+lang.KobanaKeyDoc(k)+".\n\n"+ruleKobana))
		}
	case len(typed) == 1 && typed[0] == "steps":
		current := c.stepIndex()
		for i := 0; i < current && i < len(c.steps); i++ {
			items = append(items, item(strconv.Itoa(i), kindReference, "step "+strconv.Itoa(i)+": "+c.steps[i].describe(), ""))
		}
	case len(typed) == 2 && typed[0] == "steps":
		items = append(items, item("response", kindProperty, "the step's response", ""))
	case len(typed) == 3 && typed[0] == "steps" && typed[2] == "response":
		items = append(items,
			item("status", kindProperty, "the status code, as a string", ""),
			item("body", kindProperty, "the body: as text, or a path into its JSON", ruleBody),
			item("headers", kindProperty, "a header of the response", ruleHeader))
	case len(typed) >= 4 && typed[0] == "steps" && typed[2] == "response" && typed[3] == "body":
		items = s.bodyItems(uri, typed[1], typed[4:], item)
	case len(typed) == 4 && typed[0] == "steps" && typed[2] == "response" && typed[3] == "headers":
		ex := s.example(uri, typed[1])
		if ex != nil {
			names := make([]string, 0, len(ex.Headers))
			for h := range ex.Headers {
				if lang.IsName(h) {
					names = append(names, h)
				}
			}
			slices.Sort(names)
			for _, h := range names {
				items = append(items, item(h, kindProperty, "in the example response: "+clip(ex.Headers[h], 60), ruleHeader))
			}
		}
	case len(typed) == 1 && typed[0] == "email":
		items = append(items, item("attachments", kindProperty, "the e-mail's attachments", namespaceDocs["email"]))
	case len(typed) == 2 && typed[0] == "email" && typed[1] == "attachments":
		for i, what := range []string{"the first attachment", "the second attachment", "the third attachment"} {
			items = append(items, item(strconv.Itoa(i), kindReference, what, ruleFile))
		}
	case len(typed) == 3 && typed[0] == "email" && typed[1] == "attachments":
		for _, sfx := range lang.AttachmentSuffixes() {
			items = append(items, item(sfx, kindProperty, attachmentDocs[sfx], ruleMeta))
		}
	}
	return items
}

// example returns the example response of step n (written as text) of the
// document uri.
func (s *Server) example(uri, n string) *exampleResponse {
	i, err := strconv.Atoi(n)
	if err != nil || strconv.Itoa(i) != n {
		return nil
	}
	ex := s.examplesFor(uri)
	if ex == nil {
		return nil
	}
	return ex.steps[i]
}

// bodyItems lists the members or elements at path in the example body of
// step n.
func (s *Server) bodyItems(uri, n string, path []string, item func(string, int, string, string) CompletionItem) []CompletionItem {
	ex := s.example(uri, n)
	if ex == nil || len(ex.Body) == 0 {
		return nil
	}
	at := jsonAt(ex.Body, path)
	if at == nil {
		return nil
	}
	var items []CompletionItem
	for _, ch := range jsonChildren(at) {
		if !lang.IsName(ch.name) {
			continue // a key a reference cannot spell
		}
		items = append(items, item(ch.name, kindField, describeJSON(ch.value), "In the example response of step "+n+".\n\n"+ruleBody))
	}
	return items
}

// fieldItems completes the key of a step field.
func fieldItems(c *cursor, edit editFunc, off int) []CompletionItem {
	var items []CompletionItem
	for _, name := range compile.StepFields() {
		if slices.Contains(c.keys, name) {
			continue
		}
		f, _ := fieldDocFor(name)
		it := CompletionItem{Label: name, Kind: kindField, Detail: f.summary, Documentation: &markupContent{Kind: "markdown", Value: f.rule}}
		if c.inString {
			it.TextEdit = edit(c.source[0], name)
		} else {
			it.TextEdit = edit(off, strconv.Quote(name)+": ")
		}
		items = append(items, it)
	}
	return items
}

// topLevelItems completes the keys of the document.
func topLevelItems(c *cursor, edit editFunc, off int) []CompletionItem {
	var items []CompletionItem
	for _, k := range []struct{ name, doc string }{
		{"result", "the agent's analysis of the e-mail: any JSON"},
		{"workflow", "the steps to run, in order (at most 20); omit it when no action is needed"},
	} {
		if slices.Contains(c.keys, k.name) {
			continue
		}
		it := CompletionItem{Label: k.name, Kind: kindField, Detail: k.doc}
		if c.inString {
			it.TextEdit = edit(c.source[0], k.name)
		} else {
			it.TextEdit = edit(off, strconv.Quote(k.name)+": ")
		}
		items = append(items, it)
	}
	return items
}

// valueItems completes the value of a step's method or type.
func valueItems(field string, c *cursor, edit editFunc, off int) []CompletionItem {
	var values []string
	docs := map[string]string{}
	if field == "method" {
		values = compile.Methods()
		docs = methodDocs
	} else {
		types := compile.StepTypes()
		for _, t := range types {
			values = append(values, t.Name)
			docs[t.Name] = t.Summary
			if len(types) == 1 {
				docs[t.Name] += ", the only step type"
			}
		}
	}
	var items []CompletionItem
	for _, v := range values {
		it := CompletionItem{Label: v, Kind: kindValue, Detail: docs[v]}
		if c.inString {
			it.TextEdit = edit(c.source[0], v)
		} else {
			it.TextEdit = edit(off, strconv.Quote(v))
		}
		items = append(items, it)
	}
	return items
}
