package main

import "github.com/kobana/workflow/compile/lint"

func init() {
	register("validate", "lint workflow documents (same as validate-workflow)", func(c *Command, args []string) int {
		cli := lint.CLI{Name: "kobana validate", Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr}
		return cli.Run(args)
	})
}
