package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

func init() {
	register("run", "run a workflow behind the SSRF guard and print its run record", runCommand)
}

const runUsage = `usage: kobana run -workflow FILE [-eml FILE] [-secrets FILE] [-facts FILE]
                  [-allow CIDR]... [-record FILE] [-timeout DURATION]

Validates the workflow document (the agent's {"result", "workflow"} output),
then runs its steps in order behind the SSRF guard. One progress line per
step goes to standard error; the redacted run record, as indented JSON, goes
to -record (standard output when absent) — the record the Inbox keeps. A
document that does not validate sends nothing: its diagnostics go to
standard error, and its record is a failed run that says why. FILE "-" for
-workflow reads standard input.

  -secrets  a JSON object KEY → value, the workspace secrets (${{secrets.KEY}})
  -facts    a JSON object of run facts without the "kobana." prefix, e.g.
            {"email_id": "em_42", "env": "sandbox"}; env is development,
            sandbox or production, app_url an absolute http(s) URL,
            inbox_email a bare address; kobana.now is stamped by the
            executor when each step starts and cannot be set
  -eml      the triggering e-mail, for ${{email.attachments.N}}
  -allow    a network the guard lets through although the deny-list covers
            it (e.g. 127.0.0.1/32 for a local test server); repeatable

Exit status: 0 the run succeeded, 1 the run failed (a step failed or was
skipped), 2 usage, unreadable input or a document that did not validate
(nothing was sent).

flags:
`

// runFlags are the parsed flags of kobana run.
type runFlags struct {
	workflowFlags
	secrets, record string
	timeout         time.Duration
}

func runCommand(c *Command, args []string) int {
	var f runFlags
	fs := flag.NewFlagSet("kobana run", flag.ContinueOnError)
	f.register(fs, "run")
	fs.StringVar(&f.secrets, "secrets", "", "a JSON file of secrets: {\"KEY\": \"value\", …}")
	fs.StringVar(&f.record, "record", "", "write the run record to this file instead of standard output")
	fs.DurationVar(&f.timeout, "timeout", executor.DefaultRunTimeout, "deadline of the whole run")
	if code, ok := c.parseFlags(fs, runUsage, args); !ok {
		return code
	}
	if !f.check(c, fs) {
		return exitUsage
	}
	switch {
	case f.timeout <= 0:
		fmt.Fprintf(c.Stderr, "kobana run: -timeout must be positive, not %s\n", f.timeout)
		return exitUsage
	}
	in, err := f.load(c)
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana run: %v\n", in.red.String(err.Error()))
		return exitUsage
	}
	defer in.close()
	return in.run(c, &f)
}

// runInputs are kobana run's inputs, read and checked before anything is
// sent.
type runInputs struct {
	secrets     resolve.SecretMap
	red         *resolve.Redactor // hides the secrets in everything printed
	facts       resolve.FactMap
	attachments resolve.AttachmentsFunc
	report      lint.Report // the document and its diagnostics
	out         io.Writer   // where the record goes
	close       func()
}

// load reads and checks every input: secrets, facts, the e-mail, the
// document, and opens the record's destination. Its errors are usage
// errors; they may quote what they read, so the caller redacts them.
func (f *runFlags) load(c *Command) (*runInputs, error) {
	in := &runInputs{out: c.Stdout, close: func() {}}
	var err error
	if in.secrets, err = loadSecrets(f.secrets); err != nil {
		return in, err
	}
	in.red = resolve.NewRedactor(in.secrets)
	if in.facts, err = loadFacts(f.facts); err != nil {
		return in, err
	}
	if f.eml != "" {
		msg, err := eml.Open(f.eml)
		if err != nil {
			return in, err
		}
		in.attachments = func() (resolve.Attachments, error) { return msg, nil }
	}
	if in.report, err = f.readWorkflow(c); err != nil {
		return in, err
	}
	if f.record != "" {
		file, err := os.OpenFile(f.record, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return in, fmt.Errorf("cannot write the record: %w", err)
		}
		in.out, in.close = file, func() { file.Close() }
	}
	return in, nil
}

// loadSecrets reads -secrets: a JSON object of strings whose keys a
// reference can name. No file is no secrets.
func loadSecrets(path string) (resolve.SecretMap, error) {
	secrets := resolve.SecretMap{}
	if path == "" {
		return secrets, nil
	}
	m, err := readStringObject(path, "secrets")
	if err != nil {
		return nil, err
	}
	for k, v := range m {
		if !lang.IsName(k) {
			return nil, fmt.Errorf("secrets file %s: key %q cannot be referenced: a secret key is letters, digits, '_' and '-'", path, k)
		}
		secrets[k] = v
	}
	return secrets, nil
}

// loadFacts reads -facts: a JSON object of strings, each a fact a run may be
// given (see resolve.CheckFact). No file is no facts.
func loadFacts(path string) (resolve.FactMap, error) {
	facts := resolve.FactMap{}
	if path == "" {
		return facts, nil
	}
	m, err := readStringObject(path, "facts")
	if err != nil {
		return nil, err
	}
	for k, v := range m {
		if err := resolve.CheckFact(k, v); err != nil {
			return nil, fmt.Errorf("facts file %s: %w", path, err)
		}
		facts[k] = v
	}
	return facts, nil
}

// run prints the document's diagnostics, runs it (a document that does not
// validate sends nothing) and writes its record.
func (in *runInputs) run(c *Command, f *runFlags) int {
	file := in.report.File
	if in.report.Errors() > 0 || in.report.Warnings() > 0 {
		// The document may hold a secret's value verbatim: the quoted
		// source lines are redacted like everything else printed.
		if err := lint.WriteText(c.Stderr, []lint.Report{in.report}, lint.TextOptions{Redact: in.red.String}); err != nil {
			fmt.Fprintf(c.Stderr, "kobana run: %v\n", err)
			return exitUsage
		}
	}
	ctx, stop := signal.NotifyContext(c.context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ex := executor.New(executor.Options{Guard: &guard.Guard{Allow: f.allow}, RunTimeout: f.timeout})
	// The run's journal prints a progress line as each step ends.
	progress := runrecord.DoneFunc(func(s runrecord.Step) { fmt.Fprintln(c.Stderr, in.red.String(progressLine(s))) })
	rec := inbox.ReadAnswer(in.report.Source).Run(ctx, ex, executor.Env{Secrets: in.secrets, Facts: in.facts, Attachments: in.attachments, Journal: progress})
	switch {
	case !rec.Valid():
		fmt.Fprintf(c.Stderr, "kobana run: %s is not a valid workflow; nothing was sent\n", file)
	case len(rec.Steps) == 0:
		// Valid, and no workflow (or an empty one): the agent asked for no action.
		fmt.Fprintf(c.Stderr, "kobana run: %s has no workflow; nothing to run\n", file)
	default:
		fmt.Fprintln(c.Stderr, in.red.String(runSummary(&rec.Run)))
	}
	if err := writeRecord(in.out, rec); err != nil {
		fmt.Fprintf(c.Stderr, "kobana run: writing the record: %v\n", err)
		return exitFailure
	}
	if f.record != "" {
		fmt.Fprintf(c.Stderr, "kobana run: record written to %s\n", f.record)
	}
	switch {
	case !rec.Valid():
		return exitUsage
	case rec.Status != runrecord.RunSucceeded:
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

// progressLine describes one finished step on one line, e.g.
//
//	step 0 "crea la cuenta a pagar": succeeded, status 201, 12ms
//	step 2: failed: not sent: no secret "X" [reference]
func progressLine(s runrecord.Step) string {
	l := stepLine{Index: s.Index, Label: s.Label, State: s.State.String(), Sent: s.Request != nil,
		DurationMS: s.DurationMS, Error: s.Error, Reason: string(s.Reason)}
	if s.Response != nil {
		l.Status = s.Response.Status
	}
	return l.String()
}

// stepLine is what a one-line summary of a step shows; kobana run prints
// it from the executor's record, the demo from the record read back
// through MCP.
type stepLine struct {
	Index      int
	Label      string
	State      string
	Status     int // 0: no response
	Sent       bool
	DurationMS int64
	Error      string
	Reason     string
}

// String implements fmt.Stringer.
func (s stepLine) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d", s.Index)
	if s.Label != "" {
		fmt.Fprintf(&b, " %q", s.Label)
	}
	fmt.Fprintf(&b, ": %s", s.State)
	if s.Status != 0 {
		fmt.Fprintf(&b, ", status %d", s.Status)
	}
	if s.Sent {
		fmt.Fprintf(&b, ", %dms", s.DurationMS)
	}
	if s.Error != "" {
		// Errors of skipped steps already start with "skipped: ".
		fmt.Fprintf(&b, ": %s", printable(strings.TrimPrefix(s.Error, s.State+": ")))
	}
	if s.Reason != "" {
		fmt.Fprintf(&b, " [%s]", s.Reason)
	}
	return b.String()
}

// runSummary is the closing line: the run's status and its step counts.
func runSummary(rec *runrecord.Run) string {
	counts := map[runrecord.State]int{}
	for _, s := range rec.Steps {
		counts[s.State]++
	}
	var parts []string
	for _, st := range []runrecord.State{runrecord.Succeeded, runrecord.Failed, runrecord.Skipped, runrecord.Unknown} {
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

// writeRecord writes a run record as indented JSON followed by a newline.
func writeRecord(w io.Writer, rec any) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
