package intake_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox/intake"
)

// shutdown waits until every session the server had open has ended: only
// then is it settled what a cut-off session left behind.
func shutdown(t *testing.T, srv *intake.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("the server did not finish its sessions: %v", err)
	}
}

// A BDAT chunk, RSET, and the next transaction pipelined behind it: go-smtp
// runs the chunk's Data in a goroutine RSET does not wait for, and a Data
// that reset the session when it ended could clear the next transaction's
// recipients, which was then answered 250 with nothing stored. Over many
// tries, every 250 names the e-mail it stored, and each try stores one.
func TestSMTPBDATResetThenPipelinedMessageIsStoredOnce(t *testing.T) {
	e := startStore(t)
	const tries = 60
	for i := range tries {
		k := dial(t, e.addr)
		msg := message(fmt.Sprintf("after reset %d", i), 200)
		k.send("EHLO c\r\nMAIL FROM:<first@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nBDAT 10\r\n0123456789" +
			"RSET\r\nMAIL FROM:<billing@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
		for _, want := range []string{"250", "250", "250", "250", "250", "250", "250", "354"} {
			k.expect(want)
		}
		k.send(msg + ".\r\n")
		if line := k.expect("250 2.0.0"); !strings.Contains(line, "stored as eml_") {
			t.Fatalf("try %d: %q names no stored e-mail", i, line)
		}
		k.send("QUIT\r\n")
		k.expect("221")
	}
	emails := e.emails()
	if len(emails) != tries {
		t.Fatalf("%d e-mails stored for %d messages", len(emails), tries)
	}
	for _, m := range emails {
		if !strings.HasPrefix(m.Subject, "after reset") || m.Auth.EnvelopeFrom != "billing@supplier.test" {
			t.Fatalf("stored %q from %q: the message before RSET, or the wrong envelope", m.Subject, m.Auth.EnvelopeFrom)
		}
	}
}

// BDAT 5000 LAST with 69 bytes, then the connection closes: the message did
// not arrive whole, so nothing is kept and no agent runs (go-smtp takes the
// short read for the chunk's end).
func TestSMTPCutBDATChunkIsNotKept(t *testing.T) {
	e := startStore(t)
	k := dial(t, e.addr)
	k.send("EHLO c\r\nMAIL FROM:<billing@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\n")
	for range 3 {
		k.expect("250")
	}
	k.send("BDAT 5000 LAST\r\n" + message("cut", 0)[:69])
	k.c.(*net.TCPConn).CloseWrite()
	shutdown(t, e.srv)
	if n := len(e.emails()); n != 0 {
		t.Fatalf("%d e-mails stored from a cut chunk, want none", n)
	}
	if n := len(e.jobs()); n != 0 {
		t.Fatalf("%d agent jobs for a cut chunk, want none", n)
	}
	if n := e.files(); n != 0 {
		t.Fatalf("%d raw messages kept from a cut chunk, want none", n)
	}
}

// RFC 3030: DATA during a BDAT transfer and BDAT after the LAST chunk are
// out of sequence: 503, and the chunk sent with the refused BDAT is read
// (not taken for commands).
func TestSMTPBDATSequenceErrorsAre503(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	k := dial(t, e.addr)
	k.send("EHLO c\r\nMAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nBDAT 5\r\nFrom:")
	for range 4 {
		k.expect("250")
	}
	k.send("DATA\r\n")
	k.expect("503 5.5.1")
	body := " a@supplier.test\r\nSubject: chunks\r\n\r\nhello\r\n"
	k.send(fmt.Sprintf("BDAT %d LAST\r\n%s", len(body), body))
	k.expect("250 2.0.0 OK: stored as")
	k.send("BDAT 9\r\nNOOP\r\nxyz")
	k.expect("503 5.5.1")
	k.send("NOOP\r\n")
	k.expect("250")
	if d := e.rec.deliveries(); len(d) != 1 || d[0].SHA256 != digest("From:"+body) {
		t.Fatalf("deliveries = %+v, want the two chunks as one message", d)
	}
}

// Every reply is printable ASCII: an address with a NUL is refused without
// being echoed, and a UTF-8 sender's address is not echoed raw either.
func TestSMTPRepliesArePrintableASCII(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	k := dial(t, e.addr)
	check := func(line string) {
		t.Helper()
		for i := 0; i < len(line); i++ {
			if line[i] < 0x20 || line[i] > 0x7e {
				t.Fatalf("reply %q has byte %#x", line, line[i])
			}
		}
	}
	k.send("EHLO c\r\n")
	k.expect("250")
	k.send("MAIL FROM:<evil\x00@supplier.test>\r\n")
	check(k.expect("501 5.1.7"))
	k.send("MAIL FROM:<josé@fornecedor.test> SMTPUTF8\r\n")
	check(k.expect("250"))
	k.send("RCPT TO:<x\x00\x01@in.kobana.test>\r\n")
	check(k.expect("501"))
	k.send("RCPT TO:<ação@in.kobana.test>\r\n")
	check(k.expect("550 5.1.1"))
}

// Unwrapped HTML past RFC 5321's 1000 characters is accepted as sent, a
// line of 9,000 bytes and one of 200,000 too:
// only command lines are limited (before, the message was answered 451,
// which makes the sender retry for days).
func TestSMTPLongBodyLinesAreAccepted(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	for _, n := range []int{5000, 9000, 200_000} {
		k := dial(t, e.addr)
		k.send("EHLO c\r\nMAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
		for _, want := range []string{"250", "250", "250", "354"} {
			k.expect(want)
		}
		msg := "From: a@supplier.test\r\nSubject: one long line\r\nContent-Type: text/html\r\n\r\n<p>" + strings.Repeat("x", n) + "</p>\r\n"
		k.send(msg + ".\r\n")
		k.expect("250 2.0.0")
		if d := e.rec.deliveries(); d[len(d)-1].SHA256 != digest(msg) {
			t.Fatalf("the message with a %d-byte line was not kept byte-exact", n)
		}
	}
}

// STARTTLS is refused inside a transaction, what is pipelined after it is
// discarded (RFC 3207 §5), and after the handshake the client must say
// EHLO again before MAIL.
func TestSMTPStartTLSRules(t *testing.T) {
	cert, pool := selfSigned(t, "mx.kobana.test")
	e := startSMTP(t, intake.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	k := dial(t, e.addr)
	k.send("EHLO c\r\nMAIL FROM:<a@supplier.test>\r\nSTARTTLS\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("503 5.5.1")
	k.send("RSET\r\nSTARTTLS\r\nMAIL FROM:<injected@evil.test>\r\n")
	k.expect("250")
	k.expect("220")
	tc := tls.Client(k.c, &tls.Config{RootCAs: pool, ServerName: "mx.kobana.test"})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	k = &conn{t: t, c: tc, r: bufio.NewReader(tc)}
	k.send("MAIL FROM:<a@supplier.test>\r\n")
	k.expect("503 5.5.1") // the injected MAIL was dropped; EHLO first
	k.send("EHLO c\r\n")
	if ehlo := k.expect("250"); strings.Contains(ehlo, "STARTTLS") {
		t.Fatal("STARTTLS offered again over TLS")
	}
	k.send("STARTTLS\r\n")
	k.expect("503 5.5.1")
	k.send("MAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("354")
	long := "Subject: over tls\r\n\r\n" + strings.Repeat("y", 20_000) + "\r\n"
	k.send(long + ".\r\n")
	k.expect("250 2.0.0")
	d := e.rec.deliveries()
	if len(d) != 1 || !d[0].Envelope.TLS || d[0].SHA256 != digest(long) || d[0].Envelope.MailFrom != "a@supplier.test" {
		t.Fatalf("deliveries = %+v, want the one message over TLS", d)
	}
}
