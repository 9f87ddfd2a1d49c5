package lsp

import (
	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/internal/jsonpos"
	"github.com/kobana/workflow/lang"
)

// analysis is what the server knows about one version of a document: the
// compiler's diagnostics and, when the document is JSON, its tree with every
// reference placed in the source.
type analysis struct {
	diags compile.Diagnostics
	// root is nil when the document is not JSON.
	root *jsonpos.Value
	// steps are the workflow's step values, in order.
	steps []*jsonpos.Value
	// refs are the well-formed references, in document order.
	refs []placedRef
}

// placedRef is a reference with its place in the document.
type placedRef struct {
	ref *lang.Ref
	// start and end are the placeholder's byte range in the document,
	// mapped through the string's escapes.
	start, end int
	// step is the index of the step holding it.
	step int
	// wholeForm is set for the whole value of a form field.
	wholeForm bool
}

func analyse(text string) *analysis {
	doc := []byte(text)
	_, diags := compile.Compile(doc, compile.Options{})
	a := &analysis{diags: diags}
	if len(doc) > compile.MaxDocumentSize {
		return a
	}
	root, _, fatal := jsonpos.Parse(doc)
	if fatal || root.Kind != jsonpos.Object {
		return a
	}
	a.root = root
	wf := root.Get("workflow")
	if wf == nil || wf.Kind != jsonpos.Array {
		return a
	}
	a.steps = wf.Elems
	for i, step := range wf.Elems {
		if step.Kind != jsonpos.Object {
			continue
		}
		for _, m := range step.Members {
			switch m.Key.Text {
			case "url":
				a.addRefs(doc, m.Value, i, false)
			case "headers":
				if m.Value.Kind == jsonpos.Object {
					for _, h := range m.Value.Members {
						a.addRefs(doc, h.Value, i, false)
					}
				}
			case "body":
				a.addBodyRefs(doc, m.Value, i)
			case "form":
				if m.Value.Kind == jsonpos.Object {
					for _, f := range m.Value.Members {
						a.addRefs(doc, f.Value, i, true)
					}
				}
			}
		}
	}
	return a
}

func (a *analysis) addBodyRefs(doc []byte, v *jsonpos.Value, step int) {
	switch v.Kind {
	case jsonpos.String:
		a.addRefs(doc, v, step, false)
	case jsonpos.Object:
		for _, m := range v.Members {
			a.addBodyRefs(doc, m.Value, step)
		}
	case jsonpos.Array:
		for _, e := range v.Elems {
			a.addBodyRefs(doc, e, step)
		}
	}
}

// addRefs places the references of the string value v. form says v is a
// form field's value.
func (a *analysis) addRefs(doc []byte, v *jsonpos.Value, step int, form bool) {
	if v.Kind != jsonpos.String {
		return
	}
	t, _ := lang.Parse(v.Text)
	whole := t.WholeRef()
	for _, r := range t.Refs() {
		a.refs = append(a.refs, placedRef{
			ref:       r,
			start:     jsonpos.SourceOffset(doc, v, r.Span.Start),
			end:       jsonpos.SourceOffset(doc, v, r.Span.End),
			step:      step,
			wholeForm: form && r == whole,
		})
	}
}

// refAt returns the reference whose placeholder holds offset off.
func (a *analysis) refAt(off int) *placedRef {
	for i := range a.refs {
		if r := &a.refs[i]; r.start <= off && off < r.end {
			return r
		}
	}
	return nil
}

// stepSummary summarises step i of the analysed document.
func (a *analysis) stepSummary(i int) *stepSummary {
	if i < 0 || i >= len(a.steps) || a.steps[i].Kind != jsonpos.Object {
		return nil
	}
	s := &stepSummary{}
	if v := a.steps[i].Get("label"); v != nil && v.Kind == jsonpos.String {
		s.label = v.Text
	}
	if v := a.steps[i].Get("method"); v != nil && v.Kind == jsonpos.String {
		s.method = v.Text
	}
	if v := a.steps[i].Get("url"); v != nil && v.Kind == jsonpos.String {
		s.url = v.Text
	}
	return s
}
