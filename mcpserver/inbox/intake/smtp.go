package intake

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/store"
)

// Config configures the SMTP server. Zero fields take the defaults.
type Config struct {
	// Domain is the name the server greets with (default: the host's name).
	Domain string
	// MaxMessageBytes limits a message (default DefaultMaxMessageBytes);
	// larger ones get 552, announced in EHLO's SIZE.
	MaxMessageBytes int64
	// MaxRecipients limits RCPT per message (default 50); more get 452.
	MaxRecipients int
	// MaxLineLength limits a command line (default 2048, as Postfix's
	// line_length_limit); a longer one gets 500 and the connection is
	// closed. Message lines have no limit but the message's size: RFC 5321
	// says 1000, but real senders exceed it (unwrapped HTML) and Postfix
	// accepts them.
	MaxLineLength int
	// CommandTimeout is how long the server waits for a command (default
	// 2 minutes), and how long a reply may take to write.
	CommandTimeout time.Duration
	// DataIdleTimeout is how long DATA may go without a byte arriving
	// (default 1 minute); DataTimeout bounds a whole DATA (default 10
	// minutes: 25 MiB at 45 KB/s).
	DataIdleTimeout, DataTimeout time.Duration
	// MaxConnections limits simultaneous connections (default 200); one
	// more is told 421 4.7.0 at once and closed.
	MaxConnections int
	// RecipientCache is how long an inbox found for a RCPT address is
	// remembered (default 2 s; negative: not at all). An inbox created
	// meanwhile is found at once; one deleted is still accepted at RCPT for
	// that long, and its message answered 451.
	RecipientCache time.Duration
	// TLS, when set, offers STARTTLS with this configuration.
	TLS *tls.Config
	// Logger receives one line per connection problem (default: discard).
	Logger *slog.Logger
	// Observe, when set, is told how each transaction ended — a message
	// answered after DATA, or a recipient refused at RCPT — once its
	// reply is decided (logs, metrics). It must not block.
	Observe func(Transaction)
}

// Transaction is what one SMTP transaction came to, as Config.Observe
// hears of it: what a mail log's line shows of it.
type Transaction struct {
	// Remote is the client's address; Helo the name it greeted with; TLS
	// says the session was encrypted.
	Remote, Helo string
	TLS          bool
	// MailFrom and RcptTo are the envelope (the recipients accepted, or
	// the one refused).
	MailFrom string
	RcptTo   []string
	// Size is the bytes of the message read (0 when refused at RCPT).
	Size int64
	// Code is the reply's code (250, 550, 552, 451…); Result says it in a
	// word: "stored", "refused" (the sender was refused by every inbox's
	// rules, or the recipient is unknown), "too_large", "try_later",
	// "timeout" or "error"; Reason is the refusal's reason, when one.
	Code           int
	Result, Reason string
	// EmailIDs are the e-mails stored, one per inbox; Receipts say how
	// each was recorded (accepted, or rejected by its inbox's rules with
	// the reason).
	EmailIDs []string
	Receipts []Receipt
	// Duration is how long DATA took, from its command to the reply.
	Duration time.Duration
}

// observe tells Config.Observe of a transaction (t's envelope and outcome
// set by the caller).
func (se *session) observe(t Transaction) {
	if se.s.cfg.Observe == nil {
		return
	}
	t.Remote, t.Helo = se.conn.Conn().RemoteAddr().String(), se.conn.Hostname()
	t.TLS = se.wire != nil && se.wire.tls()
	se.s.cfg.Observe(t)
}

// observeData tells Config.Observe how a DATA ended, from its reply err.
func (se *session) observeData(start time.Time, t Transaction, err error) {
	t.Duration, t.Code, t.Result = time.Since(start), 451, "error"
	var reply *smtp.SMTPError
	if errors.As(err, &reply) {
		t.Code = reply.Code
	}
	switch {
	case t.Code == 250:
		t.Result = "stored"
		if _, ids, ok := strings.Cut(reply.Message, "stored as "); ok {
			t.EmailIDs = strings.Fields(ids)
		}
	case errors.Is(err, smtp.ErrDataTooLarge) || t.Code == 552:
		t.Result, t.Code = "too_large", 552
	case err == errTryLater:
		t.Result = "try_later"
	case err == errDataTimeout:
		t.Result = "timeout"
	case t.Code == 550:
		t.Result = "refused"
		t.Reason = strings.TrimPrefix(reply.Message, "Message refused: ")
	}
	se.observe(t)
}

func (c Config) withDefaults() Config {
	if c.Domain == "" {
		c.Domain, _ = os.Hostname()
		if c.Domain == "" {
			c.Domain = "localhost"
		}
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxRecipients <= 0 {
		c.MaxRecipients = 50
	}
	if c.MaxLineLength <= 0 {
		c.MaxLineLength = 2048
	}
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = 2 * time.Minute
	}
	if c.DataIdleTimeout <= 0 {
		c.DataIdleTimeout = time.Minute
	}
	if c.DataTimeout <= 0 {
		c.DataTimeout = 10 * time.Minute
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = 200
	}
	if c.RecipientCache == 0 {
		c.RecipientCache = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Server is the SMTP intake.
type Server struct {
	cfg     Config
	dir     Directory
	rec     Recorder
	spool   Spooler
	checker *senderauth.Checker
	smtp    *smtp.Server
	now     func() time.Time

	// mu guards stopped and listeners: the listeners Serve was given,
	// closed by Shutdown and Close even when go-smtp has not taken them yet
	// (its Serve registers a listener only once it runs, so a stop that
	// comes first would leave it accepting for ever).
	mu        sync.Mutex
	stopped   bool
	listeners []*limitListener
}

// NewServer returns an SMTP server delivering to the inboxes of dir through
// rec, spooling with sp and checking senders with checker (nil: the system's
// DNS).
func NewServer(cfg Config, dir Directory, rec Recorder, sp Spooler, checker *senderauth.Checker) *Server {
	cfg = cfg.withDefaults()
	if checker == nil {
		checker = &senderauth.Checker{}
	}
	if cfg.RecipientCache > 0 {
		dir = &cachedDirectory{Directory: dir, ttl: cfg.RecipientCache, now: time.Now, entries: map[string]cachedRecipient{}}
	}
	s := &Server{cfg: cfg, dir: dir, rec: rec, spool: sp, checker: checker, now: time.Now}
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = cfg.Domain
	srv.MaxMessageBytes = cfg.MaxMessageBytes
	srv.MaxRecipients = cfg.MaxRecipients
	// The connections' wire limits command lines, and offers and runs
	// STARTTLS itself, so that what it reads is always plaintext.
	srv.MaxLineLength = 0
	srv.ReadTimeout = cfg.CommandTimeout
	srv.WriteTimeout = cfg.CommandTimeout
	srv.EnableSMTPUTF8 = true
	srv.EnableBINARYMIME = true
	srv.ErrorLog = slogLogger{cfg.Logger}
	s.smtp = srv
	return s
}

// Serve accepts connections on l until Shutdown or Close.
func (s *Server) Serve(l net.Listener) error {
	ll := &limitListener{Listener: l, slots: make(chan struct{}, s.cfg.MaxConnections), cfg: s.cfg}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		l.Close()
		return smtp.ErrServerClosed
	}
	s.listeners = append(s.listeners, ll)
	s.mu.Unlock()
	err := s.smtp.Serve(ll)
	if s.isStopped() && errors.Is(err, net.ErrClosed) {
		// Closed by Shutdown or Close before go-smtp knew of it.
		return smtp.ErrServerClosed
	}
	return err
}

// stop marks the server stopped and closes the listeners Serve was given.
func (s *Server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for _, l := range s.listeners {
		l.Close()
	}
}

func (s *Server) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// Shutdown stops accepting connections and waits for open ones to finish
// (a message being received is finished and answered) or ctx to end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	return s.smtp.Shutdown(ctx)
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	s.stop()
	return s.smtp.Close()
}

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	sess := &session{s: s, conn: c}
	sess.wire, _ = c.Conn().(*wire)
	if addr, ok := c.Conn().RemoteAddr().(*net.TCPAddr); ok {
		sess.remoteIP = addr.IP
	}
	return sess, nil
}

// session is one SMTP connection's transaction state. go-smtp runs a BDAT
// transfer's Data in a goroutine of its own, which RSET and the next
// transaction's commands do not wait for: the state is guarded, and Data
// works on a copy taken when it starts and never changes it.
type session struct {
	s        *Server
	conn     *smtp.Conn
	wire     *wire
	remoteIP net.IP

	mu      sync.Mutex
	from    string
	hasFrom bool
	rcpts   []Recipient
	rcptTo  []string
}

// replyDataTimeout is written before a DATA that stalled ends the
// connection (errDataTimeout as a reply line).
const replyDataTimeout = "421 4.4.2 Error: timeout exceeded, message not accepted\r\n"

// Reply errors. go-smtp sends 554 for any error that is not an
// *smtp.SMTPError, so every error below is one.
var (
	errInternal = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0},
		Message: "Temporary local problem, message not accepted: please try again later"}
	errNoSpace = &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 3, 1},
		Message: "Insufficient system storage: please try again later"}
	errTryLater = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 0},
		Message: "Sender could not be verified now (DNS failure): please try again later"}
	errDataTimeout = &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 4, 2},
		Message: "Error: timeout exceeded, message not accepted"}
	errIncomplete = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 4, 2},
		Message: "Connection lost before the message arrived whole: not accepted"}
	errHelloAgain = &smtp.SMTPError{Code: 503, EnhancedCode: smtp.EnhancedCode{5, 5, 1},
		Message: "Say EHLO again after STARTTLS"}
	errNoRecipients = &smtp.SMTPError{Code: 503, EnhancedCode: smtp.EnhancedCode{5, 5, 1},
		Message: "No valid recipients"}
)

func (se *session) Reset() {
	se.mu.Lock()
	defer se.mu.Unlock()
	se.from, se.hasFrom, se.rcpts, se.rcptTo = "", false, nil, nil
}

func (se *session) Logout() error { return nil }

func (se *session) Mail(from string, _ *smtp.MailOptions) error {
	if se.wire != nil && se.wire.helloPending() {
		return errHelloAgain
	}
	if !printable(from) {
		return &smtp.SMTPError{Code: 501, EnhancedCode: smtp.EnhancedCode{5, 1, 7}, Message: "Bad sender address syntax"}
	}
	se.mu.Lock()
	defer se.mu.Unlock()
	se.from, se.hasFrom, se.rcpts, se.rcptTo = from, true, nil, nil
	return nil
}

// printable reports whether an address has no control characters (UTF-8
// is allowed: SMTPUTF8).
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

func (se *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	addr, err := normalizeAddress(to)
	if err != nil || !printable(to) {
		return &smtp.SMTPError{Code: 501, EnhancedCode: smtp.EnhancedCode{5, 1, 3}, Message: "Bad recipient address syntax"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), se.s.cfg.CommandTimeout)
	defer cancel()
	r, err := se.s.dir.ByAddress(ctx, addr)
	if errors.Is(err, ErrUnknownAddress) {
		// Never relay: only the inboxes' own addresses are accepted.
		se.mu.Lock()
		from := se.from
		se.mu.Unlock()
		se.observe(Transaction{MailFrom: from, RcptTo: []string{addr}, Code: 550, Result: "refused", Reason: "unknown_recipient"})
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such mailbox here: " + addr}
	}
	if err != nil {
		se.s.cfg.Logger.Error("smtp: looking up a recipient", "address", addr, "err", err)
		return errInternal
	}
	se.mu.Lock()
	defer se.mu.Unlock()
	for _, have := range se.rcpts {
		if have.Workspace == r.Workspace && have.InboxID == r.InboxID {
			return nil // the same inbox twice: one e-mail
		}
	}
	se.rcpts = append(se.rcpts, r)
	se.rcptTo = append(se.rcptTo, to)
	return nil
}

// Data receives one message. It reads the transaction's state once, when
// it starts (go-smtp resets the state itself once the message is
// answered), so a reset meanwhile cannot reach the message being stored.
func (se *session) Data(r io.Reader) error {
	_, chunked := r.(*io.PipeReader) // go-smtp hands BDAT chunks over a pipe
	if !chunked && se.wire != nil {
		// A DATA body is the wire's to read (go-smtp's reader misses the
		// end of some); it must be read to its end before go-smtp reads on
		// — but not after a panic, which ends the connection.
		if body, ok := se.wire.body(); ok {
			err := se.data(body, false)
			body.finish()
			return err
		}
	}
	return se.data(r, chunked)
}

// data receives the message r and answers it.
func (se *session) data(r io.Reader, chunked bool) (err error) {
	s := se.s
	se.mu.Lock()
	from, rcpts, rcptTo := se.from, slices.Clone(se.rcpts), slices.Clone(se.rcptTo)
	se.mu.Unlock()
	start := time.Now()
	t := Transaction{MailFrom: from, RcptTo: rcptTo}
	defer func() { se.observeData(start, t, err) }()
	hook("data")
	if len(rcpts) == 0 {
		io.Copy(io.Discard, r)
		return errNoRecipients
	}
	sp, err := s.spool.NewSpool(s.cfg.MaxMessageBytes)
	if err != nil {
		s.cfg.Logger.Error("smtp: creating a spool", "err", err)
		io.Copy(io.Discard, r)
		return errInternal
	}
	defer sp.Remove()
	err = se.receive(sp, r)
	t.Size = sp.Size()
	if err != nil {
		return err
	}
	if chunked && se.wire != nil && se.wire.chunkCut() {
		// go-smtp took the connection's end for the end of a chunk: the
		// message is cut, and the sender, never told 250, sends it again.
		return errIncomplete
	}
	env := Envelope{Via: "smtp", MailFrom: from, RcptTo: rcptTo, RemoteIP: se.remoteIP, Helo: se.conn.Hostname()}
	env.TLS = se.wire != nil && se.wire.tls()
	env.Protocol = "ESMTP"
	if se.wire != nil {
		env.Protocol = se.wire.protocol()
	}
	t.Receipts, err = s.deliver(context.Background(), sp, env, rcpts)
	return err
}

// receive copies DATA into the spool with the idle and total timeouts.
func (se *session) receive(sp *mailstore.Spool, r io.Reader) error {
	s := se.s
	conn := se.conn.Conn()
	deadline := s.now().Add(s.cfg.DataTimeout)
	tr := &timedReader{r: r, conn: conn, idle: s.cfg.DataIdleTimeout, deadline: deadline}
	_, err := sp.ReadFrom(tr)
	// Commands after DATA get the usual command timeout again.
	conn.SetReadDeadline(time.Now().Add(s.cfg.CommandTimeout))
	var se2 *smtp.SMTPError
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mailstore.ErrTooLarge), errors.As(err, &se2) && se2.Code == 552:
		io.Copy(io.Discard, r)
		return smtp.ErrDataTooLarge
	case errors.As(err, &se2):
		return se2
	case errors.As(err, &ne) && ne.Timeout():
		// The rest of DATA would be read as commands: the client is told
		// 421 4.4.2, as Postfix tells it, and the connection ends. The
		// sender was not told 250 and retries; the spool is removed.
		s.cfg.Logger.Warn("smtp: a message took too long to arrive", "remote", conn.RemoteAddr().String())
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if se.wire != nil {
			se.wire.writeRaw(replyDataTimeout)
		} else {
			io.WriteString(conn, replyDataTimeout)
		}
		conn.Close()
		return errDataTimeout
	default:
		s.cfg.Logger.Warn("smtp: receiving a message", "remote", conn.RemoteAddr().String(), "err", err)
		return errInternal
	}
}

// deliver checks the sender and records the message; its error is the reply.
func (s *Server) deliver(ctx context.Context, sp *mailstore.Spool, env Envelope, rcpts []Recipient) ([]Receipt, error) {
	auth, err := s.checker.Check(ctx, senderauth.Input{RemoteIP: env.RemoteIP, Helo: env.Helo, MailFrom: env.MailFrom,
		Message: func() io.Reader { return io.NewSectionReader(sp, 0, sp.Size()) }})
	if err != nil {
		// The header could not be read: the check records nothing, the
		// recorder still records what it can.
		auth = senderauth.Result{SPF: senderauth.SPFResult{Result: senderauth.PermError}, DMARC: senderauth.DMARCResult{Result: senderauth.PermError, Error: err.Error()}}
	}
	d := &Delivery{Recipients: rcpts, Envelope: env, Host: s.cfg.Domain, Message: sp, Auth: auth, ReceivedAt: s.now().UTC()}
	receipts, err := s.rec.Record(ctx, d)
	if errors.Is(err, ErrTryLater) {
		return nil, errTryLater
	}
	if errors.Is(err, store.ErrRefused) {
		// The disk is full or the database unreachable: deferred, as a
		// mail server out of queue space does (RFC 3463 4.3.1).
		s.cfg.Logger.Warn("smtp: the store refuses writes; message deferred with 452", "err", err)
		return nil, errNoSpace
	}
	if err != nil {
		s.cfg.Logger.Error("smtp: recording a message", "err", err)
		return nil, errInternal
	}
	if len(receipts) == 0 {
		// Never 250 for a message nothing recorded.
		s.cfg.Logger.Error("smtp: a message was recorded for no recipient")
		return nil, errInternal
	}
	refused := 0
	reason := ""
	for _, r := range receipts {
		if r.SenderRefused {
			refused++
			reason = r.Reason
		}
	}
	if refused > 0 && refused == len(receipts) {
		return receipts, &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Message refused: " + oneLine(reason)}
	}
	ids := make([]string, 0, len(receipts))
	for _, r := range receipts {
		if r.DuplicateOf != "" {
			ids = append(ids, r.EmailID+" (a copy of "+r.DuplicateOf+")")
			continue
		}
		ids = append(ids, r.EmailID)
	}
	// go-smtp replies with the code of the error Data returns: a 250 "error"
	// is how the reply names the stored e-mails.
	return receipts, &smtp.SMTPError{Code: 250, EnhancedCode: smtp.EnhancedCode{2, 0, 0}, Message: "OK: stored as " + strings.Join(ids, " ")}
}

// maxReplyText bounds the text oneLine keeps: a reply line is at most 512
// bytes with its code and CR LF (RFC 5321 §4.5.3.1.5).
const maxReplyText = 400

// oneLine keeps a reply text on one line, cut to maxReplyText bytes on a
// character's boundary.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxReplyText {
		return s
	}
	n := maxReplyText - len("...")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// timedReader sets the connection's read deadline before each read: the
// idle timeout, never past the total deadline.
type timedReader struct {
	r        io.Reader
	conn     net.Conn
	idle     time.Duration
	deadline time.Time
}

func (t *timedReader) Read(p []byte) (int, error) {
	d := time.Now().Add(t.idle)
	if d.After(t.deadline) {
		d = t.deadline
	}
	t.conn.SetReadDeadline(d)
	return t.r.Read(p)
}

// limitListener answers 421 to connections beyond the limit, and hands
// the others to go-smtp through their wire.
type limitListener struct {
	net.Listener
	slots chan struct{}
	cfg   Config

	closeOnce sync.Once
	closeErr  error
}

// Close closes the listener once; later calls answer what the first did
// (the server and go-smtp both close it).
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.Listener.Close() })
	return l.closeErr
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return newWire(&slotConn{Conn: c, release: func() { <-l.slots }}, l.cfg.TLS, l.cfg.MaxLineLength, l.cfg.CommandTimeout), nil
		default:
			// Answered at once, and apart from the accepting: a client
			// that does not read cannot hold the others up.
			go func() {
				c.SetWriteDeadline(time.Now().Add(5 * time.Second))
				fmt.Fprintf(c, "421 4.7.0 %s Too many connections, try again later\r\n", l.cfg.Domain)
				c.Close()
			}()
		}
	}
}

// slotConn gives its slot back when closed.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// slogLogger adapts slog to go-smtp's logger.
type slogLogger struct{ l *slog.Logger }

// Printf logs go-smtp's line, except the one for a panic it recovered
// (in a command's handling, or a BDAT transfer's Data), which is reported
// to the panic listeners with its value and stack.
func (s slogLogger) Printf(format string, v ...any) {
	if format == goSMTPPanic && len(v) == 3 {
		if stack, ok := v[2].([]byte); ok {
			panics.Report(panics.SMTP, "session", v[1], stack)
			return
		}
	}
	s.l.Warn(fmt.Sprintf(format, v...))
}

// goSMTPPanic is the format go-smtp logs a panic it recovered with
// (Conn.handle, Conn.handlePanic): the client's address, the panic's value
// and the stack. It then answers 421 4.0.0 and closes the connection; the
// wire writes that reply as 421 4.3.0.
const goSMTPPanic = "panic serving %v: %v\n%s"

// testHook, when set by a test, runs at points of a session ("data": when
// a message's Data starts; "read": when the wire reads for go-smtp), so
// that a test can make them panic.
var testHook atomic.Pointer[func(point string)]

// hook runs testHook at point.
func hook(point string) {
	if f := testHook.Load(); f != nil {
		(*f)(point)
	}
}

func (s slogLogger) Println(v ...any) { s.l.Warn(fmt.Sprint(v...)) }
