package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/kobana/workflow/compile/lint"
)

// parseAllow reads a value of -allow: a network in CIDR notation, masked to
// its network address (127.0.0.1/8 is 127.0.0.0/8), so the network the
// guard lets through is the one every message and record names.
func parseAllow(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a network in CIDR notation (such as 127.0.0.1/32 or ::1/128)", s)
	}
	return p.Masked(), nil
}

// allowFlag is the repeatable -allow flag of run and serve: networks the
// SSRF guard lets through although its deny-list covers them.
type allowFlag []netip.Prefix

const allowHelp = "a network (CIDR) the SSRF guard lets through although its deny-list covers it, e.g. 127.0.0.1/32 for a local receiver (repeatable)"

func (a *allowFlag) String() string {
	if a == nil {
		return ""
	}
	s := make([]string, len(*a))
	for i, p := range *a {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Set implements flag.Value.
func (a *allowFlag) Set(s string) error {
	p, err := parseAllow(s)
	if err != nil {
		return err
	}
	*a = append(*a, p)
	return nil
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set implements flag.Value.
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// workflowFlags are the flags run and plan share: the workflow document,
// the triggering e-mail, the run facts and the guard's exceptions.
type workflowFlags struct {
	workflow, eml, facts string
	allow                allowFlag
}

// register adds the flags to fs; verb is what the command does with the
// document ("run", "plan").
func (f *workflowFlags) register(fs *flag.FlagSet, verb string) {
	fs.StringVar(&f.workflow, "workflow", "", "the workflow document to "+verb+" (required; - reads standard input)")
	fs.StringVar(&f.eml, "eml", "", "the triggering e-mail (.eml) whose attachments steps may send")
	fs.StringVar(&f.facts, "facts", "", "a JSON file of run facts without the kobana. prefix: {\"email_id\": \"em_42\", …}")
	fs.Var(&f.allow, "allow", allowHelp)
}

// check reports, on standard error, a use of fs the flags cannot mean — an
// argument, a missing -workflow — and returns false when there is one.
func (f *workflowFlags) check(c *Command, fs *flag.FlagSet) bool {
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(c.Stderr, "%s: unexpected argument %q (the workflow is given with -workflow FILE)\n", fs.Name(), fs.Arg(0))
		return false
	case f.workflow == "":
		fmt.Fprintf(c.Stderr, "%s: -workflow FILE is required (%s -h describes every flag)\n", fs.Name(), fs.Name())
		return false
	}
	return true
}

// readWorkflow reads the document -workflow names: a file, or standard
// input for "-". The error is the report's, or says there is no input.
func (f *workflowFlags) readWorkflow(c *Command) (lint.Report, error) {
	switch {
	case f.workflow != "-":
		r := lint.Files(lint.Options{}, f.workflow)[0]
		return r, r.Err
	case c.Stdin == nil:
		return lint.Report{}, errors.New("-workflow -: there is no standard input to read")
	}
	r := lint.Reader("<stdin>", c.Stdin, lint.Options{})
	return r, r.Err
}

// scheduleFlag is a list of delays, comma-separated ("1m,5m,1h"), or
// "none" for an empty list; unset, it is nil (the default schedule).
type scheduleFlag struct {
	d   []time.Duration
	set bool
}

func (f *scheduleFlag) String() string {
	if !f.set {
		return ""
	}
	if len(f.d) == 0 {
		return "none"
	}
	parts := make([]string, len(f.d))
	for i, d := range f.d {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func (f *scheduleFlag) Set(s string) error {
	f.set, f.d = true, []time.Duration{}
	if strings.TrimSpace(s) == "none" {
		return nil
	}
	for _, p := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration such as 5m or 2h: give delays separated by commas, or none", strings.TrimSpace(p))
		}
		f.d = append(f.d, d)
	}
	return nil
}

// schedule is the list given, nil when the flag was not set.
func (f *scheduleFlag) schedule() []time.Duration {
	if !f.set {
		return nil
	}
	return f.d
}
