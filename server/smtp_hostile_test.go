package server_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/syncbuf"
	"github.com/kobana/workflow/server"
)

// smtpClient is a raw SMTP conversation with the assembled server, for
// bytes no well-behaved client sends.
type smtpClient struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

func dialSMTP(t testing.TB, addr string) *smtpClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	k := &smtpClient{t: t, c: c, r: bufio.NewReader(c)}
	k.expect("220")
	return k
}

func (k *smtpClient) send(s string) {
	k.t.Helper()
	k.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := k.c.Write([]byte(s)); err != nil {
		k.t.Fatalf("writing %q: %v", s, err)
	}
}

// expect reads one reply (its last line) and checks how it starts.
func (k *smtpClient) expect(prefix string) string {
	k.t.Helper()
	k.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		line, err := k.r.ReadString('\n')
		if err != nil {
			k.t.Fatalf("waiting for %s…: %v (got %q)", prefix, err, line)
		}
		if len(line) >= 4 && line[3] == '-' {
			continue
		}
		if !strings.HasPrefix(line, prefix) {
			k.t.Fatalf("reply %q, want %s…", line, prefix)
		}
		return strings.TrimRight(line, "\r\n")
	}
}

// startSMTPServer runs the assembled server as kobana serve -demo does,
// with SMTP on loopback, and returns the SMTP address.
func startSMTPServer(t testing.TB) string {
	t.Helper()
	st, path := openStore(t)
	var out syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, Output: &out,
		Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(t)}})
	t.Cleanup(func() { stop() })
	return addrs["smtp"].String()
}

const demoInbox = "invoices@finance.in.kobana.email"

// A message whose last line has a stray CR before its CR LF (issue 32):
// it ends at the dot line after that CR LF and is answered 250, and the
// session goes on. go-smtp's decoder, which the intake followed, took the
// CR after a CR for the middle of a line and never ended the message.
func TestSMTPStrayCRBeforeTheLastLineEndIsAnswered(t *testing.T) {
	addr := startSMTPServer(t)
	k := dialSMTP(t, addr)
	k.send("EHLO client.test\r\n")
	k.expect("250")
	k.send("MAIL FROM:<billing@acme.example>\r\n")
	k.expect("250")
	k.send("RCPT TO:<" + demoInbox + ">\r\n")
	k.expect("250")
	k.send("DATA\r\n")
	k.expect("354")
	k.send("From: billing@acme.example\r\nSubject: stray CR\r\n\r\nxx\r\r\n.\r\n")
	if line := k.expect("250"); !strings.Contains(line, "stored as eml_") {
		t.Fatalf("%q names no stored e-mail", line)
	}
	k.send("NOOP\r\n")
	k.expect("250")
	k.send("QUIT\r\n")
	k.expect("221")
}
