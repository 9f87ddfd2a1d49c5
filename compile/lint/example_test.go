package lint_test

import (
	"fmt"
	"os"

	"github.com/kobana/workflow/compile/lint"
)

// A service lints an agent's output with one call and reads the
// diagnostics.
func ExampleFile() {
	doc := []byte(`{"result": {"supplier": "ACME"},
 "workflow": [{"type": "request", "method": "post", "url": "https://erp.example.com/payables"}]}`)
	report := lint.Bytes("agent.json", doc, lint.Options{})
	fmt.Println(report.Errors(), "error(s)")
	for _, d := range report.Diagnostics {
		fmt.Printf("%d:%d %s %s suggestion=%s\n", d.Range.Start.Line, d.Range.Start.Column, d.Code, d.Pointer, d.Suggestion)
	}
	// Output:
	// 1 error(s)
	// 2:45 method-invalid /workflow/0/method suggestion=POST
}

func ExampleWriteText() {
	doc := []byte(`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/",
  "headers": {"X-Kobana-Signature": "v1"}}]}`)
	lint.WriteText(os.Stdout, []lint.Report{lint.Bytes("agent.json", doc, lint.Options{})}, lint.TextOptions{})
	// Output:
	// agent.json:2:15: error: header "X-Kobana-Signature" is reserved: Host, Content-Length, Transfer-Encoding, Connection, Upgrade, Proxy-Authorization are set by the platform, and x-kobana-* names belong to Kobana [header-reserved]
	//  2 |   "headers": {"X-Kobana-Signature": "v1"}}]}
	//    |               ^~~~~~~~~~~~~~~~~~~~
	// 1 error, 0 warnings in 1 file
}
