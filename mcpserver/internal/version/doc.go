// Package version says which kobana is running: the module's version, the
// commit it was built from (and whether the work tree had changes), and the
// Go version, as the go command stamped them into the binary. kobana version
// prints it; the MCP server's serverInfo and /healthz carry it.
//
// Entry point: Read returns the running binary's Info.
package version
