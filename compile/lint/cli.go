package lint

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/internal/secretnames"
)

// Exit statuses of the command line.
const (
	// ExitOK: no errors (and, with -strict, no warnings).
	ExitOK = 0
	// ExitProblems: some document has an error, or a warning with -strict.
	ExitProblems = 1
	// ExitUsage: bad flags, no files, or a file that could not be read.
	ExitUsage = 2
)

var formats = [...]string{"text", "json", "sarif"}

// CLI is the validate-workflow command line, shared by the validate-workflow
// program and `kobana validate`.
type CLI struct {
	// Name is the program name used in usage and error messages.
	Name   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

const usageText = `usage: %[1]s [-format text|json|sarif] [-strict] [-stdin-name NAME] [-secrets-names FILE] [-policy FILE] FILE...

Checks workflow documents (the agent's {"result", "workflow"} output) and
prints every problem with its position. FILE "-" reads standard input.
With -secrets-names, a reference to a secret not listed is an error; with
-policy ({"secrets": {"NAME": ["host", …]}, "egress": ["host", …]}), so is
a step whose literal host the policy refuses.

Exit status: 0 no errors, 1 errors (or warnings with -strict),
2 usage error or a file that could not be read.

flags:
`

// Run lints the files named by args (flags may come before or between
// them) and returns the exit status: ExitOK, ExitProblems or ExitUsage.
func (c *CLI) Run(args []string) int {
	name := c.Name
	if name == "" {
		name = "validate-workflow"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "text", "output format: text, json or sarif")
	strict := fs.Bool("strict", false, "exit with status 1 on warnings too")
	stdinName := fs.String("stdin-name", "<stdin>", "the file name reported for standard input (-)")
	secretsFile := fs.String("secrets-names", "", "a file listing the workspace's secret names (names only, as .kobana-secrets)")
	policyFile := fs.String("policy", "", `a JSON file of where requests may go: {"secrets": {"NAME": ["host", …]}, "egress": ["host", …]}`)
	usage := func(w io.Writer) {
		fmt.Fprintf(w, usageText, name)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}

	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage(c.Stdout)
				return ExitOK
			}
			fmt.Fprintf(c.Stderr, "%s: %v\n", name, err)
			usage(c.Stderr)
			return ExitUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			files = append(files, rest...) // everything after -- is a file
			break
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
	if !validFormat(*format) {
		fmt.Fprintf(c.Stderr, "%s: unknown format %q: use %s\n", name, *format, strings.Join(formats[:], ", "))
		return ExitUsage
	}
	if len(files) == 0 {
		fmt.Fprintf(c.Stderr, "%s: no files given (use - to read standard input)\n", name)
		usage(c.Stderr)
		return ExitUsage
	}

	opts, ok := c.options(name, *secretsFile, *policyFile)
	if !ok {
		return ExitUsage
	}
	reports := make([]Report, len(files))
	stdinUsed := false
	for i, f := range files {
		if f != "-" {
			reports[i] = file(f, opts)
			continue
		}
		if stdinUsed {
			reports[i] = Report{File: *stdinName, Err: errors.New("standard input is named more than once")}
			continue
		}
		stdinUsed = true
		if c.Stdin == nil {
			reports[i] = Report{File: *stdinName, Err: errors.New("no standard input")}
			continue
		}
		reports[i] = Reader(*stdinName, c.Stdin, opts)
	}

	readErrors := false
	for _, r := range reports {
		if r.Err != nil {
			fmt.Fprintf(c.Stderr, "%s: %s: %v\n", name, r.File, unwrapPath(r.Err, r.File))
			readErrors = true
		}
	}
	var err error
	switch *format {
	case "json":
		err = WriteJSON(c.Stdout, reports)
	case "sarif":
		err = WriteSARIF(c.Stdout, reports)
	default:
		err = WriteText(c.Stdout, reports, TextOptions{})
	}
	status := ExitOK
	if Failed(reports, *strict) {
		status = ExitProblems
	}
	if readErrors {
		status = ExitUsage
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "%s: %v\n", name, err)
		status = ExitUsage
	}
	return status
}

// options reads the -secrets-names and -policy files; a problem is
// printed and ok is false.
func (c *CLI) options(name, secretsFile, policyFile string) (opts Options, ok bool) {
	if secretsFile != "" {
		b, err := os.ReadFile(secretsFile)
		if err != nil {
			fmt.Fprintf(c.Stderr, "%s: -secrets-names: %v\n", name, err)
			return opts, false
		}
		names, problems := secretnames.Parse(b)
		for _, p := range problems {
			fmt.Fprintf(c.Stderr, "%s: -secrets-names: %s: %s\n", name, secretsFile, p)
		}
		opts.SecretNames = append([]string{}, names...)
	}
	if policyFile != "" {
		b, err := os.ReadFile(policyFile)
		if err != nil {
			fmt.Fprintf(c.Stderr, "%s: -policy: %v\n", name, err)
			return opts, false
		}
		p, err := egress.ParsePolicy(b)
		if err != nil {
			fmt.Fprintf(c.Stderr, "%s: -policy: %s: %v\n", name, policyFile, err)
			return opts, false
		}
		opts.Policy = p
	}
	return opts, true
}

// unwrapPath drops the file name from an error that already starts with it
// after its operation ("open x.json: …"), so the name is printed once.
func unwrapPath(err error, file string) string {
	msg := err.Error()
	for _, op := range []string{"open ", "read "} {
		if p := op + file + ": "; strings.HasPrefix(msg, p) {
			return strings.TrimPrefix(msg, op+file+": ")
		}
	}
	return msg
}

func validFormat(f string) bool {
	for _, x := range formats {
		if x == f {
			return true
		}
	}
	return false
}
