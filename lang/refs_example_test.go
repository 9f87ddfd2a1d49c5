package lang_test

import (
	"fmt"

	"github.com/kobana/workflow/lang"
)

// List what a string refers to: each reference with its namespace, its
// parts and where it stands in the string.
func ExampleTemplate_Refs() {
	t, err := lang.Parse("${{secrets.ERP_URL}}/payables/${{steps.0.response.body.data.id}}?file=${{email.attachments.1.filename}}")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range t.Refs() {
		switch r.Namespace {
		case lang.Secrets:
			fmt.Println(r.Span, r.Namespace, r.Key)
		case lang.Steps:
			fmt.Println(r.Span, r.Namespace, r.Index, r.Step, r.BodyPath)
		case lang.Email:
			fmt.Println(r.Span, r.Namespace, r.Index, r.Attachment)
		}
	}
	// Output:
	// {0 20} secrets ERP_URL
	// {30 64} steps 0 body [data id]
	// {70 103} email 1 filename
}
