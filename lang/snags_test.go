package lang_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kobana/workflow/lang"
)

// TestParseErrorFindsEachError: the error Parse returns unwraps to every
// *lang.Error it holds, so errors.As reaches the first one's code and span.
func TestParseErrorFindsEachError(t *testing.T) {
	_, err := lang.Parse("${{secret.A}} and ${{steps.x.response.status}}")
	var first *lang.Error
	if !errors.As(err, &first) {
		t.Fatalf("errors.As(%v, *lang.Error) = false", err)
	}
	if first.Code != lang.CodeUnknownNS || first.Span.Start != 0 {
		t.Errorf("first error %+v; want %s at 0", first, lang.CodeUnknownNS)
	}
	var list lang.ErrorList
	if !errors.As(err, &list) || len(list.Unwrap()) != 2 {
		t.Errorf("the list unwraps to %d errors; want 2", len(list.Unwrap()))
	}
}

// TestPartsPrintByName: a reference's parts print as written, not as numbers.
func TestPartsPrintByName(t *testing.T) {
	for _, c := range []struct {
		v    fmt.Stringer
		want string
	}{
		{lang.StepStatus, "status"}, {lang.StepBody, "body"}, {lang.StepHeaders, "headers"},
		{lang.AttachmentContent, "content"}, {lang.AttachmentBase64, "base64"},
		{lang.AttachmentFilename, "filename"}, {lang.AttachmentContentType, "content_type"},
		{lang.AttachmentSize, "size"},
		{lang.StepPart(0), "StepPart(0)"}, {lang.AttachmentPart(9), "AttachmentPart(9)"},
	} {
		if got := fmt.Sprint(c.v); got != c.want {
			t.Errorf("%#v prints %q; want %q", c.v, got, c.want)
		}
	}
}

// TestParseKeepsInvalidPlaceholders: a placeholder that does not parse stays
// in the Template as its own text, marked Invalid, whether or not the string
// holds valid ones, so the Template is not literal and no text is lost.
func TestParseKeepsInvalidPlaceholders(t *testing.T) {
	for _, s := range []string{
		"only bad ${{secret.B}}",
		"a ${{secrets.A}} and ${{secret.B}} c",
		"${{ }} x",
		"a ${{secrets.A}} ${{steps.0.response.bogus}}",
		"syntax ${{secrets.}} then ${{kobana.now}}",
		"unterminated ${{secrets.A",
	} {
		tmpl, err := lang.Parse(s)
		if err == nil {
			t.Errorf("Parse(%q): no error", s)
			continue
		}
		if tmpl.IsLiteral() {
			t.Errorf("Parse(%q): IsLiteral() = true for a string holding a placeholder", s)
		}
		var text string
		invalid := 0
		for _, seg := range tmpl.Segments {
			if seg.Ref != nil {
				text += seg.Ref.Placeholder()
				continue
			}
			if seg.Invalid {
				invalid++
			}
			text += seg.Literal
		}
		if text != s {
			t.Errorf("Parse(%q): the segments read %q", s, text)
		}
		if invalid != 1 {
			t.Errorf("Parse(%q): %d segments marked Invalid; want 1", s, invalid)
		}
	}
}
