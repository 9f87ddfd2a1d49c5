// Command lint shows how a service that receives an agent's output checks it
// with one call before storing or running it.
//
//	go run ./examples/lint
package main

import (
	"fmt"
	"os"

	"github.com/kobana/workflow/compile/lint"
)

// agentOutput is what an agent might answer: its step 0 sets a reserved
// header and misspells a placeholder namespace.
const agentOutput = `{
  "result": { "supplier": "ACME", "amount": 1250.5 },
  "workflow": [
    {
      "type": "request",
      "url": "https://erp.example.com/payables",
      "headers": { "Host": "erp.internal", "Authorization": "Bearer ${{secret.FINANCE_TOKEN}}" },
      "body": { "supplier": "ACME", "amount": 1250.5 }
    }
  ]
}`

func main() {
	report := lint.Bytes("agent-output.json", []byte(agentOutput), lint.Options{})
	if report.Errors() == 0 {
		fmt.Println("the workflow is valid")
		return
	}
	// Each diagnostic has a stable code, a message, a JSON pointer and an
	// exact range; here they go back to the agent so it can correct itself.
	for _, d := range report.Diagnostics {
		fmt.Printf("%s at %s (line %d, column %d): %s\n", d.Code, d.Pointer, d.Range.Start.Line, d.Range.Start.Column, d.Message)
	}
	// The same report in the formats of the command line.
	if err := lint.WriteText(os.Stdout, []lint.Report{report}, lint.TextOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(1)
}
