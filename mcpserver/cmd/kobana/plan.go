package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/resolve/eml"
)

func init() {
	register("plan", "show what a workflow would send, step by step, without sending anything", planCommand)
}

const planUsage = `usage: kobana plan -workflow FILE [-eml FILE] [-facts FILE] [-responses FILE]
                   [-secrets-names FILE] [-secret NAME]... [-policy FILE]
                   [-allow CIDR]... [-resolve] [-format text|json] [-now TIME]

A dry run: validates the workflow document and prints, for each step, the
request that would be sent — method, URL, headers, body or multipart layout
with sizes — and whether the step would be sent, fail before sending or be
skipped, and why. Nothing is sent and no connection is opened (-resolve
alone looks host names up with the system resolver).

Secrets are shown as their markers, [redacted secrets.KEY]: a plan never
reads a secret's value. What a plan is not given is shown as the reference
it stands for: facts without -facts, attachments without -eml, an earlier
step's response without an example in -responses.

  -secrets-names  the workspace's secret names: one per line ("#" comments),
                  or comma-separated, or the JSON object kobana run -secrets
                  reads (its keys only; its values are never read into the
                  plan); a step that names another secret fails
  -secret         a secret name, the same way (repeatable)
  -policy         where requests may go, as JSON: {"secrets": {"NAME":
                  ["host", …]}, "egress": ["host", …]}; a step whose host is
                  known and that the policy refuses would fail before
                  sending (destination-denied)
  -facts          a JSON object of run facts without the "kobana." prefix, as
                  for kobana run; a fact missing from it fails its step
  -responses      example responses by step index: {"0": {"status": 201,
                  "headers": {…}, "body": {…}}, …}, an array, or a run record
                  written by kobana run -record (the language server reads
                  the same file next to a workflow, W.responses.json)
  -eml            the triggering e-mail, for ${{email.attachments.N}}
  -allow          a network the SSRF guard lets through (as for kobana run)
  -resolve        look host names up to judge their addresses now (the only
                  network use of plan: DNS queries to the system resolver)
  -format         text (default) or json (schema: docs/plan.md)
  -now            kobana.now, RFC 3339 (default: the current time)

Exit status: 0 every step would be sent, 1 some step would fail or be
skipped, 2 usage, unreadable input or a document that does not validate.

flags:
`

// planFlags are the parsed flags of kobana plan.
type planFlags struct {
	workflowFlags
	responses, secretsNames, policy, format, now string
	secrets                                      listFlag
	resolve                                      bool
}

func planCommand(c *Command, args []string) int {
	var f planFlags
	fs := flag.NewFlagSet("kobana plan", flag.ContinueOnError)
	f.register(fs, "plan")
	fs.StringVar(&f.responses, "responses", "", "a JSON file of example responses by step index")
	fs.StringVar(&f.secretsNames, "secrets-names", "", "a file of the workspace's secret names")
	fs.Var(&f.secrets, "secret", "a secret name of the workspace (repeatable)")
	fs.StringVar(&f.policy, "policy", "", "a JSON file of where requests may go: {\"secrets\": {\"NAME\": [hosts]}, \"egress\": [hosts]}")
	fs.BoolVar(&f.resolve, "resolve", false, "look host names up with the system resolver to judge their addresses")
	fs.StringVar(&f.format, "format", "text", "output format: text or json")
	fs.StringVar(&f.now, "now", "", "kobana.now as RFC 3339 (default: now)")
	if code, ok := c.parseFlags(fs, planUsage, args); !ok {
		return code
	}
	if !f.check(c, fs) {
		return exitUsage
	}
	switch {
	case f.format != "text" && f.format != "json":
		fmt.Fprintf(c.Stderr, "kobana plan: -format is text or json, not %q\n", f.format)
		return exitUsage
	}
	in, report, err := f.load(c)
	if msg, ok := in.Email.(*eml.Message); ok {
		defer msg.Close()
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana plan: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(c.context(), 30*time.Second)
	defer cancel()
	p := plan.Make(ctx, report.Source, in)
	if !p.Valid && f.format == "text" {
		if err := lint.WriteText(c.Stderr, []lint.Report{report}, lint.TextOptions{}); err != nil {
			fmt.Fprintf(c.Stderr, "kobana plan: %v\n", err)
		}
	}
	if err := writePlan(c, f.format, p); err != nil {
		fmt.Fprintf(c.Stderr, "kobana plan: writing the plan: %v\n", err)
		return exitFailure
	}
	switch {
	case !p.Valid:
		return exitUsage
	case p.Summary.Fail > 0 || p.Summary.Skip > 0:
		return exitFailure
	}
	for _, s := range p.Steps {
		if s.Example != nil && !s.Example.Succeeds {
			return exitFailure
		}
	}
	return exitOK
}

func writePlan(c *Command, format string, p *plan.Plan) error {
	if format == "json" {
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return err
		}
		_, err = c.Stdout.Write(append(b, '\n'))
		return err
	}
	if !p.Valid {
		// The diagnostics, with their source lines, went to standard error.
		_, err := fmt.Fprintln(c.Stdout, "the document does not validate: nothing would be sent")
		return err
	}
	return plan.WriteText(c.Stdout, p)
}

// load reads every input of the plan. Its errors are usage errors.
func (f *planFlags) load(c *Command) (plan.Inputs, lint.Report, error) {
	in := plan.Inputs{Guard: &guard.Guard{Allow: f.allow}}
	var report lint.Report
	if f.now != "" {
		t, err := time.Parse(time.RFC3339Nano, f.now)
		if err != nil {
			return in, report, fmt.Errorf("-now %q is not an RFC 3339 time such as 2026-11-30T10:00:00Z", f.now)
		}
		in.Now = t
	}
	if f.secretsNames != "" || len(f.secrets) > 0 {
		in.SecretNames = []string{}
	}
	if f.secretsNames != "" {
		data, err := os.ReadFile(f.secretsNames)
		if err != nil {
			return in, report, fmt.Errorf("secret names file: %w", err)
		}
		names, problems := plan.ParseSecretNames(data)
		for _, p := range problems {
			fmt.Fprintf(c.Stderr, "kobana plan: secret names file %s: %s\n", f.secretsNames, p)
		}
		in.SecretNames = append(in.SecretNames, names...)
	}
	for _, s := range f.secrets {
		names, problems := plan.ParseSecretNames([]byte(s))
		if len(problems) > 0 || len(names) == 0 {
			return in, report, fmt.Errorf("-secret: not a secret name (letters, digits, _ or -)")
		}
		in.SecretNames = append(in.SecretNames, names...)
	}
	if f.policy != "" {
		data, err := os.ReadFile(f.policy)
		if err != nil {
			return in, report, fmt.Errorf("policy file: %w", err)
		}
		if in.Policy, err = egress.ParsePolicy(data); err != nil {
			return in, report, fmt.Errorf("policy file %s: %w", f.policy, err)
		}
	}
	if f.facts != "" {
		facts, err := loadFacts(f.facts)
		if err != nil {
			return in, report, err
		}
		in.Facts = facts
	}
	if f.responses != "" {
		data, err := os.ReadFile(f.responses)
		if err != nil {
			return in, report, fmt.Errorf("responses file: %w", err)
		}
		if in.Responses, err = plan.ParseResponses(data); err != nil {
			return in, report, fmt.Errorf("responses file %s: %w", f.responses, err)
		}
	}
	if f.eml != "" {
		msg, err := eml.Open(f.eml)
		if err != nil {
			return in, report, err
		}
		in.Email = msg
	}
	if f.resolve {
		in.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	report, err := f.readWorkflow(c)
	return in, report, err
}
