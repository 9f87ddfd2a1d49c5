package intake_test

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// An out-of-office reply sent with MAIL FROM:<> and no header saying it is
// automatic is an automatic reply for an inbox that rejects them: the
// envelope says so (before, only a Return-Path header in the content was
// read, which the sender writes).
func TestNullReversePathIsAnAutomaticReply(t *testing.T) {
	e := startStore(t)
	ooo := "From: ana@supplier.test\r\nTo: orders@in.kobana.test\r\nSubject: Fora do escritório\r\nMessage-ID: <ooo-1@supplier.test>\r\n\r\nVolto segunda-feira.\r\n"
	if err := e.send("", []string{"orders@in.kobana.test"}, ooo); err != nil {
		t.Fatalf("a refused automatic reply is still answered 250: %v", err)
	}
	emails := e.emails()
	if len(emails) != 1 || emails[0].Status != inbox.EmailRejected || !strings.HasPrefix(emails[0].StatusDetail, inbox.RejectAutoReply+":") {
		t.Fatalf("e-mails = %+v, want one rejected as an automatic reply", emails)
	}
	if !emails[0].Auth.NullSender || e.events(inbox.EventEmailRejected) != 1 || len(e.jobs()) != 0 {
		t.Fatalf("null sender %v, %d email.rejected, %d jobs; want the envelope recorded, one event, no agent run", emails[0].Auth.NullSender, e.events(inbox.EventEmailRejected), len(e.jobs()))
	}
}

// An ordinary message carrying a Return-Path: <> line in its content is
// not a bounce (before, it was rejected as one).
func TestContentReturnPathMeansNothing(t *testing.T) {
	e := startStore(t)
	msg := "Return-Path: <>\r\nFrom: ana@supplier.test\r\nTo: orders@in.kobana.test\r\nSubject: Pedido 7\r\nMessage-ID: <order-7@supplier.test>\r\n\r\nSegue o pedido.\r\n"
	if err := e.send("ana@supplier.test", []string{"orders@in.kobana.test"}, msg); err != nil {
		t.Fatal(err)
	}
	emails := e.emails()
	if len(emails) != 1 || emails[0].Status != inbox.EmailPending || emails[0].Auth.NullSender {
		t.Fatalf("e-mails = %+v, want the order accepted", emails)
	}
	// The record's Return-Path is the envelope's, which this server wrote.
	if rp := emails[0].Headers["Return-Path"]; rp != "<ana@supplier.test>" {
		t.Fatalf("Return-Path kept = %q, want the envelope's", rp)
	}
}

// Behind a trusted relay, an SPF-only sender is judged by the client the
// relay received the message from, and passes an inbox with allowed
// senders; without the relay declared, SPF is the relay's and the sender
// is refused.
func TestTrustedRelaySPFOnlySender(t *testing.T) {
	hop := "Received: from mx.supplier.test (mx.supplier.test [192.0.2.7])\r\n\tby relay.kobana.test (Postfix) with ESMTPS id 4ABC;\r\n\tMon, 30 Nov 2026 10:00:01 +0000\r\n"
	msg := hop + message("invoice 12", 300)
	for _, trusted := range []bool{false, true} {
		e := startStoreChecking(t, func(c *senderauth.Checker) {
			if trusted {
				c.TrustedRelays = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
			}
		})
		e.dns.txt["supplier.test"] = []string{"v=spf1 ip4:192.0.2.7 -all"}
		err := e.send("billing@supplier.test", []string{"receipts@in.kobana.test"}, msg)
		var se *smtp.SMTPError
		if !trusted {
			if !errors.As(err, &se) || se.Code != 550 {
				t.Fatalf("relay not declared: %v, want 550 (SPF judged for the relay)", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("through the trusted relay: %v", err)
		}
		emails := e.emails()
		if len(emails) != 1 || emails[0].Status != inbox.EmailPending {
			t.Fatalf("e-mails = %+v, want the invoice accepted", emails)
		}
		a := emails[0].Auth
		if a.Client != "192.0.2.7" || a.Helo != "mx.supplier.test" || a.Relay != "127.0.0.1" || a.SPF.Result != senderauth.Pass || a.AuthenticatedFrom != "billing@supplier.test" {
			t.Fatalf("auth = %+v, want SPF pass for 192.0.2.7 through 127.0.0.1", a)
		}
		m, err := e.dir.Open(context.Background(), wsID, emails[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := io.ReadAll(inbox.MessageReader(m))
		m.Close()
		if !strings.Contains(string(stored), "\tspf=pass smtp.mailfrom=supplier.test;") {
			t.Fatalf("the stored Authentication-Results do not say what was evaluated:\n%.600s", stored)
		}
	}
}
