package main

import (
	"io"

	"github.com/kobana/workflow/compile/lint"
)

// Command is one invocation of validate-workflow with its standard streams,
// so that every flag and exit status can be tested in-process.
type Command struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Main runs validate-workflow with args (without the program name) and
// returns the exit status.
func (c *Command) Main(args []string) int {
	if len(args) > 0 && args[0] == "lsp" {
		return c.runLSP(args[1:])
	}
	cli := lint.CLI{Name: "validate-workflow", Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr}
	return cli.Run(args)
}
