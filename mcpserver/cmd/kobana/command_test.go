package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpGoesToStandardOutput: asking for help is not an error: the usage
// goes to standard output and the exit status is 0, in every subcommand.
func TestHelpGoesToStandardOutput(t *testing.T) {
	var cases [][]string
	for _, h := range []string{"-h", "-help", "--help"} {
		cases = append(cases, []string{h})
		for name := range subcommands {
			cases = append(cases, []string{name, h})
		}
		cases = append(cases, []string{"token", "create", h}, []string{"token", "revoke", h})
	}
	cases = append(cases, []string{"help"})
	for name := range subcommands {
		cases = append(cases, []string{"help", name})
	}
	for _, args := range cases {
		var stdout, stderr bytes.Buffer
		c := &Command{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
		if code := c.Main(args); code != exitOK || !strings.Contains(stdout.String(), "usage: ") || stderr.Len() != 0 {
			t.Errorf("kobana %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
	}
}

// TestUsageErrorsGoToStandardError: a usage error says what is wrong on
// standard error, prints nothing on standard output, and exits 2.
func TestUsageErrorsGoToStandardError(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"help", "frobnicate"},
		{"run", "-nope"},
		{"run"},
		{"demo", "extra"},
		{"serve", "-nope"},
		{"token"},
		{"token", "mint"},
		{"token", "create", "-nope"},
		{"token", "revoke", "-nope"},
		{"validate", "-nope", "x.json"},
	} {
		var stdout, stderr bytes.Buffer
		c := &Command{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
		if code := c.Main(args); code != exitUsage || stdout.Len() != 0 || stderr.Len() == 0 {
			t.Errorf("kobana %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
	}
}
