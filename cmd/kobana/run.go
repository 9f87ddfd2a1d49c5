package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
)

func init() {
	register("run", "run a workflow behind the SSRF guard and print its run record", runCommand)
}

const runUsage = `usage: kobana run -workflow FILE [-eml FILE] [-secrets FILE] [-facts FILE]
                  [-allow CIDR]... [-record FILE] [-timeout DURATION]

Validates the workflow document (the agent's {"result", "workflow"} output),
then runs its steps in order behind the SSRF guard. One progress line per
step goes to standard error; the redacted run record, as indented JSON, goes
to -record (standard output when absent). FILE "-" for -workflow reads
standard input.

  -secrets  a JSON object KEY → value, the workspace secrets (${{secrets.KEY}})
  -facts    a JSON object of run facts without the "kobana." prefix, e.g.
            {"email_id": "em_42", "env": "sandbox"}; kobana.now is stamped
            by the executor when each step starts and cannot be set
  -eml      the triggering e-mail, for ${{email.attachments.N}}
  -allow    a network the guard lets through although the deny-list covers
            it (e.g. 127.0.0.1/32 for a local test server); repeatable

Exit status: 0 the run succeeded, 1 the run failed (a step failed or was
skipped), 2 invalid input or usage (nothing was sent).

flags:
`

// runFlags are the parsed flags of kobana run.
type runFlags struct {
	workflow, eml, secrets, facts, record string
	allow                                 []netip.Prefix
	timeout                               time.Duration
}

func runCommand(c *Command, args []string) int {
	var f runFlags
	fs := flag.NewFlagSet("kobana run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.workflow, "workflow", "", "the workflow document to run (required; - reads standard input)")
	fs.StringVar(&f.eml, "eml", "", "the triggering e-mail (.eml) whose attachments steps may send")
	fs.StringVar(&f.secrets, "secrets", "", "a JSON file of secrets: {\"KEY\": \"value\", …}")
	fs.StringVar(&f.facts, "facts", "", "a JSON file of run facts without the kobana. prefix: {\"email_id\": \"em_42\", …}")
	fs.StringVar(&f.record, "record", "", "write the run record to this file instead of standard output")
	fs.DurationVar(&f.timeout, "timeout", executor.DefaultRunTimeout, "deadline of the whole run")
	fs.Func("allow", "allow this network (CIDR) although the deny-list covers it; repeatable", func(s string) error {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return fmt.Errorf("%q is not a network in CIDR notation (such as 127.0.0.1/32 or ::1/128)", s)
		}
		f.allow = append(f.allow, p.Masked())
		return nil
	})
	usage := func(w io.Writer) {
		fmt.Fprint(w, runUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(c.Stdout)
			return exitOK
		}
		fmt.Fprintf(c.Stderr, "kobana run: %v\n", err)
		usage(c.Stderr)
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(c.Stderr, "kobana run: unexpected argument %q (the workflow is given with -workflow FILE)\n", fs.Arg(0))
		return exitUsage
	case f.workflow == "":
		fmt.Fprintln(c.Stderr, "kobana run: -workflow FILE is required")
		usage(c.Stderr)
		return exitUsage
	case f.timeout <= 0:
		fmt.Fprintf(c.Stderr, "kobana run: -timeout must be positive, not %s\n", f.timeout)
		return exitUsage
	}
	return f.run(c)
}

// run validates every input, then runs the workflow and writes its record.
func (f *runFlags) run(c *Command) int {
	secrets := resolve.SecretMap{}
	if f.secrets != "" {
		m, err := readStringObject(f.secrets, "secrets")
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana run: %v\n", err)
			return exitUsage
		}
		for k, v := range m {
			if !isSegment(k) {
				fmt.Fprintf(c.Stderr, "kobana run: secrets file %s: key %q cannot be referenced: a secret key is letters, digits, '_' and '-'\n", f.secrets, k)
				return exitUsage
			}
			secrets[k] = v
		}
	}
	red := resolve.NewRedactor(secrets)

	var report lint.Report
	if f.workflow == "-" {
		report = lint.Read("<stdin>", c.Stdin)
	} else {
		report = lint.ReadFile(f.workflow)
	}
	if report.Err != nil {
		fmt.Fprintf(c.Stderr, "kobana run: %v\n", report.Err)
		return exitUsage
	}
	if report.Errors() > 0 || report.Warnings() > 0 {
		// The document may hold a secret's value verbatim: the quoted
		// source lines are redacted like everything else printed.
		var diags bytes.Buffer
		if err := lint.WriteText(&diags, []lint.Report{report}, lint.TextOptions{}); err != nil {
			fmt.Fprintf(c.Stderr, "kobana run: %v\n", err)
			return exitUsage
		}
		io.WriteString(c.Stderr, red.String(diags.String()))
	}
	if report.Errors() > 0 {
		fmt.Fprintf(c.Stderr, "kobana run: %s is not a valid workflow; nothing was sent\n", report.File)
		return exitUsage
	}

	facts := resolve.FactMap{}
	if f.facts != "" {
		m, err := readStringObject(f.facts, "facts")
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana run: %v\n", red.String(err.Error()))
			return exitUsage
		}
		for k, v := range m {
			if err := checkFactKey(k); err != nil {
				fmt.Fprintf(c.Stderr, "kobana run: facts file %s: %v\n", f.facts, err)
				return exitUsage
			}
			facts[k] = v
		}
	}

	var attachments resolve.AttachmentsFunc
	if f.eml != "" {
		msg, err := eml.Open(f.eml)
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana run: %v\n", err)
			return exitUsage
		}
		attachments = func() (resolve.Attachments, error) { return msg, nil }
	}

	out := c.Stdout
	if f.record != "" {
		file, err := os.OpenFile(f.record, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana run: cannot write the record: %v\n", err)
			return exitUsage
		}
		defer file.Close()
		out = file
	}

	plan, _ := compile.Compile(report.Source)
	var rec *executor.RunRecord
	if plan == nil || len(plan.Steps) == 0 {
		// Valid, and no workflow (or an empty one): the agent asked for no action.
		fmt.Fprintf(c.Stderr, "kobana run: %s has no workflow; nothing to run\n", report.File)
		now := time.Now().UTC()
		rec = &executor.RunRecord{Status: executor.RunSucceeded, StartedAt: now, FinishedAt: now, Steps: []executor.StepRecord{}}
	} else {
		ctx, stop := signal.NotifyContext(c.context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		ex := executor.New(executor.Options{
			Guard:      &guard.Guard{Allow: f.allow},
			RunTimeout: f.timeout,
			OnStep:     func(s executor.StepRecord) { fmt.Fprintln(c.Stderr, red.String(progressLine(s))) },
		})
		rec = ex.Run(ctx, plan, executor.Env{Secrets: secrets, Facts: facts, Attachments: attachments})
		fmt.Fprintln(c.Stderr, red.String(runSummary(rec)))
	}

	if err := writeRecord(out, rec); err != nil {
		fmt.Fprintf(c.Stderr, "kobana run: writing the record: %v\n", err)
		return exitFailure
	}
	if f.record != "" {
		fmt.Fprintf(c.Stderr, "kobana run: record written to %s\n", f.record)
	}
	if rec.Status != executor.RunSucceeded {
		return exitFailure
	}
	return exitOK
}

// readStringObject reads a JSON object whose values are all strings. Its
// errors never quote a value: the file may hold secrets.
func readStringObject(path, what string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s file: %w", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("%s file %s: not valid JSON (at byte %d)", what, path, syn.Offset)
		}
		return nil, fmt.Errorf("%s file %s: want a JSON object {\"KEY\": \"value\", …}", what, path)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s file %s: more than one JSON value", what, path)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("%s file %s: the value of %q must be a string", what, path, k)
		}
		out[k] = s
	}
	return out, nil
}

// checkFactKey accepts the kobana.* facts a run may be given.
func checkFactKey(k string) error {
	switch {
	case k == "now":
		return errors.New(`"now" cannot be set: kobana.now is stamped by the executor when each step starts`)
	case strings.HasPrefix(k, "kobana."):
		return fmt.Errorf("key %q: write the fact without the \"kobana.\" prefix, as %q", k, strings.TrimPrefix(k, "kobana."))
	case !lang.IsKobanaKey(k):
		var known []string
		for _, key := range lang.KobanaKeys() {
			if key != "now" {
				known = append(known, key)
			}
		}
		return fmt.Errorf("unknown fact %q; the facts are %s", k, strings.Join(known, ", "))
	}
	return nil
}

// isSegment reports whether k is a reference segment: [A-Za-z0-9_-]+.
func isSegment(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// progressLine describes one finished step on one line, e.g.
//
//	step 0 "crea la cuenta a pagar": succeeded, status 201, 12ms
//	step 2: failed: not sent: no secret "X" [reference]
func progressLine(s executor.StepRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d", s.Index)
	if s.Label != "" {
		fmt.Fprintf(&b, " %q", s.Label)
	}
	fmt.Fprintf(&b, ": %s", s.State)
	if s.Response != nil {
		fmt.Fprintf(&b, ", status %d", s.Response.Status)
	}
	if s.Request != nil {
		fmt.Fprintf(&b, ", %dms", s.DurationMS)
	}
	if s.Error != "" {
		// Errors of skipped steps already start with "skipped: ".
		fmt.Fprintf(&b, ": %s", printable(strings.TrimPrefix(s.Error, s.State.String()+": ")))
	}
	if s.Reason != "" {
		fmt.Fprintf(&b, " [%s]", s.Reason)
	}
	return b.String()
}

// runSummary is the closing line: the run's status and its step counts.
func runSummary(rec *executor.RunRecord) string {
	counts := map[resolve.State]int{}
	for _, s := range rec.Steps {
		counts[s.State]++
	}
	var parts []string
	for _, st := range []resolve.State{resolve.StateSucceeded, resolve.StateFailed, resolve.StateSkipped} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no steps")
	}
	return fmt.Sprintf("run %s: %s", rec.Status, strings.Join(parts, ", "))
}

// printable replaces control and other non-printing characters, which a
// response or a document could use to rewrite the terminal, with U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) || r == ' ' {
			return r
		}
		return '\uFFFD'
	}, s)
}

// writeRecord writes rec as indented JSON followed by a newline.
func writeRecord(w io.Writer, rec *executor.RunRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
