package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kobana/workflow/mcpserver/playground"
)

func init() {
	register("playground", "write the browser playground as static files", playgroundCommand)
}

const playgroundUsage = `usage: kobana playground -out DIR

Writes the browser playground — the page, its editor and the WebAssembly
module of the project's compiler, language server and dry run — into DIR as
static files any web server can serve (.wasm as application/wasm). kobana
serve -http serves the same page at /playground/.

A kobana built after ` + "`go generate ./mcpserver/playground`" + ` carries the module; otherwise
this command builds it with the go command, from this module's source (run it
from a clone of github.com/kobana/workflow).

flags:
`

func playgroundCommand(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana playground", flag.ContinueOnError)
	out := fs.String("out", "", "the directory to write the site into (created if missing)")
	if code, ok := c.parseFlags(fs, playgroundUsage, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(c.Stderr, "kobana playground: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case *out == "":
		fmt.Fprintln(c.Stderr, "kobana playground: -out DIR is required")
		return exitUsage
	}
	site, cleanup, err := playgroundSite(c.context(), c)
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana playground: %v\n", err)
		return exitFailure
	}
	defer cleanup()
	if err := playground.Write(site, *out); err != nil {
		fmt.Fprintf(c.Stderr, "kobana playground: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(c.Stderr, "kobana playground: wrote the playground to %s (open index.html through a web server)\n", *out)
	return exitOK
}

// playgroundSite returns the embedded site, with a freshly built module
// when this binary carries none.
func playgroundSite(ctx context.Context, c *Command) (fs.FS, func(), error) {
	site := playground.Files()
	if playground.HasModule(site) {
		return site, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "kobana-playground-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	fmt.Fprintln(c.Stderr, "kobana playground: this kobana carries no WebAssembly module; building it with the go command")
	if err := playground.Build(ctx, dir); err != nil {
		cleanup()
		return nil, nil, err
	}
	return playground.WithModule(site, filepath.Clean(dir)), cleanup, nil
}
