// Command kobana validates and runs workflows and serves the Kobana MCP products.
//
// Usage:
//
//	kobana validate [flags] FILE...   lint workflow documents (same as validate-workflow)
//	kobana run -workflow FILE ...      run a workflow behind the SSRF guard
//	kobana demo                        run the complete example against a local receiver
//	kobana serve [flags]               serve the MCP products over stdio or HTTP
//	kobana token create ...            mint an access token for the MCP server
package main

import "os"

func main() {
	cmd := &Command{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	os.Exit(cmd.Main(os.Args[1:]))
}
