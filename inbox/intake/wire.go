package intake

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// wire is one SMTP connection as the server reads and writes it. It frames
// the byte stream the way go-smtp does — command lines, the DATA body up
// to its terminating dot line, BDAT chunks of their announced size — so
// that the intake knows, below go-smtp:
//
//   - which bytes are command lines, limited to maxLine (go-smtp's own line
//     limit is off: it would also apply to message lines, and a message line
//     longer than it made the whole message fail with 451 although senders
//     do write such lines and Postfix accepts them);
//   - whether a BDAT chunk arrived whole (go-smtp takes a connection closed
//     inside a chunk for the chunk's end, and would hand a truncated message
//     on as complete);
//   - which reply answers which command, so that replies can be corrected:
//     a 502 ("not implemented") to a command the server implements is a
//     bad sequence, 503 (RFC 5321 §4.3.2, RFC 3030 for DATA after BDAT and
//     BDAT after LAST), and every reply text is printable ASCII.
//
// It also terminates STARTTLS itself (go-smtp is given no TLS
// configuration), so that the stream it frames is always the plaintext one:
// it offers STARTTLS in the EHLO reply, answers the command, runs the
// handshake, discards whatever the client sent before it (RFC 3207 §5), and
// refuses it inside a mail transaction, as Postfix does.
//
// Read and Write are called by go-smtp's connection goroutine only; go-smtp
// reads the next command after it has answered the ones before, which is
// what lets the replies be matched to the commands in order.
type wire struct {
	raw     net.Conn
	conn    net.Conn // raw, or the TLS connection over it
	tlsCfg  *tls.Config
	maxLine int
	// handshake bounds the TLS handshake.
	handshake time.Duration

	// Read side.
	buf       []byte // bytes read from conn and not yet handed to go-smtp
	mode      readMode
	chunkLeft int64
	dot       int      // the DATA terminator search's state (go-smtp's)
	line      []byte   // the command line handed out so far, when it is longer than a read
	awaiting  []string // the commands handed out whose final reply is not written yet
	firstLine bool     // the next reply line is the first of its reply
	// bodyHanded says go-smtp was handed bytes of the current DATA body
	// (then it may hold some in its buffer, and the body is no longer the
	// wire's to read: see body).
	bodyHanded bool

	// Write side.
	partial []byte // a reply line not yet complete

	inTx      bool
	ehlo      atomic.Bool // the client greeted with EHLO (not HELO)
	tlsOn     atomic.Bool
	needHello atomic.Bool
	// cut is set when the connection ended inside a BDAT chunk.
	cut atomic.Bool
}

type readMode int

const (
	modeCommand  readMode = iota
	modeDataWait          // DATA handed out, its 354 or refusal not written yet
	modeData              // the DATA body, up to its terminating line
	modeChunk             // a BDAT chunk, chunkLeft bytes to go
	modeBody              // the DATA body, read by the session through body()
)

// go-smtp's DATA terminator states (a copy of its state machine, so the two
// always agree on where a body ends).
const (
	dotBeginLine = iota
	dotDot
	dotDotCR
	dotCR
	dotData
	dotEOF
)

// errLineTooLong is a command line past the limit.
var errLineTooLong = errors.New("intake: command line too long")

// errBodyInUse is go-smtp reading while the session reads the DATA body
// (never, as Data ends the body before it returns).
var errBodyInUse = errors.New("intake: the DATA body is being read below go-smtp")

func newWire(c net.Conn, tlsCfg *tls.Config, maxLine int, handshake time.Duration) *wire {
	return &wire{raw: c, conn: c, tlsCfg: tlsCfg, maxLine: maxLine, handshake: handshake, buf: make([]byte, 0, 4096)}
}

// tls reports whether STARTTLS has secured the connection.
func (w *wire) tls() bool { return w.tlsOn.Load() }

// protocol is the Received field's name for how the message came: SMTP
// (HELO), ESMTP (EHLO) or ESMTPS (over TLS).
func (w *wire) protocol() string {
	switch {
	case w.tls():
		return "ESMTPS"
	case w.ehlo.Load():
		return "ESMTP"
	}
	return "SMTP"
}

// helloPending reports that STARTTLS succeeded and the client has not said
// EHLO again: what it said before does not count (RFC 3207 §4.2).
func (w *wire) helloPending() bool { return w.needHello.Load() }

// chunkCut reports whether the connection ended inside a BDAT chunk: the
// message being received did not arrive whole.
func (w *wire) chunkCut() bool { return w.cut.Load() }

// fill reads more bytes from the connection into the buffer.
func (w *wire) fill() error {
	if len(w.buf) == cap(w.buf) {
		if cap(w.buf) > 2*w.maxLine+4096 {
			return errLineTooLong
		}
		w.buf = append(w.buf[:cap(w.buf)], 0)[:len(w.buf)]
	}
	n, err := w.conn.Read(w.buf[len(w.buf):cap(w.buf)])
	w.buf = w.buf[:len(w.buf)+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// consume drops the first n buffered bytes.
func (w *wire) consume(n int) {
	rest := copy(w.buf, w.buf[n:])
	w.buf = w.buf[:rest]
}

// Read hands go-smtp the next bytes: command lines, or the body and chunks
// they announce.
func (w *wire) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		switch w.mode {
		case modeChunk:
			return w.readChunk(p)
		case modeData:
			return w.readData(p)
		case modeBody:
			// The session reads the body (body); go-smtp reads again only
			// once it has ended.
			return 0, errBodyInUse
		}
		n, err, again := w.readCommands(p)
		if !again {
			return n, err
		}
	}
}

func (w *wire) readChunk(p []byte) (int, error) {
	want := int(min(int64(len(p)), w.chunkLeft))
	var n int
	if len(w.buf) > 0 {
		n = copy(p[:want], w.buf)
		w.consume(n)
	} else {
		var err error
		n, err = w.conn.Read(p[:want])
		if n == 0 && err != nil {
			w.cut.Store(true)
			return 0, err
		}
	}
	w.chunkLeft -= int64(n)
	if w.chunkLeft == 0 {
		w.mode = modeCommand
	}
	return n, nil
}

// next fills p with the bytes buffered, or else with a read from the
// connection; err is the read's when it gave nothing.
func (w *wire) next(p []byte) (n int, err error) {
	if len(w.buf) > 0 {
		n = copy(p, w.buf)
		w.consume(n)
		return n, nil
	}
	n, err = w.conn.Read(p)
	if n > 0 {
		err = nil
	}
	return n, err
}

func (w *wire) readData(p []byte) (int, error) {
	n, err := w.next(p)
	if n == 0 {
		return 0, err
	}
	w.bodyHanded = true
	if end := w.scanData(p[:n]); end < n {
		// The body ended inside these bytes: what follows is commands.
		w.buf = append(w.buf[:0], append(p[end:n:n], w.buf...)...)
		n = end
	}
	return n, nil
}

// scanData runs go-smtp's terminator state machine over b and returns
// where the body ends in it (len(b) when it does not end there).
func (w *wire) scanData(b []byte) int {
	for i := 0; i < len(b); i++ {
		if w.dot == dotData {
			// Most of a body: skip to the next CR.
			j := bytes.IndexByte(b[i:], '\r')
			if j < 0 {
				return len(b)
			}
			i += j
		}
		c := b[i]
		switch w.dot {
		case dotBeginLine:
			switch c {
			case '.':
				w.dot = dotDot
			case '\r':
				w.dot = dotCR
			default:
				w.dot = dotData
			}
		case dotDot:
			if c == '\r' {
				w.dot = dotDotCR
			} else {
				w.dot = dotData
			}
		case dotDotCR:
			if c == '\n' {
				w.dot = dotBeginLine
				w.mode = modeCommand
				return i + 1
			}
			w.dot = dotData
		case dotCR:
			if c == '\n' {
				w.dot = dotBeginLine
			} else {
				w.dot = dotData
			}
		case dotData:
			if c == '\r' {
				w.dot = dotCR
			}
		}
	}
	return len(b)
}

// readCommands hands out the complete command lines buffered (or part of
// one longer than p), stopping after a line that changes what follows
// (DATA, BDAT) and before STARTTLS, which is answered here once go-smtp has
// answered everything before it. again asks Read to look at the mode again.
func (w *wire) readCommands(p []byte) (n int, err error, again bool) {
	if w.mode == modeDataWait {
		// go-smtp reads again without having answered DATA: not what it
		// does; read on as commands.
		w.mode = modeCommand
	}
	for n < len(p) {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.line)+len(w.buf) > w.maxLine {
				return n, w.tooLong(), false
			}
			if n > 0 {
				return n, nil, false
			}
			if len(w.buf) >= len(p) {
				// A line longer than go-smtp's buffer: hand out its start,
				// keep it to classify once it ends.
				k := copy(p, w.buf)
				w.line = append(w.line, w.buf[:k]...)
				w.consume(k)
				return k, nil, false
			}
			if err := w.fill(); err != nil {
				if errors.Is(err, errLineTooLong) {
					return 0, w.tooLong(), false
				}
				return 0, err, false
			}
			continue
		}
		if len(w.line)+i+1 > w.maxLine+2 {
			return n, w.tooLong(), false
		}
		var full []byte
		if len(w.line) > 0 {
			full = append(w.line, w.buf[:i+1]...)
		} else {
			full = w.buf[:i+1]
		}
		cmd, arg := splitCommand(full)
		if cmd == "STARTTLS" && w.tlsCfg != nil && len(w.line) == 0 {
			if n > 0 {
				return n, nil, false // answer what came before first
			}
			w.line = w.line[:0]
			w.consume(i + 1)
			if err := w.startTLS(); err != nil {
				return 0, err, false
			}
			return 0, nil, true
		}
		if i+1 > len(p)-n {
			if n > 0 {
				return n, nil, false
			}
			// The line's end does not fit: hand out what fits.
			k := copy(p, w.buf[:len(p)])
			w.line = append(w.line, w.buf[:k]...)
			w.consume(k)
			return k, nil, false
		}
		n += copy(p[n:], w.buf[:i+1])
		w.consume(i + 1)
		w.line = w.line[:0]
		stop := w.handedOut(cmd, arg)
		if stop {
			return n, nil, false
		}
	}
	return n, nil, false
}

// handedOut notes a command passed to go-smtp and what follows it; true
// when the bytes after it must wait for its reply or are not commands.
func (w *wire) handedOut(cmd, arg string) bool {
	switch cmd {
	case "DATA":
		w.expect("DATA")
		if arg == "" {
			w.mode = modeDataWait
			return true
		}
	case "BDAT":
		size, last, ok := bdatArgs(arg)
		if !ok {
			w.expect("BDAT")
			return false
		}
		if last {
			w.expect("BDAT LAST")
		} else {
			w.expect("BDAT")
		}
		if size > 0 {
			w.mode, w.chunkLeft = modeChunk, size
		}
		return true
	case "EHLO", "HELO":
		w.needHello.Store(false)
		w.ehlo.Store(cmd == "EHLO")
		w.expect(cmd)
	case "":
		w.expect("?") // a malformed line: go-smtp answers it too
	default:
		w.expect(cmd)
	}
	return false
}

func (w *wire) expect(cmd string) {
	if len(w.awaiting) == 0 {
		w.firstLine = true
	}
	w.awaiting = append(w.awaiting, cmd)
}

// splitCommand is go-smtp's command parse (parseCmd): the verb upper-cased
// and its argument; "" for a line go-smtp rejects as malformed.
func splitCommand(line []byte) (cmd, arg string) {
	s := strings.TrimRight(string(line), "\r\n")
	switch {
	case strings.HasPrefix(strings.ToUpper(s), "STARTTLS"):
		return "STARTTLS", ""
	case len(s) < 4, len(s) == 5:
		return "", ""
	case len(s) == 4:
		return strings.ToUpper(s), ""
	case s[4] != ' ':
		return "", ""
	}
	return strings.ToUpper(s[:4]), strings.TrimSpace(s[5:])
}

// bdatArgs is go-smtp's parse of BDAT's arguments: the chunk follows the
// command exactly when it succeeds.
func bdatArgs(arg string) (size int64, last, ok bool) {
	args := strings.Fields(arg)
	if len(args) == 0 || len(args) > 2 {
		return 0, false, false
	}
	if len(args) == 2 {
		if !strings.EqualFold(args[1], "LAST") {
			return 0, false, false
		}
		last = true
	}
	n, err := strconv.ParseUint(args[0], 10, 32)
	if err != nil {
		return 0, false, false
	}
	return int64(n), last, true
}

// tooLong answers a command line past the limit and ends the connection
// (go-smtp closes it quietly at the end of its input).
func (w *wire) tooLong() error {
	w.writeRaw("500 5.5.2 Line too long, closing connection\r\n")
	return io.EOF
}

// startTLS answers STARTTLS and runs the handshake.
func (w *wire) startTLS() error {
	switch {
	case w.tls():
		w.writeRaw("503 5.5.1 TLS is already active\r\n")
		return nil
	case w.inTx:
		w.writeRaw("503 5.5.1 STARTTLS is not allowed during a mail transaction\r\n")
		return nil
	}
	if err := w.writeRaw("220 2.0.0 Ready to start TLS\r\n"); err != nil {
		return err
	}
	// Whatever came with the command is not trusted across the handshake.
	w.buf = w.buf[:0]
	tc := tls.Server(w.raw, w.tlsCfg)
	// The next command is due within the same time as the handshake.
	w.raw.SetDeadline(time.Now().Add(w.handshake))
	if err := tc.Handshake(); err != nil {
		// Nothing can be said in the clear any more: end the connection.
		return io.EOF
	}
	w.conn = tc
	w.tlsOn.Store(true)
	w.needHello.Store(true)
	return nil
}

// writeRaw writes a reply of the wire's own.
func (w *wire) writeRaw(s string) error {
	_, err := w.conn.Write([]byte(s))
	return err
}

// Write passes go-smtp's replies on, corrected line by line.
func (w *wire) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	var out []byte
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		out = w.reply(out, w.partial[:i+1])
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) == 0 {
		w.partial = nil
	}
	if len(out) == 0 {
		return len(p), nil
	}
	if _, err := w.conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// implemented are the commands a 502 cannot mean "not implemented" for:
// go-smtp answers 502 when they come out of sequence.
var implemented = map[string]bool{"MAIL": true, "RCPT": true, "DATA": true, "BDAT": true, "BDAT LAST": true}

// reply appends one reply line to out, corrected, and notes what it
// answers.
func (w *wire) reply(out, line []byte) []byte {
	text := bytes.TrimRight(line, "\r\n")
	start := len(out)
	for _, c := range text {
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		out = append(out, c)
	}
	out = append(out, '\r', '\n')
	l := out[start:]
	cmd := ""
	if len(w.awaiting) > 0 {
		cmd = w.awaiting[0]
	}
	if len(l) >= 4 && string(l[:4]) == "502 " && implemented[cmd] {
		l[2] = '3'
	}
	first := w.firstLine
	w.firstLine = false
	if first && cmd == "EHLO" && w.tlsCfg != nil && !w.tls() && len(l) >= 4 && string(l[:4]) == "250-" {
		out = append(out, "250-STARTTLS\r\n"...)
	}
	if len(l) >= 4 && l[3] == '-' {
		return out // more lines to come
	}
	w.answered(cmd, l)
	return out
}

// answered notes the final reply to the first command awaiting one.
func (w *wire) answered(cmd string, l []byte) {
	if cmd == "" {
		return
	}
	ok := len(l) > 0 && l[0] == '2'
	switch cmd {
	case "DATA":
		if len(l) >= 3 && string(l[:3]) == "354" {
			w.mode, w.dot, w.bodyHanded = modeData, dotBeginLine, false
			w.awaiting[0] = "DATA body"
			w.firstLine = true
			return
		}
		if w.mode == modeDataWait {
			w.mode = modeCommand
		}
	case "DATA body", "BDAT LAST", "RSET", "EHLO", "HELO":
		w.inTx = false
	case "BDAT":
		if !ok {
			w.inTx = false // go-smtp ends the transaction on a refused chunk
		}
	case "MAIL":
		if ok {
			w.inTx = true
		}
	}
	w.awaiting = w.awaiting[1:]
	w.firstLine = len(w.awaiting) > 0
}

// Close closes the connection (any goroutine may: the TCP connection
// under the TLS one, which ends both).
func (w *wire) Close() error { return w.raw.Close() }

func (w *wire) LocalAddr() net.Addr                { return w.raw.LocalAddr() }
func (w *wire) RemoteAddr() net.Addr               { return w.raw.RemoteAddr() }
func (w *wire) SetDeadline(t time.Time) error      { return w.raw.SetDeadline(t) }
func (w *wire) SetReadDeadline(t time.Time) error  { return w.raw.SetReadDeadline(t) }
func (w *wire) SetWriteDeadline(t time.Time) error { return w.raw.SetWriteDeadline(t) }

// body hands the session the DATA body go-smtp has just announced (354),
// to read below go-smtp: go-smtp's own reader takes a byte at a time
// through a state machine, which for a 100 KiB message costs more than
// everything else the wire does. The body reads the same bytes — its
// state machine is go-smtp's, including the dot-unstuffing and its
// quirks — in runs up to the next CR, straight into the caller's buffer.
// ok is false when go-smtp was already handed part of the body (it may
// hold some in its buffer) or when no DATA body is being received: then
// read go-smtp's reader.
//
// The session must read the body to its end (finish does) before Data
// returns; the wire then hands go-smtp the terminating line, so that its
// reader ends where the body did and finds the commands after it.
func (w *wire) body() (*dataBody, bool) {
	if w.mode != modeData || w.bodyHanded {
		return nil, false
	}
	w.mode = modeBody
	return &dataBody{w: w}, true
}

// dataBody is a DATA body read below go-smtp (wire.body).
type dataBody struct {
	w    *wire
	done bool
	err  error // why the body ended early
}

// Read reads the body, unstuffed; io.EOF once its terminating line has
// arrived, io.ErrUnexpectedEOF when the connection ends before it.
func (d *dataBody) Read(p []byte) (int, error) {
	if d.done {
		if d.err != nil {
			return 0, d.err
		}
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	w := d.w
	for {
		n, err := w.next(p)
		if n == 0 {
			if err == nil {
				err = io.ErrNoProgress
			} else if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			// go-smtp, reading on, meets the connection's end too.
			w.mode = modeData
			d.done = true
			d.err = err
			return 0, err
		}
		out, end, done := unstuff(p[:n], &w.dot)
		if done {
			// What follows the body is commands: they go back to the
			// buffer behind the terminating line go-smtp's reader ends on.
			w.unread(".\r\n", p[end:n])
			w.mode, w.dot = modeData, dotBeginLine
			d.done = true
			return out, io.EOF
		}
		if out > 0 {
			return out, nil
		}
		// Only elided bytes (a stuffed dot): read on.
	}
}

// unread puts line and rest back in front of the buffered bytes.
func (w *wire) unread(line string, rest []byte) {
	k := len(line) + len(rest)
	if len(w.buf)+k > cap(w.buf) {
		w.buf = append(make([]byte, 0, max(cap(w.buf), len(w.buf)+k)), w.buf...)
	}
	w.buf = w.buf[:len(w.buf)+k]
	copy(w.buf[k:], w.buf[:len(w.buf)-k])
	copy(w.buf[copy(w.buf, line):], rest)
}

// finish reads what is left of the body, so that go-smtp finds the
// commands after it; the error is the connection's, if it ended first.
func (d *dataBody) finish() error {
	_, err := io.Copy(io.Discard, d)
	return err
}

// unstuff runs go-smtp's DATA state machine over b in place: it removes
// the bytes go-smtp's reader removes (a dot starting a line, and the CR and
// LF of the terminating ".\r\n"), keeps the rest, and returns how many bytes
// of b now hold the body, how many of b's bytes it took, and whether the
// terminating line ended among them (the bytes from end on are not the
// body's). Between lines it skips to the next CR at once.
func unstuff(b []byte, state *int) (out, end int, done bool) {
	s := *state
	for i := 0; i < len(b); i++ {
		if s == dotData {
			j := bytes.IndexByte(b[i:], '\r')
			if j < 0 {
				j = len(b) - i
			}
			if out != i {
				copy(b[out:], b[i:i+j])
			}
			out, i = out+j, i+j
			if i == len(b) {
				break
			}
		}
		c := b[i]
		switch s {
		case dotBeginLine:
			switch c {
			case '.':
				s = dotDot
				continue
			case '\r':
				s = dotCR
			default:
				s = dotData
			}
		case dotDot:
			if c == '\r' {
				s = dotDotCR
				continue
			}
			s = dotData
		case dotDotCR:
			if c == '\n' {
				*state = dotBeginLine
				return out, i + 1, true
			}
			s = dotData
		case dotCR:
			if c == '\n' {
				s = dotBeginLine
			} else {
				s = dotData
			}
		case dotData: // c is the CR found above
			s = dotCR
		}
		b[out] = c
		out++
	}
	*state = s
	return out, len(b), false
}
