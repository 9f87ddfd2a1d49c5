package intake

import (
	"bytes"
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

// decodeData is what RFC 5321 §4.5.2 says a DATA body is, written line
// by line: a line ends at CR LF (a bare CR or LF ends none), the body ends
// at the first line that is a dot alone, and a dot that starts any other
// line is removed. It returns the body and where its terminating line ends
// in b, or -1 when b holds none.
func decodeData(b []byte) ([]byte, int) {
	var out []byte
	for start := 0; start < len(b); {
		end := len(b)
		if i := bytes.Index(b[start:], []byte("\r\n")); i >= 0 {
			end = start + i + 2
		}
		line := b[start:end]
		if string(line) == terminator {
			return out, end
		}
		out = append(out, bytes.TrimPrefix(line, []byte("."))...)
		start = end
	}
	return out, -1
}

// readsConn hands out its reads one by one, then io.EOF.
type readsConn struct {
	net.Conn
	reads [][]byte
}

func (c *readsConn) Read(p []byte) (int, error) {
	for len(c.reads) > 0 && len(c.reads[0]) == 0 {
		c.reads = c.reads[1:]
	}
	if len(c.reads) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.reads[0])
	if c.reads[0] = c.reads[0][n:]; len(c.reads[0]) == 0 {
		c.reads = c.reads[1:]
	}
	return n, nil
}

// wireBody reads a DATA body through a wire whose connection hands out
// reads, into buffers of size bufSize: the body, and the bytes left after
// it (the terminating line first) or the error that ended it.
func wireBody(t testing.TB, reads [][]byte, bufSize int) (body, rest []byte, err error) {
	w := newWire(&readsConn{reads: reads}, nil, 2048, time.Minute)
	w.mode = modeData
	d, ok := w.body()
	if !ok {
		t.Fatal("no DATA body to read")
	}
	buf := make([]byte, bufSize)
	for {
		n, rerr := d.Read(buf)
		body = append(body, buf[:n]...)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return body, nil, rerr
		}
	}
	rest = append(rest, w.buf...)
	for _, r := range w.reads() {
		rest = append(rest, r...)
	}
	return body, rest, nil
}

// reads is what the wire's connection has yet to hand out (a readsConn's).
func (w *wire) reads() [][]byte { return w.conn.(*readsConn).reads }

// checkBody reads in through a wire, whole and split in two at every
// position, into buffers of 1, 2 and 4096 bytes, and holds the result to
// decodeData.
func checkBody(t *testing.T, in []byte) {
	t.Helper()
	want, end := decodeData(in)
	for split := 0; split <= len(in); split++ {
		for _, size := range []int{1, 2, 4096} {
			if split > 0 && split < len(in) && size != 4096 && split%3 != 0 {
				continue // enough of the small buffers
			}
			body, rest, err := wireBody(t, [][]byte{in[:split:split], in[split:]}, size)
			if end < 0 {
				if err != io.ErrUnexpectedEOF {
					t.Fatalf("%q (split at %d, reads of %d): no terminating line, yet the body ended: err %v", in, split, size, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%q (split at %d, reads of %d): %v, want the body to end at byte %d", in, split, size, err, end)
			}
			if !bytes.Equal(body, want) {
				t.Fatalf("%q (split at %d, reads of %d): body %q, want %q", in, split, size, body, want)
			}
			if wantRest := append([]byte(terminator), in[end:]...); !bytes.Equal(rest, wantRest) {
				t.Fatalf("%q (split at %d, reads of %d): after the body %q, want %q", in, split, size, rest, wantRest)
			}
		}
	}
}

// The end of a DATA body, with every arrangement of CR, LF and dot around
// the terminating line, whole and split across reads at every position.
// The body ends exactly at a dot line after CR LF, however stray the CRs
// before that CR LF; a bare LF or CR never starts or ends that line.
func TestDataBodyEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		body string // "" with end false: no end
		end  bool
	}{
		// The hostile client's message (issue 32): a stray CR before the
		// line's CR LF, then the terminator. go-smtp's decoder never ended it.
		{"xx\r\r\n.\r\n", "xx\r\r\n", true},
		{"xx\r\r\r\n.\r\nNOOP\r\n", "xx\r\r\r\n", true},
		{"\r\r\n.\r\n", "\r\r\n", true},
		{".\r\n", "", true},
		{"a\r\n..\r\n.\r\n", "a\r\n.\r\n", true},
		// A CR after a stuffed dot is the line's (go-smtp dropped it).
		{".\rX\r\n.\r\n", "\rX\r\n", true},
		{".\r\r\n.\r\n", "\r\r\n", true},
		// Smuggling: none of these ends the body.
		{"a\n.\nMAIL FROM:<x@y>\r\n", "", false},
		{"a\n.\r\nMAIL FROM:<x@y>\r\n", "", false},
		{"a\r.\rMAIL FROM:<x@y>\r\n", "", false},
		{"a\r\n.\nMAIL FROM:<x@y>\r\n", "", false},
		{"a\r\n.\r.\r\n", "", false},
		{"a\r\n .\r\n", "", false},
	} {
		body, end := decodeData([]byte(tc.in))
		if (end >= 0) != tc.end || string(body) != tc.body && tc.end {
			t.Fatalf("decodeData(%q) = %q, %d: the reference is wrong", tc.in, body, end)
		}
		checkBody(t, []byte(tc.in))
	}
	// Every string of up to five bytes of CR, LF, dot and a letter after a
	// line, alone (its end decided by the bytes) and followed by a
	// terminating line and a command.
	alphabet := []byte{'\r', '\n', '.', 'x'}
	var walk func(prefix []byte)
	walk = func(prefix []byte) {
		in := append([]byte("xx\r\n"), prefix...)
		checkBody(t, in)
		checkBody(t, append(in, "\r\n.\r\nNOOP\r\n"...))
		if len(prefix) == 5 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix[:len(prefix):len(prefix)], c))
		}
	}
	walk(nil)
}

// FuzzDataBodyEnd: a DATA body read through the wire, its bytes split
// across reads anywhere, is what decodeData says — the same bytes, ended
// at the same place, with the same bytes left for the commands after it —
// and a body with a terminating line always ends.
func FuzzDataBodyEnd(f *testing.F) {
	for _, s := range []string{"hello\r\n.\r\n", ".\r\n", "a\r\n..\r\n.\r\n", "\r\n.\r\r\n.\r\nNOOP\r\n", "x\n.\r\n\r\n.\r\n",
		"\r\r\n.\r\n", "xx\r\r\n.\r\n", ".\rX\r\n.\r\n", "a\n.\n", "a\r.\r"} {
		f.Add([]byte(s), uint8(3), uint16(4096))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8, size uint16) {
		var reads [][]byte
		k := int(step)%16 + 1
		for off := 0; off < len(in); off += k {
			reads = append(reads, in[off:min(off+k, len(in)):min(off+k, len(in))])
		}
		want, end := decodeData(in)
		body, rest, err := wireBody(t, reads, int(size)%4096+1)
		switch {
		case end < 0 && err != io.ErrUnexpectedEOF:
			t.Fatalf("%q: no terminating line, yet the body ended (err %v)", in, err)
		case end < 0:
		case err != nil:
			t.Fatalf("%q: %v, want the body to end at byte %d", in, err, end)
		case !bytes.Equal(body, want):
			t.Fatalf("%q: body %q, want %q", in, body, want)
		case !bytes.Equal(rest, append([]byte(terminator), in[end:]...)):
			t.Fatalf("%q: after the body %q, want %q", in, rest, in[end:])
		}
	})
}

// bodyBackend records each DATA body its sessions read: through the wire's
// body (fast), or leave to go-smtp's reader (which the wire hands only
// the terminating line).
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

// FuzzDataBody: through go-smtp, a DATA body the session reads through
// the wire (wire.body) is what decodeData says, however the bytes arrive,
// and the message is answered; a session that leaves the body unread gets
// the same replies (the wire reads it, and go-smtp's reader is handed only
// the terminating line).
func FuzzDataBody(f *testing.F) {
	for _, s := range []string{"hello", "", ".", "..leading dot\r\n.x\r\n..", "a\r\n.\r\nMAIL FROM:<x@y>\r\nRCPT TO:<z@w>\r\nDATA\r\nsecond",
		"\r", "line\r\r\n.\r\n", ".\rX\r\n.\r\n", "bare\nlf\n.\n", strings.Repeat("0123456789abcdef\r\n", 5000), "\r\n.\r\n\r\n.\r\n", "xx\r\r"} {
		f.Add([]byte(s), uint16(4096))
		f.Add([]byte(s), uint16(3))
	}
	var chop atomic.Int64
	fast, fastAddr := serveBodies(f, true, &chop)
	unread, unreadAddr := serveBodies(f, false, &chop)
	f.Fuzz(func(t *testing.T, body []byte, split uint16) {
		// Reads of a few bytes, but not so many that one input takes seconds.
		chop.Store(max(int64(split)%5000+1, int64(len(body)/2000)))
		fast.bodies, unread.bodies = nil, nil
		got := transcript(t, fastAddr, body)
		want := transcript(t, unreadAddr, body)
		if got != want {
			t.Fatalf("replies differ:\nbody read: %q\nunread:    %q", got, want)
		}
		// The body always ends: the transcript adds a terminating line.
		in := append(append([]byte(nil), body...), "\r\n.\r\n"...)
		content, _ := decodeData(in)
		if _, after, _ := strings.Cut(got, "354 "); !strings.Contains(after, "\r\n250 2.0.0 OK") {
			t.Fatalf("the message was not answered 250: %q", got)
		}
		// The session's Data has returned before its reply was written.
		if len(fast.bodies) == 0 || fast.bodies[0] != fmt.Sprintf("%q (err %v)", content, error(nil)) {
			t.Fatalf("bodies %v, want first %q", fast.bodies, content)
		}
	})
}
