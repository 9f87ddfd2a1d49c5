package main

import (
	"context"
	"fmt"
	"io"
	"sort"
)

// Command is one invocation of the kobana program with its standard streams,
// so that every subcommand, flag and exit code can be tested in-process.
type Command struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; nil means an empty environment.
	Getenv func(string) string
	// Context, when set, bounds long-running subcommands (serve, run, demo).
	Context context.Context
}

// subcommand is one verb of the kobana program.
type subcommand struct {
	summary string
	run     func(c *Command, args []string) int
}

// subcommands is filled by each subcommand's file in its init function.
var subcommands = map[string]subcommand{}

func register(name, summary string, run func(c *Command, args []string) int) {
	subcommands[name] = subcommand{summary: summary, run: run}
}

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Main runs the subcommand named by args[0] and returns the process exit code.
func (c *Command) Main(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		c.usage(c.Stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(c.Stderr, "kobana: unknown command %q\n", args[0])
		c.usage(c.Stderr)
		return exitUsage
	}
	return sc.run(c, args[1:])
}

func (c *Command) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kobana COMMAND [flags]\n\ncommands:")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, subcommands[n].summary)
	}
}

func (c *Command) getenv(key string) string {
	if c.Getenv == nil {
		return ""
	}
	return c.Getenv(key)
}

func (c *Command) context() context.Context {
	if c.Context != nil {
		return c.Context
	}
	return context.Background()
}
