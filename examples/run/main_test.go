package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out, errb bytes.Buffer
	noEnv := func(string) (string, bool) { return "", false }
	status := run([]string{"-workflow", "../workflows/payable.json", "-eml", "../emails/acme-invoice.eml"}, noEnv, &out, &errb)
	if status != 0 {
		t.Fatalf("exit %d\n%s\n%s", status, errb.String(), out.String())
	}
	for _, want := range []string{`"status": "succeeded"`, `"Authorization": "Bearer [redacted secrets.FINANCE_TOKEN]"`, `"url": "[redacted secrets.SLACK_WEBHOOK_URL]"`, `"filename": "DANFE-4521.pdf"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out.String(), "tok-example-5150") || strings.Contains(out.String(), "example-key") {
		t.Errorf("the record holds a secret:\n%s", out.String())
	}
	if strings.Count(errb.String(), ": succeeded\n") != 3 {
		t.Errorf("progress:\n%s", errb.String())
	}
}

// TestRunSecretFromEnvironment: the secret source reads the prefixed
// variable; its value is redacted like any other secret.
func TestRunSecretFromEnvironment(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "KOBANA_SECRET_FINANCE_TOKEN" {
			return "tok-from-env-77", true
		}
		return "", false
	}
	var out, errb bytes.Buffer
	if status := run([]string{"-workflow", "../workflows/payable.json", "-eml", "../emails/acme-invoice.eml"}, env, &out, &errb); status != 0 {
		t.Fatalf("exit %d: %s", status, errb.String())
	}
	if strings.Contains(out.String(), "tok-from-env-77") || !strings.Contains(out.String(), "[redacted secrets.FINANCE_TOKEN]") {
		t.Errorf("record:\n%s", out.String())
	}
	s := envSecrets{Prefix: "P_", Lookup: env}
	if v, ok, err := s.Secret("FINANCE_TOKEN"); ok || err != nil || v != "" {
		t.Errorf("P_FINANCE_TOKEN: %q %v %v", v, ok, err)
	}
}

func TestRunMissingEmail(t *testing.T) {
	var out, errb bytes.Buffer
	noEnv := func(string) (string, bool) { return "", false }
	// Without the e-mail, step 1 fails before sending and the run fails.
	status := run([]string{"-workflow", "../workflows/payable.json", "-eml", "no-such.eml"}, noEnv, &out, &errb)
	if status != 1 || !strings.Contains(out.String(), `"state": "failed"`) || !strings.Contains(errb.String(), "not sent") {
		t.Errorf("exit %d\n%s\n%s", status, errb.String(), out.String())
	}
}
