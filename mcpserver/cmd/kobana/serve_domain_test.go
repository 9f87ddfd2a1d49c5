package main

import (
	"io"
	"net/smtp"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/mcptest"
)

// sendTo sends the demo invoice to rcpt over SMTP and returns the server's
// error (nil when it took the message).
func sendTo(addr, rcpt string) error {
	return smtp.SendMail(addr, nil, "billing@acme.example", []string{rcpt}, []byte(strings.Replace(demoInvoice, "invoices@finance.in.kobana.email", rcpt, 1)))
}

// -mail-domain works end to end: inboxes_create gives addresses under it,
// and the intake takes mail for them (before, the tool wrote
// .in.kobana.email whatever the domain, and the intake refused both the
// address it gave and the one under the domain). A workspace may also
// receive under a domain of its own.
func TestServeOwnMailDomain(t *testing.T) {
	db := filepath.Join(t.TempDir(), "d.db")
	owner := mustKobana(t, nil, "init", "-db", db, "-organization", "Acme", "-workspace", "Finance", "-owner", "Ana Souza", "-email", "ana@acme.example")
	var stderr serveBuffer
	addrs, stop := startServe(t, &Command{Stdout: io.Discard, Stderr: &stderr}, &stderr, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0",
		"-db", db, "-mail-domain", "Mail.Example.com.", "-dns", spfZone(t), "-process=false")
	defer stop()
	if !strings.Contains(stderr.String(), "receiving mail for *.mail.example.com over SMTP") {
		t.Errorf("serve does not say where it receives: %s", stderr.String())
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "domain-test", Version: "1"}, nil).Connect(t.Context(), mcptest.HTTP(mcpURL(t, addrs), owner), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	create := func(local string) string {
		t.Helper()
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "inboxes_create", Arguments: map[string]any{"name": local, "local_part": local, "recipients": []string{"@acme.example"}}})
		if err != nil || r.IsError {
			t.Fatalf("inboxes_create %s: %v %s", local, err, mcptest.TextOf(r))
		}
		return r.StructuredContent.(map[string]any)["address"].(string)
	}
	smtpAddr := addrs["smtp"].String()
	if got := create("invoices"); got != "invoices@finance.mail.example.com" {
		t.Errorf("inboxes_create gave %s, want invoices@finance.mail.example.com", got)
	}
	if err := sendTo(smtpAddr, "invoices@finance.mail.example.com"); err != nil {
		t.Errorf("mail to the inbox's address: %v", err)
	}
	if err := sendTo(smtpAddr, "invoices@finance.in.kobana.email"); err == nil || !strings.Contains(err.Error(), "550") {
		t.Errorf("mail under the default domain: %v, want refused", err)
	}
	// The workspace's own domain.
	mustKobana(t, nil, "admin", "workspace", "set", "-db", db, "-workspace", "ws_finance", "-mail-domain", "AP.acme.example")
	if got := create("ap"); got != "ap@ap.acme.example" {
		t.Errorf("inboxes_create in a workspace with its own domain gave %s, want ap@ap.acme.example", got)
	}
	if err := sendTo(smtpAddr, "ap@ap.acme.example"); err != nil {
		t.Errorf("mail under the workspace's own domain: %v", err)
	}
	if err := sendTo(smtpAddr, "nobody@ap.acme.example"); err == nil {
		t.Error("mail to an unknown address under the workspace's domain was taken")
	}
	// A domain is one workspace's.
	mustKobana(t, nil, "admin", "workspace", "create", "-db", db, "-organization", "org_acme", "-name", "Payroll")
	if code, _, errOut := kobana(t, nil, "admin", "workspace", "set", "-db", db, "-workspace", "ws_payroll", "-mail-domain", "ap.acme.example"); code != exitFailure || !strings.Contains(errOut, "the mail domain is another workspace's: ws_finance receives under ap.acme.example") {
		t.Errorf("claiming another workspace's domain: %d %q", code, errOut)
	}
	if code, _, errOut := kobana(t, nil, "admin", "workspace", "set", "-db", db, "-workspace", "ws_payroll", "-mail-domain", "not_a_domain"); code != exitFailure || !strings.Contains(errOut, "mail domain") {
		t.Errorf("a bad domain: %d %q", code, errOut)
	}
}
