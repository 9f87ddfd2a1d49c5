package emit

import (
	"github.com/kobana/workflow/lang"
)

// Expand renders t to a string, asking lookup for the text of each
// reference. Results of up to 256 bytes cost one allocation: the string.
func Expand(t lang.Template, lookup func(*lang.Ref) (string, error)) (string, error) {
	if t.IsLiteral() {
		return t.Source, nil
	}
	var stack [256]byte
	buf := stack[:0]
	for _, seg := range t.Segments {
		if seg.Ref == nil {
			buf = append(buf, seg.Literal...)
			continue
		}
		v, err := lookup(seg.Ref)
		if err != nil {
			return "", err
		}
		buf = append(buf, v...)
	}
	return string(buf), nil
}
