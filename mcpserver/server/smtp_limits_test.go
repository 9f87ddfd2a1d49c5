package server_test

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
)

// startSMTPWith runs the assembled server as kobana serve -demo does, with
// SMTP on loopback configured by in, and returns the SMTP address.
func startSMTPWith(t testing.TB, in server.Intake) string {
	t.Helper()
	st, path := openStore(t)
	var out syncbuf.Buffer
	in.SMTPAddr = "127.0.0.1:0"
	if in.DNSServer == "" {
		in.DNSServer = spfZone(t)
	}
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, Output: &out, Intake: &in})
	t.Cleanup(func() { stop() })
	return addrs["smtp"].String()
}

// rawSMTP is a connection that reads replies within replyWait, failing
// the test (not the goroutine's caller) through errors.
type rawSMTP struct {
	c net.Conn
	r *bufio.Reader
}

// line reads one reply's last line within replyWait.
func (k *rawSMTP) line() (string, error) {
	k.c.SetReadDeadline(time.Now().Add(replyWait))
	for {
		l, err := k.r.ReadString('\n')
		if err != nil {
			return l, err
		}
		if len(l) < 4 || l[0] < '2' || l[0] > '5' || (l[3] != ' ' && l[3] != '-') {
			return l, fmt.Errorf("not a reply: %q", l)
		}
		if l[3] == ' ' {
			return strings.TrimRight(l, "\r\n"), nil
		}
	}
}

// expect reads one reply within replyWait and checks how it starts.
func (k *rawSMTP) expect(prefix string) error {
	l, err := k.line()
	if err != nil {
		return fmt.Errorf("waiting for %s: %v (read %q)", prefix, err, l)
	}
	if !strings.HasPrefix(l, prefix) {
		return fmt.Errorf("reply %q, want %s", l, prefix)
	}
	return nil
}

// closed checks that the server ends the connection within replyWait.
func (k *rawSMTP) closed() error {
	k.c.SetReadDeadline(time.Now().Add(replyWait))
	b, err := io.ReadAll(k.r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the connection is still open (read %q)", b)
	}
	return nil
}

func (k *rawSMTP) send(s string) error {
	k.c.SetWriteDeadline(time.Now().Add(replyWait))
	_, err := io.WriteString(k.c, s)
	return err
}

// hostileSession is what one of many concurrent sessions does once
// greeted with 220: slow, pipelined, malformed or stalled, each reply
// awaited within replyWait.
func hostileSession(k *rawSMTP, kind int) error {
	steps := func(pairs ...string) error {
		for i := 0; i < len(pairs); i += 2 {
			if err := k.send(pairs[i]); err != nil {
				return err
			}
			for _, want := range strings.Split(pairs[i+1], "|") {
				if want == "" {
					continue
				}
				if err := k.expect(want); err != nil {
					return fmt.Errorf("after %.40q: %v", pairs[i], err)
				}
			}
		}
		return nil
	}
	switch kind {
	case 0: // a command a byte at a time
		for _, b := range []byte("EHLO slow.test\r\n") {
			if err := k.send(string(b)); err != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
		return steps("", "250", "QUIT\r\n", "221")
	case 1: // garbage and commands out of order, pipelined
		return steps("EHLO c.test\r\n\x00\xff junk\r\nNOOP\r\nDATA\r\nRCPT TO:<"+demoInbox+">\r\nMAIL FROM:<>\r\nRCPT TO:<nobody@nowhere.example>\r\nRSET\r\n",
			"250|5|250|5|5|250|550|250", "QUIT\r\n", "221")
	case 2: // a whole message whose last line ends in CR CR LF
		return steps("EHLO c.test\r\n", "250", "MAIL FROM:<billing@acme.example>\r\n", "250", "RCPT TO:<"+demoInbox+">\r\n", "250",
			"DATA\r\n", "354", "From: billing@acme.example\r\nSubject: concurrent\r\n\r\nxx\r\r\n.\r\n", "250", "QUIT\r\n", "221")
	case 3: // DATA, part of a body, then nothing: 421 4.4.2 and the end
		if err := steps("EHLO c.test\r\nMAIL FROM:<billing@acme.example>\r\nRCPT TO:<"+demoInbox+">\r\nDATA\r\n", "250|250|250|354",
			"From: billing@acme.example\r\nSubject: stalled\r\n\r\nhalf a bo", ""); err != nil {
			return err
		}
		if err := k.expect("421 4.4.2 "); err != nil {
			return err
		}
		return k.closed()
	default: // a command line past the limit
		if err := steps("EHLO "+strings.Repeat("x", 3000)+"\r\n", "500"); err != nil {
			return err
		}
		return k.closed()
	}
}

// Many hostile sessions at once (issue 32 §2: "under 25 concurrent hostile
// sessions, sessions with no reply in 15 s"): every connection is greeted
// 220 or, past the configured limit, told 421 4.7.0 at once — none is left
// unanswered — each command of a greeted session is answered within
// replyWait, and the server accepts a session afterwards.
func TestSMTPConcurrentHostileSessions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    int // MaxConnections (0: the default, 200)
		sessions int
	}{
		{"past the limit", 10, 30},
		{"within the limit", 0, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := startSMTPWith(t, server.Intake{MaxConnections: tc.limit, DataIdleTimeout: time.Second})
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				greeted  int
				refused  int
				failures []string
			)
			// Every connection is open before any greeted one ends, so the
			// limit is reached.
			all := make(chan struct{})
			dialed := make(chan struct{}, tc.sessions)
			for i := range tc.sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					fail := func(err error) {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("session %d: %v", i, err))
						mu.Unlock()
					}
					c, err := net.Dial("tcp", addr)
					dialed <- struct{}{}
					if err != nil {
						fail(err)
						return
					}
					defer c.Close()
					k := &rawSMTP{c: c, r: bufio.NewReader(c)}
					l, err := k.line()
					switch {
					case err != nil:
						fail(fmt.Errorf("no greeting within %s: %v (read %q)", replyWait, err, l))
						return
					case strings.HasPrefix(l, "421 4.7.0 "):
						mu.Lock()
						refused++
						mu.Unlock()
						if err := k.closed(); err != nil {
							fail(err)
						}
						return
					case !strings.HasPrefix(l, "220 "):
						fail(fmt.Errorf("greeted %q", l))
						return
					}
					mu.Lock()
					greeted++
					mu.Unlock()
					<-all
					if err := hostileSession(k, i%5); err != nil {
						fail(fmt.Errorf("kind %d: %v", i%5, err))
					}
				}()
			}
			for range tc.sessions {
				<-dialed
			}
			// The greetings and refusals are read before the greeted go on.
			waitCounted := time.Now().Add(2 * replyWait)
			for {
				mu.Lock()
				n := greeted + refused + len(failures)
				mu.Unlock()
				if n == tc.sessions || time.Now().After(waitCounted) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			close(all)
			wg.Wait()
			for _, f := range failures {
				t.Error(f)
			}
			want := tc.sessions
			if tc.limit > 0 {
				want = tc.limit
			}
			if greeted != want || greeted+refused != tc.sessions {
				t.Errorf("%d sessions greeted and %d refused, want %d greeted and the rest refused", greeted, refused, want)
			}
			k := dialSMTP(t, addr)
			k.send("NOOP\r\n")
			k.expect("250")
		})
	}
}

// A client that stops sending in the middle of DATA is told 421 4.4.2 (as
// Postfix tells it, "Error: timeout exceeded") before the connection ends,
// not left with a silent close; nothing is stored and the server goes on.
func TestSMTPStalledDataIsTold421(t *testing.T) {
	addr := startSMTPWith(t, server.Intake{DataIdleTimeout: 500 * time.Millisecond})
	k := dialSMTP(t, addr)
	k.send("EHLO client.test\r\nMAIL FROM:<billing@acme.example>\r\nRCPT TO:<" + demoInbox + ">\r\nDATA\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("250")
	k.expect("354")
	k.send("From: billing@acme.example\r\nSubject: stalled\r\n\r\nthe first half of a bo")
	raw := &rawSMTP{c: k.c, r: k.r}
	if err := raw.expect("421 4.4.2 "); err != nil {
		t.Fatal(err)
	}
	if err := raw.closed(); err != nil {
		t.Fatal(err)
	}
	k = dialSMTP(t, addr)
	k.send("NOOP\r\n")
	k.expect("250")
}

// stallingDNS is a DNS server on loopback that reads every query and
// answers none (UDP; the resolver asks over UDP first).
func stallingDNS(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return pc.LocalAddr().String()
}

// The sender's check after DATA (SPF, DKIM, DMARC) runs under a deadline
// (Intake.SenderAuthTimeout): with a DNS server that never answers, SPF,
// five DKIM keys and DMARC would each wait out the lookup timeout (5 s)
// before the message is answered. Within the bound the message is answered
// as for a DNS failure (stored with temperror results, or 451 4.7.0 for an
// inbox with allowed senders).
func TestSMTPSenderCheckIsBounded(t *testing.T) {
	addr := startSMTPWith(t, server.Intake{DNSServer: stallingDNS(t), SenderAuthTimeout: time.Second})
	msg := "From: billing@acme.example\r\nTo: " + demoInbox + "\r\nSubject: slow DNS\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\nMessage-ID: <1@acme.example>\r\n\r\nAn invoice.\r\n"
	for i := range 5 {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		var signed bytes.Buffer
		if err := dkim.Sign(&signed, strings.NewReader(msg), &dkim.SignOptions{Domain: "k" + strconv.Itoa(i) + ".acme.example", Selector: "s", Signer: key,
			HeaderKeys: []string{"From", "To", "Subject", "Date", "Message-ID"}}); err != nil {
			t.Fatal(err)
		}
		msg = signed.String()
	}
	k := dialSMTP(t, addr)
	k.send("EHLO client.test\r\nMAIL FROM:<billing@acme.example>\r\nRCPT TO:<" + demoInbox + ">\r\nDATA\r\n")
	k.expect("250")
	k.expect("250")
	k.expect("250")
	k.expect("354")
	k.send(msg + ".\r\n")
	raw := &rawSMTP{c: k.c, r: k.r}
	l, err := raw.line()
	if err != nil {
		t.Fatalf("no reply to the message within %s: %v", replyWait, err)
	}
	if !strings.HasPrefix(l, "250 ") && !strings.HasPrefix(l, "451 4.7.0 ") {
		t.Fatalf("reply %q, want 250 or 451 4.7.0", l)
	}
	k.send("NOOP\r\n")
	k.expect("250")
}
