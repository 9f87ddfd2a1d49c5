package intake

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/panics"
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
	dot       int      // the DATA body decoder's state (unstuff)
	line      []byte   // the command line handed out so far, when it is longer than a read
	awaiting  []string // the commands handed out whose final reply is not written yet
	firstLine bool     // the next reply line is the first of its reply
	// bodyEnded says the current DATA body has been read to its
	// terminating line, which is all go-smtp's reader is handed of it.
	bodyEnded bool
	// termHanded is how much of the terminating line go-smtp was handed.
	termHanded int

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
	modeData              // a DATA body, up to its terminating line, not read yet (or only its terminating line left)
	modeChunk             // a BDAT chunk, chunkLeft bytes to go
	modeBody              // the DATA body, read by the session through body()
)

// The DATA body decoder's states (unstuff). A line starts at the body's
// start and after each CR LF; the body ends at a line that is a dot alone,
// ".\r\n". A bare LF or a bare CR ends no line, so "\n.\n", "\n.\r\n",
// "\r.\r" and "\r\n.\n" never end a body (SMTP smuggling).
const (
	dotBeginLine = iota // at a line's start
	dotDot              // a dot began the line (elided: dot-stuffing)
	dotDotCR            // then a CR, held back: the line may be the terminator
	dotCR               // a CR, which may end the line
	dotData             // inside a line
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
func (w *wire) Read(p []byte) (n int, err error) {
	defer w.contain("read", &err)
	hook("read")
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

// readData hands go-smtp's DATA reader the body's terminating line, and
// nothing of the body itself: go-smtp's decoder ends no body whose last
// line ends in CR CR LF, and would read on into the commands after it. The
// session reads the body through body(); one it did not read is read here
// and dropped, so that go-smtp's reader, given an empty body, ends where
// the body did.
func (w *wire) readData(p []byte) (int, error) {
	if !w.bodyEnded {
		w.mode = modeBody
		if err := (&dataBody{w: w}).finish(); err != nil {
			return 0, err
		}
	}
	// The terminating line is at the buffer's start (dataBody.Read).
	n := copy(p, w.buf[:min(len(w.buf), len(terminator)-w.termHanded)])
	w.consume(n)
	w.termHanded += n
	if w.termHanded == len(terminator) {
		w.mode, w.bodyEnded, w.termHanded = modeCommand, false, 0
	}
	return n, nil
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
func (w *wire) Write(p []byte) (n int, err error) {
	defer w.contain("write", &err)
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

// errPanicked ends a connection whose wire panicked.
var errPanicked = errors.New("intake: the connection ended after a panic")

// replyPanic answers the command a panic interrupted, and ends the
// connection.
const replyPanic = "421 4.3.0 Internal error, closing connection: please try again later\r\n"

// contain, deferred by Read and Write (called by go-smtp outside the
// recover of its command handling), stops a panic of the wire: it is
// reported, the client is told 421 4.3.0 and the connection ends; err
// becomes errPanicked.
func (w *wire) contain(where string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	panics.Report(panics.SMTP, "wire "+where, v, debug.Stack())
	w.raw.SetWriteDeadline(time.Now().Add(5 * time.Second))
	w.writeRaw(replyPanic)
	w.Close()
	*err = errPanicked
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
	if bytes.HasPrefix(l, []byte("421 4.0.0 ")) {
		// go-smtp's answer to a panic it recovered: a local error.
		l[6] = '3'
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
			w.mode, w.dot, w.bodyEnded, w.termHanded = modeData, dotBeginLine, false, 0
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

// terminator is the line that ends a DATA body.
const terminator = ".\r\n"

// body hands the session the DATA body go-smtp has just announced (354),
// to read below go-smtp: the wire decodes it (unstuff) in runs up to the
// next CR, straight into the caller's buffer, and go-smtp's own reader —
// a byte at a time, and one that misses the end of a body whose last line
// ends in CR CR LF — is handed only the terminating line. ok is false when
// no DATA body is being received.
//
// The session must read the body to its end (finish does) before Data
// returns; the wire then hands go-smtp the terminating line, so that its
// reader ends where the body did and finds the commands after it.
func (w *wire) body() (*dataBody, bool) {
	if w.mode != modeData || w.bodyEnded {
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
		if w.dot == dotDotCR {
			// A dot line's CR ended the last read: the byte after it says
			// whether the line is the terminator.
			if len(w.buf) == 0 {
				if err := w.fill(); err != nil {
					return 0, d.fail(err)
				}
			}
			if w.buf[0] == '\n' {
				w.consume(1)
				return 0, d.end(nil)
			}
			p[0], w.dot = '\r', dotData
			return 1, nil
		}
		n, err := w.next(p)
		if n == 0 {
			return 0, d.fail(err)
		}
		out, end, done := unstuff(p[:n], &w.dot)
		if done {
			return out, d.end(p[end:n])
		}
		if out > 0 {
			return out, nil
		}
		// Only elided bytes (a stuffed dot): read on.
	}
}

// end ends the body at its terminating line; rest, the bytes read after
// it, are commands: they go back to the buffer behind the terminating line
// go-smtp's reader ends on.
func (d *dataBody) end(rest []byte) error {
	w := d.w
	w.unread(terminator, rest)
	w.mode, w.dot, w.bodyEnded = modeData, dotBeginLine, true
	d.done = true
	return io.EOF
}

// fail ends the body early with the connection's error err.
func (d *dataBody) fail(err error) error {
	if err == nil {
		err = io.ErrNoProgress
	} else if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	// go-smtp, reading on, meets the connection's end too.
	d.w.mode = modeData
	d.done = true
	d.err = err
	return err
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

// unstuff decodes DATA body bytes b in place, from the decoder state
// *state (the dot… constants): it removes a dot that starts a line
// (dot-stuffing, RFC 5321 §4.5.2) and the terminating line, keeps every
// other byte, and returns how many bytes of b now hold the body, how many
// of b's bytes it took, and whether the terminating line ended among them
// (the bytes from end on are not the body's). A CR after a line's leading
// dot that is b's last byte is not taken (end is len(b)-1): the byte after
// it decides whether the line is the terminator. Inside a line it skips
// to the next CR at once.
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
			// Not the terminator: the CR held back is the line's. A state
			// of dotDotCR at the start of b is the caller's to resolve,
			// so the CR was taken in this call and its place is free.
			b[out] = '\r'
			out++
			s = dotData
			if c == '\r' {
				s = dotCR
			}
		case dotCR:
			switch c {
			case '\n':
				s = dotBeginLine
			case '\r':
				// A CR after a CR: the line may end at this one.
			default:
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
