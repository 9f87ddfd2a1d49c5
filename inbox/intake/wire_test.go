package intake

import (
	"fmt"
	"io"
	"log"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// endOfData is go-smtp's DATA terminator state machine, one byte at a
// time (its dataReader, less the unstuffing): where the body ends in b, or
// -1.
func endOfData(b []byte) int {
	const (
		beginLine = iota
		dot
		dotCR
		cr
		data
	)
	state := beginLine
	for i, c := range b {
		switch state {
		case beginLine:
			switch c {
			case '.':
				state = dot
			case '\r':
				state = cr
			default:
				state = data
			}
		case dot:
			if c == '\r' {
				state = dotCR
			} else {
				state = data
			}
		case dotCR:
			if c == '\n' {
				return i + 1
			}
			state = data
		case cr:
			if c == '\n' {
				state = beginLine
			} else {
				state = data
			}
		case data:
			if c == '\r' {
				state = cr
			}
		}
	}
	return -1
}

// FuzzScanData: the wire's terminator search (which skips ahead to the
// next CR) ends a body exactly where go-smtp's does, however the bytes are
// split across reads: a disagreement would let one side read commands as
// message or message as commands.
func FuzzScanData(f *testing.F) {
	for _, s := range []string{"hello\r\n.\r\n", ".\r\n", "a\r\n..\r\n.\r\n", "\r\n.\r\r\n.\r\nNOOP\r\n", "x\n.\r\n\r\n.\r\n", "\r\r\n.\r\n"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, split uint8) {
		want := endOfData(b)
		w := &wire{mode: modeData}
		step := int(split)%7 + 1
		got := -1
		for off := 0; off < len(b); off += step {
			piece := b[off:min(off+step, len(b))]
			if end := w.scanData(piece); end < len(piece) || w.mode == modeCommand {
				got = off + end
				break
			}
		}
		if got != want {
			t.Fatalf("%q split every %d: body ends at %d, go-smtp ends it at %d", b, step, got, want)
		}
	})
}

// bodyBackend records each DATA body its sessions read: through the wire's
// body (fast) or through go-smtp's reader.
type bodyBackend struct {
	fast   bool
	mu     sync.Mutex
	bodies []string
}

func (b *bodyBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &bodySession{b: b, c: c}, nil
}

type bodySession struct {
	b *bodyBackend
	c *smtp.Conn
}

func (*bodySession) Reset()                               {}
func (*bodySession) Logout() error                        { return nil }
func (*bodySession) Mail(string, *smtp.MailOptions) error { return nil }
func (*bodySession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *bodySession) Data(r io.Reader) error {
	if w, ok := s.c.Conn().(*wire); ok && s.b.fast {
		if body, ok := w.body(); ok {
			defer body.finish()
			r = body
		}
	}
	data, err := io.ReadAll(r)
	s.b.mu.Lock()
	s.b.bodies = append(s.b.bodies, fmt.Sprintf("%q (err %v)", data, err))
	s.b.mu.Unlock()
	return err
}

// choppedConn hands out at most n bytes a read, as a slow network would.
type choppedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c choppedConn) Read(p []byte) (int, error) {
	return c.Conn.Read(p[:min(len(p), int(c.n.Load()))])
}

// Close reads what the client sent and the server did not (go-smtp closes
// after too many errors) before closing: closing with unread bytes resets
// the connection, which can lose the replies on their way.
func (c choppedConn) Close() error {
	if tc, ok := c.Conn.(*net.UnixConn); ok {
		tc.CloseWrite()
		tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, tc)
	}
	return c.Conn.Close()
}

// wireListener gives go-smtp each connection through a wire.
type wireListener struct {
	net.Listener
	chop *atomic.Int64
}

func (l wireListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newWire(choppedConn{Conn: c, n: l.chop}, nil, 2048, time.Minute), nil
}

// serveBodies runs a go-smtp server over wires whose sessions read DATA
// bodies fast or through go-smtp.
func serveBodies(tb testing.TB, fast bool, chop *atomic.Int64) (*bodyBackend, string) {
	b := &bodyBackend{fast: fast}
	srv := smtp.NewServer(b)
	srv.Domain = "body.test"
	srv.MaxLineLength = 0
	srv.MaxMessageBytes = 1 << 20
	srv.ErrorLog = log.New(io.Discard, "", 0)
	// A Unix socket: a fuzzing run opens more connections than a TCP
	// port range has room for while they wait out TIME_WAIT.
	ln, err := net.Listen("unix", filepath.Join(tb.TempDir(), "smtp.sock"))
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Serve(wireListener{Listener: ln, chop: chop})
	tb.Cleanup(func() { srv.Close() })
	return b, ln.Addr().String()
}

// transcript sends a transaction with body (and whatever follows it, all
// at once, then closes its side) and returns what the server answered.
func transcript(tb testing.TB, addr string, body []byte) string {
	c, err := net.Dial("unix", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	in := append([]byte("EHLO client.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@body.test>\r\nDATA\r\n"), body...)
	in = append(in, "\r\n.\r\nNOOP\r\nQUIT\r\n"...)
	if _, err := c.Write(in); err != nil {
		tb.Fatal(err)
	}
	c.(*net.UnixConn).CloseWrite()
	out, err := io.ReadAll(c)
	if err != nil {
		tb.Fatalf("reading the replies: %v", err)
	}
	return string(out)
}

// FuzzDataBody: a DATA body read through the wire (wire.body) is what
// go-smtp's own reader reads — the same bytes, unstuffed the same way, ended
// at the same place, with the same commands after it and the same replies —
// however the bytes arrive, since a difference would change stored messages
// or read message bytes as commands.
func FuzzDataBody(f *testing.F) {
	for _, s := range []string{"hello", "", ".", "..leading dot\r\n.x\r\n..", "a\r\n.\r\nMAIL FROM:<x@y>\r\nRCPT TO:<z@w>\r\nDATA\r\nsecond",
		"\r", "line\r\r\n.\r\n", ".\rX\r\n.\r\n", "bare\nlf\n.\n", strings.Repeat("0123456789abcdef\r\n", 5000), "\r\n.\r\n\r\n.\r\n"} {
		f.Add([]byte(s), uint16(4096))
		f.Add([]byte(s), uint16(3))
	}
	var chop atomic.Int64
	fast, fastAddr := serveBodies(f, true, &chop)
	ref, refAddr := serveBodies(f, false, &chop)
	f.Fuzz(func(t *testing.T, body []byte, split uint16) {
		// Reads of a few bytes, but not so many that one input takes seconds.
		chop.Store(max(int64(split)%5000+1, int64(len(body)/2000)))
		fast.bodies, ref.bodies = nil, nil
		want := transcript(t, refAddr, body)
		got := transcript(t, fastAddr, body)
		if got != want {
			t.Fatalf("replies differ:\nwire body: %q\ngo-smtp:   %q", got, want)
		}
		// The session's Data has returned before its reply was written.
		if g, w := strings.Join(fast.bodies, "\n"), strings.Join(ref.bodies, "\n"); g != w {
			t.Fatalf("bodies differ:\nwire body: %s\ngo-smtp:   %s", g, w)
		}
	})
}
