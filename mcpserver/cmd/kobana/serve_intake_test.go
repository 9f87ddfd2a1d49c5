package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/dnstest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// spfZone is a DNS server on loopback publishing one SPF record:
// acme.example sends from 127.0.0.1.
func spfZone(t *testing.T) string {
	t.Helper()
	return dnstest.Serve(t, map[string]string{"acme.example": "v=spf1 ip4:127.0.0.1 -all"})
}

const demoInvoice = "From: Billing <billing@acme.example>\r\nTo: invoices@finance.in.kobana.email\r\nSubject: Invoice 2026-118\r\n" +
	"Message-ID: <118@acme.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
	"--b\r\nContent-Type: text/plain\r\n\r\nThe invoice is attached.\r\n" +
	"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=inv-118.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJeLjz9MK\r\n--b--\r\n"

func TestServeReceivesMail(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "kobana.db")
	var out, stderr serveBuffer
	// -process=false: this process receives and records, and leaves the
	// processing to another (the e-mails stay pending).
	addrs, stop := startServe(t, &Command{Stdout: &out, Stderr: &stderr}, &stderr,
		"-demo", "-db", db, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0", "-intake-http", "-dns", spfZone(t), "-process=false")
	smtpAddr := addrs["smtp"]
	if smtpAddr == nil {
		t.Fatalf("serve reported no smtp address: %v", addrs)
	}
	// Over SMTP: an unknown address is refused at RCPT, the demo inbox
	// takes mail from its allowed (SPF-authenticated) sender.
	c, err := smtp.Dial(smtpAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Hello("mx.acme.example"); err != nil {
		t.Fatal(err)
	}
	c.Mail("billing@acme.example", nil)
	var se *smtp.SMTPError
	if err := c.Rcpt("nobody@finance.in.kobana.email", nil); !errors.As(err, &se) || se.Code != 550 {
		t.Fatalf("RCPT to an unknown address: %v, want 550", err)
	}
	if err := c.Rcpt("invoices@finance.in.kobana.email", nil); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(demoInvoice))
	if err := w.Close(); err != nil {
		t.Fatalf("DATA: %v", err)
	}
	c.Quit()
	// Over HTTP, with the demo owner's token.
	token := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, " owner of workspace ") {
			token = line[strings.LastIndex(line, ": ")+2:]
		}
	}
	req, _ := http.NewRequest("POST", "http://"+addrs["http"].String()+"/intake/inboxes/ibx_receipts/messages",
		strings.NewReader(strings.Replace(demoInvoice, "Invoice", "Receipt", 1)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "message/rfc822")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("HTTP intake: %d, want 202", resp.StatusCode)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(out.String()+stderr.String(), "receiving mail for *.in.kobana.email over SMTP on") {
		t.Errorf("serve did not say where it receives mail: %s", out.String())
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emails := inbox.NewRepo(st).Emails
	for inboxID, subject := range map[string]string{"ibx_invoices": "Invoice 2026-118", "ibx_receipts": "Receipt 2026-118"} {
		list, err := emails.All(ctx, "ws_finance", store.Query{Parent: inboxID})
		if err != nil {
			t.Fatal(err)
		}
		var got *inbox.Email
		for i := range list {
			if list[i].Subject == subject {
				got = &list[i]
			}
		}
		if got == nil || got.Status != inbox.EmailPending || got.Auth == nil {
			t.Fatalf("%s: no pending e-mail %q among %d", inboxID, subject, len(list))
		}
		if inboxID == "ibx_invoices" && got.Auth.AuthenticatedFrom != "billing@acme.example" {
			t.Errorf("the SMTP e-mail's sender: %+v, want authenticated by SPF", got.Auth)
		}
		if _, err := os.Stat(filepath.Join(dir, "kobana-messages", "messages", "ws_finance", got.ID+".eml")); err != nil {
			t.Errorf("%s: the raw message is not beside the database: %v", got.ID, err)
		}
	}
}

func TestServeIntakeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-intake-http", "-smtp", "127.0.0.1:0"}, "-intake-http needs -http ADDR"},
		{[]string{"-smtp", "127.0.0.1:0", "-smtp-tls-cert", "x.pem"}, "-smtp-tls-cert and -smtp-tls-key go together"},
		{[]string{"-smtp", "127.0.0.1:0", "-smtp-tls-cert", "nope.pem", "-smtp-tls-key", "nope.key"}, "-smtp-tls-cert/-smtp-tls-key"},
		{[]string{"-smtp", "127.0.0.1:0", "-max-message-bytes", "0"}, "-max-message-bytes must be positive"},
		{[]string{"-http", "127.0.0.1:0", "-smtp-tls-key", "k.pem"}, "need -smtp ADDR"},
		{[]string{"-smtp", "127.0.0.1:0", "-smtp-trusted-relay", "10.0.0.0"}, "not a network in CIDR notation"},
		{[]string{"-smtp", "127.0.0.1:0", "-smtp-trusted-authserv-id", "relay.example"}, "-smtp-trusted-authserv-id needs -smtp-trusted-relay"},
		{[]string{"-smtp", "127.0.0.1:0", "-dedup-window", "-1h"}, "-dedup-window must not be negative"},
	} {
		var out, stderr serveBuffer
		c2 := &Command{Stdout: &out, Stderr: &stderr, Context: t.Context()}
		args := append([]string{"serve", "-db", filepath.Join(t.TempDir(), "k.db")}, c.args...)
		if code := c2.Main(args); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("serve %v = %d, stderr %q; want %d and %q", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
}
