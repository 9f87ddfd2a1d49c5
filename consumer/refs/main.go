// Command refs lists the references of a template: refs TEMPLATE.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kobana/workflow/lang"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func run(args []string, out io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(out, "usage: refs TEMPLATE")
		return 2
	}
	t, err := lang.Parse(args[0])
	for _, r := range t.Refs() {
		fmt.Fprintf(out, "%d-%d %s %s\n", r.Span.Start, r.Span.End, r.Namespace, r)
	}
	if err != nil {
		fmt.Fprintln(out, err)
		return 1
	}
	return 0
}
