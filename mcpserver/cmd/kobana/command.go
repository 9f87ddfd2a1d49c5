package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
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
	// Ready, when set, is called once by serve when it is serving, with the
	// address of each network listener by its name ("http"); a server on
	// standard input and output alone reports none.
	Ready func(addrs map[string]net.Addr)
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
	if len(args) == 0 {
		c.usage(c.Stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		c.usage(c.Stdout)
		return exitOK
	case "help":
		if len(args) == 1 {
			c.usage(c.Stdout)
			return exitOK
		}
		args = []string{args[1], "-h"} // kobana help run = kobana run -h
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
	fmt.Fprintln(w, "\n`kobana help COMMAND` (or `kobana COMMAND -h`) describes one command.")
}

// parseFlags parses args with fs, whose usage text is head followed by the
// flags' defaults. -h prints the usage to standard output; a bad flag prints
// the error and the usage to standard error. When ok is false the
// subcommand returns code.
func (c *Command) parseFlags(fs *flag.FlagSet, head string, args []string) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if err == nil {
		return exitOK, true
	}
	w := c.Stderr
	code = exitUsage
	if errors.Is(err, flag.ErrHelp) {
		w, code = c.Stdout, exitOK
	} else {
		fmt.Fprintf(c.Stderr, "%s: %v\n", fs.Name(), err)
	}
	fmt.Fprint(w, head)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	return code, false
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
