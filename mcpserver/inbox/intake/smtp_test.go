package intake_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

func TestSMTPDeliversToAnInbox(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	msg := message("inv-1", 3000)
	c, err := smtp.Dial(e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("mx.supplier.test"); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("billing@supplier.test", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("Invoices@IN.kobana.test", nil); err != nil {
		t.Fatalf("RCPT to an inbox (any case): %v", err)
	}
	if err := c.Rcpt("invoices@in.kobana.test", nil); err != nil {
		t.Fatalf("RCPT to the same inbox again: %v", err)
	}
	if err := c.Rcpt("receipts@in.kobana.test", nil); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(msg))
	if err := w.Close(); err != nil {
		t.Fatalf("DATA: %v", err)
	}
	c.Quit()
	got := e.rec.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	d := got[0]
	if d.SHA256 != digest(msg) || d.Size != int64(len(msg)) {
		t.Errorf("the recorded message (%d bytes) is not the one sent (%d bytes)", d.Size, len(msg))
	}
	if len(d.Recipients) != 2 || d.Recipients[0].InboxID != "ibx_invoices" || d.Recipients[1].InboxID != "ibx_receipts" {
		t.Errorf("recipients = %+v, want the two inboxes once each", d.Recipients)
	}
	if d.Envelope.Via != "smtp" || d.Envelope.MailFrom != "billing@supplier.test" || d.Envelope.Helo != "mx.supplier.test" || !d.Envelope.RemoteIP.IsLoopback() {
		t.Errorf("envelope = %+v", d.Envelope)
	}
	if d.Auth.From != "billing@supplier.test" || d.Auth.Authenticated != "" {
		t.Errorf("auth = %+v: without DNS records nothing authenticates", d.Auth)
	}
	if e.storedMessages() != 1 || len(e.spoolFiles()) != 0 {
		t.Errorf("stored %d, spool %v; want 1 stored, spool empty", e.storedMessages(), e.spoolFiles())
	}
}

func TestSMTPNeverRelays(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	k := dial(t, e.addr)
	k.send("EHLO client.test\r\n")
	k.expect("250")
	k.send("MAIL FROM:<a@b.test>\r\n")
	k.expect("250")
	for _, to := range []string{"someone@gmail.test", "invoices@in.kobana.test.evil.test", "invoices@other.test", "postmaster@in.kobana.test"} {
		k.send("RCPT TO:<" + to + ">\r\n")
		if line := k.reply(); !strings.HasPrefix(line, "550 5.1.1") {
			t.Errorf("RCPT TO:<%s>: %q, want 550 5.1.1", to, line)
		}
	}
	k.send("DATA\r\n")
	k.expect("503 5.5.1") // no valid recipient
	if len(e.rec.deliveries()) != 0 {
		t.Fatal("something was recorded")
	}
}

func TestSMTPPipelining(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	k := dial(t, e.addr)
	k.send("EHLO client.test\r\n")
	if ehlo := k.expect("250"); !strings.Contains(ehlo, "250") {
		t.Fatal(ehlo)
	}
	msg := message("pipelined", 100)
	// Everything in one write, as a pipelining client does.
	k.send("MAIL FROM:<billing@supplier.test>\r\nRCPT TO:<nobody@in.kobana.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
	k.expect("250")       // MAIL
	k.expect("550 5.1.1") // unknown recipient
	k.expect("250")       // known recipient
	k.expect("354")
	k.send(msg + ".\r\nMAIL FROM:<x@y.test>\r\nRSET\r\nQUIT\r\n")
	k.expect("250 2.0.0 OK: stored as eml_0001")
	k.expect("250")
	k.expect("250")
	k.expect("221")
	if d := e.rec.deliveries(); len(d) != 1 || d[0].SHA256 != digest(msg) {
		t.Fatalf("deliveries = %d, want the pipelined message once, byte-exact", len(d))
	}
}

func TestSMTPExtensionsAndEightBitAndBinary(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	k := dial(t, e.addr)
	k.send("EHLO client.test\r\n")
	var caps []string
	k.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		line, err := k.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		caps = append(caps, strings.TrimSpace(line[4:]))
		if line[3] == ' ' {
			break
		}
	}
	joined := strings.Join(caps, "|")
	for _, want := range []string{"PIPELINING", "8BITMIME", "BINARYMIME", "CHUNKING", "SMTPUTF8", "SIZE 26214400", "LIMITS RCPTMAX=50"} {
		if !strings.Contains(joined, want) {
			t.Errorf("EHLO lacks %s: %s", want, joined)
		}
	}
	if strings.Contains(joined, "STARTTLS") {
		t.Error("STARTTLS offered without a certificate")
	}
	// 8BITMIME with SMTPUTF8: a UTF-8 sender and raw 8-bit body text.
	eight := "From: José <josé@fornecedor.test>\r\nTo: invoices@in.kobana.test\r\nSubject: Nota fiscal nº 42 — ação\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nValor: R$ 1.250,50 — vencimento amanhã.\r\n"
	k.send("MAIL FROM:<josé@fornecedor.test> BODY=8BITMIME SMTPUTF8\r\n")
	k.expect("250")
	k.send("RCPT TO:<invoices@in.kobana.test>\r\n")
	k.expect("250")
	k.send("DATA\r\n")
	k.expect("354")
	k.send(eight + ".\r\n")
	k.expect("250 2.0.0")
	// BINARYMIME over BDAT: NUL bytes, bare CR and LF, a line of dots.
	binary := "From: a@supplier.test\r\nTo: invoices@in.kobana.test\r\nSubject: binary\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n\x00\x01\x02\r.\n..\r\n.\r\n\xff\xfe"
	k.send("MAIL FROM:<a@supplier.test> BODY=BINARYMIME\r\n")
	k.expect("250")
	k.send("RCPT TO:<invoices@in.kobana.test>\r\n")
	k.expect("250")
	half := len(binary) / 2
	k.send(fmt.Sprintf("BDAT %d\r\n%s", half, binary[:half]))
	k.expect("250")
	k.send(fmt.Sprintf("BDAT %d LAST\r\n%s", len(binary)-half, binary[half:]))
	k.expect("250 2.0.0 OK: stored as")
	got := e.rec.deliveries()
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(got))
	}
	if got[0].SHA256 != digest(eight) || got[0].Envelope.MailFrom != "josé@fornecedor.test" {
		t.Errorf("8-bit message not kept byte-exact (sender %q)", got[0].Envelope.MailFrom)
	}
	if got[1].SHA256 != digest(binary) {
		t.Errorf("binary message not kept byte-exact")
	}
}

func TestSMTPNonUTF8HeaderIsAccepted(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	latin1 := "From: =?x?q?bad?= <a@supplier.test>\r\nTo: invoices@in.kobana.test\r\nSubject: Fatura de mar\xe7o \xe0 vista\r\n\r\nCorpo em latin-1: a\xe7\xe3o\r\n"
	k := dial(t, e.addr)
	k.send("HELO client.test\r\nMAIL FROM:<a@supplier.test>\r\n")
	k.expect("250")
	k.expect("250")
	k.send("RCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
	k.expect("250")
	k.expect("354")
	k.send(latin1 + ".\r\n")
	k.expect("250 2.0.0")
	if d := e.rec.deliveries(); len(d) != 1 || d[0].SHA256 != digest(latin1) || d[0].Auth.From != "a@supplier.test" {
		t.Fatalf("deliveries = %+v", d)
	}
}

func TestSMTPMalformedCommands(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	k := dial(t, e.addr)
	for _, c := range []struct{ send, want string }{
		{"FOO bar\r\n", "501 5.5.2"},
		{"MAIL FROM:<a@b.test>\r\n", "503 5.5.1"}, // before HELO/EHLO: a bad sequence
		{"EHLO client.test\r\n", "250"},
		{"RCPT TO:<invoices@in.kobana.test>\r\n", "503 5.5.1"}, // before MAIL
		{"DATA\r\n", "503 5.5.1"},
		{"MAIL FROM:no-brackets\r\n", "501"},
		{"MAIL FROM:<a@b.test> SIZE=abc\r\n", "501"},
		{"MAIL FROM:<a@b.test> SIZE=999999999\r\n", "552"},
		{"MAIL FROM:<a@b.test>\r\n", "250"},
		{"RCPT TO:invoices\r\n", "501"},
		{"RCPT TO:<not an address>\r\n", "501"},
		{"RCPT TO:<@in.kobana.test>\r\n", "501"},
		{"DATA extra\r\n", "501"},
		{"BDAT x\r\n", "501"},
		{"VRFY invoices@in.kobana.test\r\n", "252"}, // never confirms an address
		{"AUTH PLAIN\r\n", "5"},                     // no authentication: nobody relays
		{"RSET\r\n", "250"},
		{"SEND FROM:<a@b.test>\r\n", "502 5.5.1"}, // not implemented: 502 stays
		{strings.Repeat("X", 9000) + "\r\n", "500 5.5.2"},
	} {
		k.send(c.send)
		if line := k.reply(); !strings.HasPrefix(line, c.want) {
			t.Errorf("%.40q: reply %q, want %s", c.send, line, c.want)
		}
	}
	if len(e.rec.deliveries()) != 0 {
		t.Fatal("something was recorded")
	}
}

func TestSMTPOversizedMessage(t *testing.T) {
	e := startSMTP(t, intake.Config{MaxMessageBytes: 64 << 10})
	k := dial(t, e.addr)
	k.send("EHLO client.test\r\nMAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("250")
	k.expect("354")
	k.send(message("big", 200<<10) + ".\r\n")
	k.expect("552 5.3.4")
	// The session goes on: a message within the limit is accepted after.
	k.send("MAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("354")
	k.send(message("small", 1000) + ".\r\n")
	k.expect("250 2.0.0")
	if e.storedMessages() != 1 || len(e.spoolFiles()) != 0 || len(e.rec.deliveries()) != 1 {
		t.Fatalf("stored %d, spool %v, recorded %d: want only the small one, no spool left", e.storedMessages(), e.spoolFiles(), len(e.rec.deliveries()))
	}
	// Over BDAT too.
	k.send("MAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\n")
	k.expect("250")
	k.expect("250")
	big := strings.Repeat("\x00binary", 10<<10) // 70 KiB without a line break
	k.send(fmt.Sprintf("BDAT %d LAST\r\n%s", len(big), big))
	k.expect("552")
	if e.storedMessages() != 1 || len(e.spoolFiles()) != 0 {
		t.Fatalf("after an oversized BDAT: stored %d, spool %v", e.storedMessages(), e.spoolFiles())
	}
}

func TestSMTPThousandRecipients(t *testing.T) {
	e := startSMTP(t, intake.Config{MaxRecipients: 100})
	k := dial(t, e.addr)
	k.send("EHLO client.test\r\nMAIL FROM:<a@supplier.test>\r\n")
	k.expect("250")
	k.expect("250")
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "RCPT TO:<user%d@in.kobana.test>\r\n", i)
	}
	k.send(b.String())
	unknown, limited := 0, 0
	for range 1000 {
		line := k.reply()
		switch {
		case strings.HasPrefix(line, "550 5.1.1"):
			unknown++
		case strings.HasPrefix(line, "452 4.5.3") && strings.Contains(line, "100 recipients"):
			limited++
		default:
			t.Fatalf("unexpected reply %q", line)
		}
	}
	// Unknown addresses are refused one by one; none was accepted, so the
	// limit never triggers. With known ones it does:
	if unknown != 1000 || limited != 0 {
		t.Fatalf("unknown=%d limited=%d", unknown, limited)
	}
	e2 := startSMTP(t, intake.Config{MaxRecipients: 2})
	k = dial(t, e2.addr)
	k.send("EHLO c\r\nMAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nRCPT TO:<receipts@in.kobana.test>\r\nRCPT TO:<other@in.kobana.test>\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("250")
	k.expect("250")
	k.expect("452 4.5.3 Maximum limit of 2 recipients reached")
}

func TestSMTPSlowClient(t *testing.T) {
	e := startSMTP(t, intake.Config{DataIdleTimeout: 200 * time.Millisecond, CommandTimeout: 500 * time.Millisecond})
	// Stalling in the middle of DATA: the client is told 421 4.4.2 (as
	// Postfix tells it) and the connection is dropped, nothing kept.
	k := dial(t, e.addr)
	k.send("EHLO c\r\nMAIL FROM:<a@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("250")
	k.expect("354")
	k.send(message("slow", 10000)[:5000])
	k.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, err := k.r.ReadString('\n')
	if err != nil || !strings.HasPrefix(rest, "421 4.4.2 ") {
		t.Fatalf("after a stall in DATA: %q (%v), want 421 4.4.2", rest, err)
	}
	var ne net.Error
	if more, err := k.r.ReadString('\n'); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the stalled connection open (%q, %v)", more, err)
	}
	// Idle between commands: closed after the command timeout.
	k2 := dial(t, e.addr)
	start := time.Now()
	k2.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = k2.r.ReadString('\n')
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("an idle connection was not closed")
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("idle connection closed after %v", d)
	}
	// Shutdown returns once every session's handler has returned: only
	// then is it settled that the dropped sessions kept nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatalf("the server did not finish the dropped sessions: %v", err)
	}
	if len(e.rec.deliveries()) != 0 || e.storedMessages() != 0 || len(e.spoolFiles()) != 0 {
		t.Fatalf("recorded %d, stored %d, spool %v: want nothing", len(e.rec.deliveries()), e.storedMessages(), e.spoolFiles())
	}
}

func TestSMTPRecorderFailureAnswers451(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	send := func() error {
		c, err := smtp.Dial(e.addr)
		if err != nil {
			return err
		}
		defer c.Close()
		return c.SendMail("a@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(message("x", 100)))
	}
	e.rec.fail = errors.New("disk full")
	var se *smtp.SMTPError
	if err := send(); !errors.As(err, &se) || se.Code != 451 || se.EnhancedCode != (smtp.EnhancedCode{4, 3, 0}) {
		t.Fatalf("with a failing recorder: %v, want 451 4.3.0", err)
	}
	e.rec.fail = intake.ErrTryLater
	if err := send(); !errors.As(err, &se) || se.Code != 451 || se.EnhancedCode != (smtp.EnhancedCode{4, 7, 0}) {
		t.Fatalf("with a DNS failure: %v, want 451 4.7.0", err)
	}
	if e.storedMessages() != 0 || len(e.spoolFiles()) != 0 {
		t.Fatalf("stored %d, spool %v: want nothing", e.storedMessages(), e.spoolFiles())
	}
	e.rec.fail = nil
	e.rec.refuse = "the sender a@supplier.test is not authenticated (no aligned SPF or DKIM pass) and the inbox accepts only its allowed senders"
	if err := send(); !errors.As(err, &se) || se.Code != 550 || se.EnhancedCode != (smtp.EnhancedCode{5, 7, 1}) || !strings.Contains(se.Message, "not authenticated") {
		t.Fatalf("a refused sender: %v, want 550 5.7.1 with the reason", err)
	}
	if len(e.rec.deliveries()) != 1 {
		t.Fatal("the refused message was not recorded")
	}
}

func TestSMTPStartTLS(t *testing.T) {
	cert, pool := selfSigned(t, "mx.kobana.test")
	e := startSMTP(t, intake.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	plain, err := smtp.Dial(e.addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Hello("c"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := plain.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not offered with a certificate")
	}
	plain.Close()
	c, err := smtp.DialStartTLS(e.addr, &tls.Config{RootCAs: pool, ServerName: "mx.kobana.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMail("a@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(message("tls", 100))); err != nil {
		t.Fatal(err)
	}
	if d := e.rec.deliveries(); len(d) != 1 || !d[0].Envelope.TLS {
		t.Fatalf("deliveries = %+v, want one over TLS", d)
	}
}

func TestSMTPConnectionLimit(t *testing.T) {
	e := startSMTP(t, intake.Config{MaxConnections: 1})
	first := dial(t, e.addr)
	second, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 200)
	n, _ := second.Read(buf)
	if !strings.HasPrefix(string(buf[:n]), "421 4.7.0") {
		t.Fatalf("second connection got %q, want 421 4.7.0", buf[:n])
	}
	first.send("QUIT\r\n")
	first.expect("221")
	first.c.Close()
	// The slot is free again.
	err = testwait.Until(5*time.Second, func() error {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := c.Read(buf)
		if !strings.HasPrefix(string(buf[:n]), "220") {
			return fmt.Errorf("after the first connection closed: %q", buf[:n])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A stop that comes before Serve has run (a server stopped as soon as it
// started) still stops it: Serve returns ErrServerClosed and its listener
// is closed, instead of accepting for ever (go-smtp registers a listener
// only once its Serve runs).
func TestSMTPStoppedBeforeServeRuns(t *testing.T) {
	for _, stop := range []string{"Shutdown", "Close"} {
		dir, err := mailstore.OpenDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		srv := intake.NewServer(intake.Config{Domain: "mx.kobana.test"}, testInboxes, &memRecorder{dir: dir}, dir, &senderauth.Checker{Resolver: noDNS{}})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if stop == "Shutdown" {
			srv.Shutdown(t.Context())
		} else {
			srv.Close()
		}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		select {
		case err := <-served:
			if !errors.Is(err, smtp.ErrServerClosed) {
				t.Errorf("after %s: Serve = %v, want ErrServerClosed", stop, err)
			}
		case <-time.After(10 * time.Second):
			ln.Close()
			t.Fatalf("after %s: Serve still accepting 10s later", stop)
		}
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			c.Close()
			t.Errorf("after %s: the listener still takes connections", stop)
		}
	}
}
