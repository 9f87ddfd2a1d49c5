package emit

import (
	"strings"

	"github.com/kobana/workflow/lang"
)

// Expand renders t to a string, asking lookup for the text of each
// reference. It makes one allocation for templates of up to eight references.
func Expand(t lang.Template, lookup func(*lang.Ref) (string, error)) (string, error) {
	if t.IsLiteral() {
		return t.Source, nil
	}
	var small [8]string
	vals := small[:0]
	n := 0
	for _, seg := range t.Segments {
		if seg.Ref == nil {
			n += len(seg.Literal)
			continue
		}
		v, err := lookup(seg.Ref)
		if err != nil {
			return "", err
		}
		vals = append(vals, v)
		n += len(v)
	}
	var b strings.Builder
	b.Grow(n)
	k := 0
	for _, seg := range t.Segments {
		if seg.Ref == nil {
			b.WriteString(seg.Literal)
			continue
		}
		b.WriteString(vals[k])
		k++
	}
	return b.String(), nil
}
