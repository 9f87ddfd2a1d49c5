package server_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
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

// selfSignedTLS is a server TLS configuration with a certificate for
// mx.kobana.test, made up for the test.
func selfSignedTLS(t testing.TB) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mx.kobana.test"},
		DNSNames: []string{"mx.kobana.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// replyWait bounds the wait for any one reply of the server.
const replyWait = 5 * time.Second

// smtpHostile is one session of FuzzSMTPHostileClient: it sends what the
// program says and checks that every command is answered within
// replyWait, framing what it sent as the server must (command lines end at
// LF; a DATA body, once answered 354, ends at CR LF . CR LF; a BDAT chunk
// is its announced size).
type smtpHostile struct {
	t      *testing.T
	c      net.Conn
	r      *bufio.Reader
	inBody bool   // DATA was answered 354 and its body has not ended
	body   []byte // the body sent so far
	done   bool   // the server ended the session (or the program did)
	last   string // the last reply
	// pending is what the next flush sends: commands pipelined together,
	// and what each awaits a reply for.
	pending  []byte
	awaiting []string
}

// reply reads one reply within replyWait and returns its last line; ok is
// false when the connection ended first.
func (h *smtpHostile) reply(what string) (line string, ok bool) {
	h.t.Helper()
	h.c.SetReadDeadline(time.Now().Add(replyWait))
	for {
		l, err := h.r.ReadString('\n')
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			h.t.Fatalf("no reply within %s to %q (last reply %q)", replyWait, what, h.last)
		case err != nil:
			return "", false
		}
		if len(l) >= 4 && l[3] == '-' {
			continue
		}
		if len(l) < 4 || l[3] != ' ' || l[0] < '2' || l[0] > '5' {
			h.t.Fatalf("a reply that is not one, to %q: %q", what, l)
		}
		h.last = strings.TrimRight(l, "\r\n")
		return h.last, true
	}
}

// closingReply says a reply ends the session.
func closingReply(line string) bool {
	return strings.HasPrefix(line, "221") || strings.HasPrefix(line, "421") ||
		strings.Contains(line, "Too many errors") || strings.Contains(line, "too long")
}

// await reads the reply to what.
func (h *smtpHostile) await(what string) string {
	h.t.Helper()
	if h.done {
		return ""
	}
	line, ok := h.reply(what)
	if !ok {
		h.t.Fatalf("the connection ended without a reply to %q (last reply %q)", what, h.last)
	}
	if closingReply(line) {
		h.done = true
		h.expectEnd()
	}
	return line
}

// expectEnd checks that the server closes the connection within replyWait.
func (h *smtpHostile) expectEnd() {
	h.t.Helper()
	h.c.SetReadDeadline(time.Now().Add(replyWait))
	_, err := io.Copy(io.Discard, h.r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		h.t.Fatalf("the connection stayed open %s after %q", replyWait, h.last)
	}
}

func (h *smtpHostile) write(b []byte) {
	h.t.Helper()
	h.c.SetWriteDeadline(time.Now().Add(replyWait))
	if _, err := h.c.Write(b); err != nil {
		// The server may have closed already (after too many errors):
		// the replies read tell.
		h.done = true
	}
}

// queue adds a command to the next flush.
func (h *smtpHostile) queue(b []byte, what string) {
	h.pending = append(h.pending, b...)
	h.awaiting = append(h.awaiting, what)
}

// flush sends the pipelined commands and reads their replies.
func (h *smtpHostile) flush() {
	h.t.Helper()
	if len(h.pending) == 0 || h.done {
		h.pending, h.awaiting = h.pending[:0], h.awaiting[:0]
		return
	}
	h.write(h.pending)
	for _, what := range h.awaiting {
		if line := h.await(what); strings.HasPrefix(line, "354") {
			h.inBody, h.body = true, h.body[:0]
		}
	}
	h.pending, h.awaiting = h.pending[:0], h.awaiting[:0]
}

// sendBody sends b as body bytes; when the body ends inside them (a dot
// line after CR LF), only up to its end, and reads the message's reply.
func (h *smtpHostile) sendBody(b []byte) {
	h.t.Helper()
	all := append(h.body, b...)
	if end := dataEnd(all); end >= 0 {
		h.write(all[len(h.body):end])
		h.inBody = false
		h.await(fmt.Sprintf("the end of a DATA body %q", lastBytes(all[:end])))
		return
	}
	h.write(b)
	h.body = all
}

// endBody ends the DATA body with term (after which a terminating line
// always comes).
func (h *smtpHostile) endBody(term string) {
	h.t.Helper()
	if h.inBody {
		h.sendBody([]byte(term + "\r\n.\r\n"))
	}
}

// dataEnd is where a DATA body ends in b: after the first line that is a
// dot alone at the body's start or after CR LF; -1 when it does not.
func dataEnd(b []byte) int {
	for start := 0; start < len(b); {
		i := bytes.Index(b[start:], []byte("\r\n"))
		if i < 0 {
			return -1
		}
		if i == 1 && b[start] == '.' {
			return start + 3
		}
		start += i + 2
	}
	return -1
}

func lastBytes(b []byte) []byte {
	if len(b) > 80 {
		return b[len(b)-80:]
	}
	return b
}

// smtpProgram reads a fuzzer's bytes as choices.
type smtpProgram struct{ b []byte }

func (p *smtpProgram) next() byte {
	if len(p.b) == 0 {
		return 0
	}
	c := p.b[0]
	p.b = p.b[1:]
	return c
}

// text is up to max bytes of the program, as they are but for LF (which
// would end a command line early).
func (p *smtpProgram) text(max int) []byte {
	n := min(int(p.next())%(max+1), len(p.b))
	out := bytes.ReplaceAll(p.b[:n], []byte("\n"), []byte(" "))
	p.b = p.b[n:]
	return out
}

// bodyBytes is up to 64 bytes of body, mostly CR, LF, dots and NULs.
func (p *smtpProgram) bodyBytes() []byte {
	n := int(p.next()) % 65
	out := make([]byte, 0, n)
	for range n {
		c := p.next()
		switch c % 8 {
		case 0, 1:
			c = '\r'
		case 2, 3:
			c = '\n'
		case 4:
			c = '.'
		case 5:
			c = 0
		}
		out = append(out, c)
	}
	return out
}

var (
	lineEnds      = []string{"\r\n", "\n", "\r\r\n"}
	smtpAddresses = []string{demoInbox, "nobody@finance.in.kobana.email", "billing@acme.example", "", "x@[127.0.0.1]", "\x00@x", "a b@c", strings.Repeat("a", 300) + "@acme.example"}
	otherCommands = []string{"VRFY x", "EXPN x", "HELP", "XYZZY", "", "MAIL", "RCPT", "DATA now", "BDAT", "BDAT x", "BDAT 1 MORE", "AUTH", "AUTH PLAIN", "AUTH PLAIN AGFAAGI=", "AUTH LOGIN", "TURN", "LHLO x", "\x00\x00", "ÿÿÿ"}
)

// FuzzSMTPHostileClient sends the SMTP intake of a running server (server.Run
// with SMTP and STARTTLS, started once per fuzzing process) command
// sequences as a hostile or broken client would — every command in every
// order, pipelined or not, odd line ends, NULs, long lines, DATA bodies of
// stray CRs, LFs and dots, BDAT chunks, STARTTLS with and without a
// handshake — and checks that every command is answered within replyWait,
// every DATA body ended by CR LF . CR LF is answered, a session the server
// ends is closed, and the server accepts the next session.
func FuzzSMTPHostileClient(f *testing.F) {
	for _, seed := range []string{
		"\x00\x02\x00\x03\x00\x04\x05\x10\x06",
		"\x00\x02\x00\x03\x00\x04\x05\x00\x10\x07\x00",
		"\x81\x82\x83\x84\x05\x10\x10\x06",
		"\x00\x02\x00\x03\x00\x08\x05\x01\x02\x09\x00\x04",
		"\x0a\x01\x00\x02\x00\x0a\x00",
		"\x00\x02\x00\x03\x00\x04\x06\x01\x0c\x0b",
		"\x00\x0d\x00\x0d\x00\x0d\x00\x0d\x00",
		"\x00\x02\x00\x03\x00\x04\x05\x40\x00\x01\x02\x03\x04\x05\x06\x07\x0e\x00\x02\x00",
	} {
		f.Add([]byte(seed))
	}
	addr := startSMTPServerTLS(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("the server accepts no more: %v", err)
		}
		defer c.Close()
		h := &smtpHostile{t: t, c: c, r: bufio.NewReader(c)}
		if line := h.await("the connection"); !strings.HasPrefix(line, "220") {
			t.Fatalf("greeted with %q", line)
		}
		p := &smtpProgram{b: in}
		for ops := 0; len(p.b) > 0 && ops < 32 && !h.done; ops++ {
			op := p.next()
			pipelined := op&0x80 != 0
			end := lineEnds[int(p.next())%len(lineEnds)]
			if h.inBody && op%16 != 5 {
				h.endBody([]string{"", "xx\r", "\r", "\n", "."}[int(op>>4)%5])
			}
			switch op % 16 {
			case 0:
				h.queue([]byte("EHLO client.test"+end), "EHLO")
			case 1:
				h.queue([]byte("HELO "+string(p.text(20))+end), "HELO")
			case 2:
				h.queue([]byte("MAIL FROM:<"+smtpAddresses[int(p.next())%len(smtpAddresses)]+">"+string(p.text(8))+end), "MAIL")
			case 3:
				h.queue([]byte("RCPT TO:<"+smtpAddresses[int(p.next())%len(smtpAddresses)]+">"+end), "RCPT")
			case 4:
				h.queue([]byte("DATA"+end), "DATA")
				h.flush()
			case 5:
				h.flush()
				if h.inBody {
					h.sendBody(p.bodyBytes())
				}
			case 6, 7:
				chunk := p.bodyBytes()
				last := ""
				if op%16 == 7 {
					last = " LAST"
				}
				h.queue(fmt.Appendf(nil, "BDAT %d%s%s%s", len(chunk), last, end, chunk), "BDAT"+last)
			case 8:
				h.queue([]byte("RSET"+end), "RSET")
			case 9:
				h.queue([]byte("NOOP "+string(p.text(16))+end), "NOOP")
			case 10:
				h.queue([]byte("STARTTLS"+end), "STARTTLS")
				h.flush()
				if strings.HasPrefix(h.last, "220") && !h.done {
					h.startTLS(p.next()%2 == 0)
				}
			case 11:
				h.queue([]byte("QUIT"+end), "QUIT")
				h.flush()
			case 12:
				h.queue([]byte("NOOP "+strings.Repeat("x", 3000)+end), "a long line")
				h.flush()
			case 13:
				h.queue(append([]byte(otherCommands[int(p.next())%len(otherCommands)]), end...), "another command")
			case 14:
				h.queue(append(p.text(40), end...), "a line of the fuzzer's")
			case 15:
				h.queue([]byte("MAIL FROM:<billing@acme.example> BODY=BINARYMIME"+end), "MAIL BINARYMIME")
			}
			if !pipelined {
				h.flush()
			}
		}
		h.flush()
		if h.done {
			return
		}
		h.endBody("")
		h.queue([]byte("NOOP\r\n"), "the last NOOP")
		h.queue([]byte("QUIT\r\n"), "the last QUIT")
		h.flush()
	})
}

// startTLS runs the client's side of STARTTLS, or sends plaintext where
// the handshake should be, which ends the session.
func (h *smtpHostile) startTLS(handshake bool) {
	h.t.Helper()
	if !handshake {
		h.write([]byte("EHLO client.test\r\n"))
		h.done = true
		h.expectEnd()
		return
	}
	tc := tls.Client(h.c, &tls.Config{InsecureSkipVerify: true, ServerName: "mx.kobana.test"})
	tc.SetDeadline(time.Now().Add(replyWait))
	if err := tc.Handshake(); err != nil {
		h.t.Fatalf("STARTTLS answered 220, then the handshake failed: %v", err)
	}
	h.c, h.r = tc, bufio.NewReader(tc)
}

// startSMTPServerTLS is startSMTPServer offering STARTTLS.
func startSMTPServerTLS(t testing.TB) string {
	t.Helper()
	st, path := openStore(t)
	var out syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, Output: &out,
		Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(t), TLS: selfSignedTLS(t)}})
	t.Cleanup(func() { stop() })
	return addrs["smtp"].String()
}
