// Command validate checks an agent's answer and prints each diagnostic with
// its line and column: validate FILE [SECRET_NAME…].
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kobana/workflow/compile"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func run(args []string, out io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(out, "usage: validate FILE [SECRET_NAME…]")
		return 2
	}
	doc, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(out, err)
		return 2
	}
	opts := compile.Options{}
	if len(args) > 1 {
		opts.SecretNames = args[1:]
	}
	_, diags := compile.Compile(doc, opts)
	for _, d := range diags {
		fmt.Fprintf(out, "%s:%d:%d: %s %s: %s\n", args[0], d.Range.Start.Line, d.Range.Start.Column, d.Severity, d.Code, d.Message)
	}
	if diags.HasErrors() {
		return 1
	}
	return 0
}
