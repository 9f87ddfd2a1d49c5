package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/kobana/workflow/mcpserver/internal/version"
)

func init() {
	register("version", "print kobana's version, the commit it was built from and its Go version", versionCommand)
}

const versionUsage = `usage: kobana version [-json]

Prints the module's version (a tag for a kobana installed with go install
MODULE@VERSION, "devel" for a build from a checkout), the commit it was
built from (and whether the work tree had changes), and the Go version it
was built with. A running kobana serve reports the same in the MCP
serverInfo and at /healthz.

flags:
`

func versionCommand(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print it as a JSON object")
	if code, ok := c.parseFlags(fs, versionUsage, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "kobana version: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	info := version.Read()
	if *asJSON {
		b, _ := json.Marshal(info)
		fmt.Fprintln(c.Stdout, string(b))
		return exitOK
	}
	fmt.Fprintln(c.Stdout, info)
	return exitOK
}
