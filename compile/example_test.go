package compile_test

import (
	"fmt"

	"github.com/kobana/workflow/compile"
)

// A valid document becomes a Plan: steps with their defaults filled in and
// the earlier steps each one depends on.
func ExampleCompile() {
	doc := []byte(`{
  "result": {"supplier": "ACME"},
  "workflow": [
    {"type": "request", "url": "https://erp.example.com/payables", "body": {"supplier": "ACME"}, "expected_status": 201},
    {"type": "request", "label": "attach", "url": "https://erp.example.com/payables/${{steps.0.response.body.data.id}}/attachments",
     "form": {"file": "${{email.attachments.0}}"}}
  ]
}`)
	plan, diags := compile.Compile(doc, compile.Options{})
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	for _, s := range plan.Steps {
		expects := "any 2xx"
		if s.ExpectedStatus != 0 {
			expects = fmt.Sprint(s.ExpectedStatus)
		}
		fmt.Printf("step %d %s %q: expects %s, depends on %v, %d form fields\n", s.Index, s.Method, s.Label, expects, s.DependsOn, len(s.Form))
	}
	// Output:
	// step 0 POST "": expects 201, depends on [], 0 form fields
	// step 1 POST "attach": expects any 2xx, depends on [0], 1 form fields
}

// An invalid document has no Plan; each diagnostic has a stable code, a
// JSON pointer and a position in the source.
func ExampleCompile_diagnostics() {
	doc := []byte(`{"result": 1, "workflow": [
  {"type": "request", "method": "post", "url": "https://erp.example.com/",
   "headers": {"Host": "internal", "X-Token": "${{secret.TOKEN}}"}}
]}`)
	plan, diags := compile.Compile(doc, compile.Options{})
	fmt.Println(plan == nil)
	for _, d := range diags {
		fmt.Printf("%d:%d %s %s\n", d.Range.Start.Line, d.Range.Start.Column, d.Code, d.Pointer)
	}
	// Output:
	// true
	// 2:33 method-invalid /workflow/0/method
	// 3:16 header-reserved /workflow/0/headers/Host
	// 3:48 placeholder-unknown-namespace /workflow/0/headers/X-Token
}
