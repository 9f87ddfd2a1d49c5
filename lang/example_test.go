package lang_test

import (
	"fmt"

	"github.com/kobana/workflow/lang"
)

func ExampleParse() {
	t, err := lang.Parse("https://erp.example.com/payables/${{ steps.0.response.body.data.id }}/attachments")
	if err != nil {
		panic(err)
	}
	for _, seg := range t.Segments {
		if seg.Ref != nil {
			fmt.Printf("reference %s: step %d, body path %v, bytes %d-%d\n", seg.Ref, seg.Ref.Index, seg.Ref.BodyPath, seg.Ref.Span.Start, seg.Ref.Span.End)
		} else {
			fmt.Printf("literal %q\n", seg.Literal)
		}
	}
	// Output:
	// literal "https://erp.example.com/payables/"
	// reference steps.0.response.body.data.id: step 0, body path [data id], bytes 33-69
	// literal "/attachments"
}

func ExampleParse_errors() {
	_, err := lang.Parse("Bearer ${{secret.TOKEN}} at ${{kobana.nope}}")
	for _, e := range err.(lang.ErrorList) {
		fmt.Printf("%d-%d [%s] suggestion %s\n", e.Span.Start, e.Span.End, e.Code, e.Suggestion)
	}
	// Output:
	// 7-24 [placeholder-unknown-namespace] suggestion ${{secrets.TOKEN}}
	// 28-44 [kobana-unknown-key] suggestion ${{kobana.now}}
}
