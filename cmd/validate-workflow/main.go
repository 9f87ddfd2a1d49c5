// Command validate-workflow checks workflow documents — the agent's
// {"result", "workflow"} output — and prints every problem with its exact
// position, for people (text), programs (json) and code scanning (sarif).
//
// Usage:
//
//	validate-workflow [-format text|json|sarif] [-strict] [-stdin-name NAME] [-secrets-names FILE] [-policy FILE] FILE...
//	validate-workflow lsp [-debounce DURATION] [-secrets-names FILE] [-policy FILE]
//
// FILE "-" reads standard input. The exit status is 0 when no document has
// an error, 1 when one has (or has a warning, with -strict), and 2 for a
// usage error or a file that could not be read. The lsp subcommand runs the
// language server for editors over standard input and output.
package main

import "os"

func main() {
	c := &Command{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	os.Exit(c.Main(os.Args[1:]))
}
