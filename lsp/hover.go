package lsp

import (
	"fmt"
	"strings"

	"github.com/kobana/workflow/internal/jsonpos"
	"github.com/kobana/workflow/lang"
)

// hover answers textDocument/hover: on a reference, what it resolves to and
// the rule behind it (with the value the example response holds, when there
// is one); on a step field's name, what the field is for.
func (s *Server) hover(p textDocumentPositionParams) *Hover {
	d, an, enc := s.snapshot(p.TextDocument.URI, true)
	if d == nil || an.root == nil {
		return nil
	}
	off := d.lines.offset(p.Position, enc)
	s.mu.Lock()
	kind := "plaintext"
	if s.markdown {
		kind = "markdown"
	}
	s.mu.Unlock()
	if pr := an.refAt(off); pr != nil {
		var step *stepSummary
		if pr.ref.Namespace == lang.Steps {
			step = an.stepSummary(pr.ref.Index)
		}
		text := describeRef(pr.ref, pr.wholeForm, step)
		if pr.ref.Namespace == lang.Steps {
			text += s.exampleValue(p.TextDocument.URI, pr.ref)
		}
		r := d.lines.rng(pr.start, pr.end, enc)
		return &Hover{Contents: markupContent{Kind: kind, Value: text}, Range: &r}
	}
	for i, step := range an.steps {
		if step.Kind != jsonpos.Object || off < step.Start || off >= step.End {
			continue
		}
		for _, m := range step.Members {
			if off >= m.Key.Start && off < m.Key.End {
				f, ok := fieldDocFor(m.Key.Text)
				if !ok {
					return nil
				}
				r := d.lines.rng(m.Key.Start, m.Key.End, enc)
				text := fmt.Sprintf("`%s` of step %d: %s\n\n%s", f.name, i, f.summary, f.rule)
				return &Hover{Contents: markupContent{Kind: kind, Value: text}, Range: &r}
			}
		}
	}
	return nil
}

// exampleValue says what the example response of the referenced step holds
// for the reference, or "" when there is no example for it.
func (s *Server) exampleValue(uri string, r *lang.Ref) string {
	ex := s.examplesFor(uri)
	if ex == nil {
		return ""
	}
	resp := ex.steps[r.Index]
	if resp == nil {
		return ""
	}
	var val string
	switch r.Step {
	case lang.StepStatus:
		if resp.Status == 0 {
			return ""
		}
		val = fmt.Sprintf("`%d`", resp.Status)
	case lang.StepHeaders:
		for k, v := range resp.Headers {
			if strings.EqualFold(k, r.Header) {
				val = "`" + clip(v, 200) + "`"
			}
		}
		if val == "" {
			val = "no such header"
		}
	case lang.StepBody:
		if len(resp.Body) == 0 {
			return ""
		}
		at := jsonAt(resp.Body, r.BodyPath)
		if at == nil {
			val = "no such path: the step would fail"
		} else {
			val = "`" + clip(string(at), 200) + "`"
		}
	}
	return fmt.Sprintf("\n\nIn the example response (%s): %s", ex.file, val)
}

// definition answers textDocument/definition: from a steps.N reference to
// step N.
func (s *Server) definition(p textDocumentPositionParams) []Location {
	d, an, enc := s.snapshot(p.TextDocument.URI, true)
	if d == nil || an.root == nil {
		return nil
	}
	pr := an.refAt(d.lines.offset(p.Position, enc))
	if pr == nil || pr.ref.Namespace != lang.Steps || pr.ref.Index >= len(an.steps) {
		return nil
	}
	step := an.steps[pr.ref.Index]
	return []Location{{URI: d.uri, Range: d.lines.rng(step.Start, step.End, enc)}}
}
