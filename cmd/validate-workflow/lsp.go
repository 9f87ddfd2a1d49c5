package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/internal/secretnames"
	"github.com/kobana/workflow/lsp"
)

const lspUsage = `usage: validate-workflow lsp [-debounce DURATION] [-secrets-names FILE] [-policy FILE]

Runs the language server for workflow documents over standard input and
output (the Language Server Protocol, for editors). See docs/editors.md.

  -debounce       how long to wait after a change before checking the document (default %s; 0 checks at once)
  -secrets-names  a file of secret names to offer in completion, one per line
                  or separated by commas or spaces (or a JSON object's keys)
                  (default: a %s file in the document's directory or a parent, up to the workspace root)
  -policy         a JSON file of where requests may go, {"secrets": {"NAME":
                  ["host", …]}, "egress": ["host", …]}: a step whose literal
                  host it refuses is an error (the client's initializationOptions
                  "policy" replaces it)

The environment variable KOBANA_SECRETS may list more secret names, separated
by commas or spaces, as the file does (see docs/editors.md). Names only: the
server never reads a secret's value.

Exit status: 0 after the editor shut the server down, 1 when the session ended
without a shutdown or the stream broke, 2 for a usage error.
`

// getenv reads the environment; tests replace it.
var getenv = os.Getenv

// runLSP serves the language server on the command's standard streams.
func (c *Command) runLSP(args []string) int {
	fs := flag.NewFlagSet("validate-workflow lsp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	debounce := fs.Duration("debounce", lsp.DefaultDebounce, "")
	namesFile := fs.String("secrets-names", "", "")
	policyFile := fs.String("policy", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(c.Stdout, lspUsage, lsp.DefaultDebounce, lsp.SecretNamesFile)
			return 0
		}
		fmt.Fprintf(c.Stderr, "validate-workflow lsp: %v\n", err)
		fmt.Fprintf(c.Stderr, lspUsage, lsp.DefaultDebounce, lsp.SecretNamesFile)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "validate-workflow lsp: unexpected argument %q: the documents come from the editor\n", fs.Arg(0))
		return 2
	}
	if *debounce < 0 {
		fmt.Fprintf(c.Stderr, "validate-workflow lsp: -debounce %s is negative\n", *debounce)
		return 2
	}
	var policy *egress.Policy
	if *policyFile != "" {
		b, err := os.ReadFile(*policyFile)
		if err == nil {
			policy, err = egress.ParsePolicy(b)
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "validate-workflow lsp: -policy: %v\n", err)
			return 2
		}
	}
	names, problems := secretnames.Parse([]byte(getenv("KOBANA_SECRETS")))
	for _, p := range problems {
		// Each says where, never what: a misplaced value must not reach a log.
		fmt.Fprintf(c.Stderr, "validate-workflow lsp: KOBANA_SECRETS: %s\n", p)
	}
	srv := lsp.New(lsp.Options{
		Debounce:        *debounce,
		SecretNames:     names,
		SecretNamesFile: *namesFile,
		Policy:          policy,
		Version:         moduleVersion(),
		Log:             c.Stderr,
	})
	if err := srv.Serve(c.Stdin, c.Stdout); err != nil {
		if !errors.Is(err, lsp.ErrNoShutdown) {
			fmt.Fprintf(c.Stderr, "validate-workflow lsp: %v\n", err)
		}
		return 1
	}
	return 0
}

// moduleVersion is the version the binary was built from, when known.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return ""
}
