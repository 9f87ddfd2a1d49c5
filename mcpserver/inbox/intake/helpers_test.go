package intake_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/internal/dnstest"
)

// directory is a fixed set of inboxes.
type directory map[string]intake.Recipient

func (d directory) ByAddress(_ context.Context, addr string) (intake.Recipient, error) {
	if r, ok := d[addr]; ok {
		return r, nil
	}
	return intake.Recipient{}, intake.ErrUnknownAddress
}

func (d directory) ByID(_ context.Context, ws, id string) (intake.Recipient, error) {
	for _, r := range d {
		if r.Workspace == ws && r.InboxID == id {
			return r, nil
		}
	}
	return intake.Recipient{}, intake.ErrUnknownAddress
}

var testInboxes = directory{
	"invoices@in.kobana.test": {Workspace: "ws_a", InboxID: "ibx_invoices", Address: "invoices@in.kobana.test"},
	"receipts@in.kobana.test": {Workspace: "ws_a", InboxID: "ibx_receipts", Address: "receipts@in.kobana.test"},
	"other@in.kobana.test":    {Workspace: "ws_b", InboxID: "ibx_other", Address: "other@in.kobana.test"},
	"orders@in.kobana.test":   {Workspace: "ws_a", InboxID: "ibx_orders", Address: "orders@in.kobana.test"},
}

// recorded is what a memRecorder kept of one delivery.
type recorded struct {
	Recipients []intake.Recipient
	Envelope   intake.Envelope
	Auth       senderauth.Result
	SHA256     [32]byte
	Size       int64
	IDs        []string
}

// memRecorder keeps the raw message in a mailstore.Dir (as the real
// recorder does before it commits) and the rest in memory. fail, when set,
// is returned before anything is kept; refuse refuses every recipient's
// sender.
type memRecorder struct {
	dir    *mailstore.Dir
	mu     sync.Mutex
	got    []recorded
	n      int
	fail   error
	refuse string
}

func (m *memRecorder) Record(ctx context.Context, d *intake.Delivery) ([]intake.Receipt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	m.n++
	id := fmt.Sprintf("eml_%04d", m.n)
	if err := m.dir.Keep(ctx, &mailstore.Incoming{Body: d.Message}, d.Recipients[0].Workspace, id); err != nil {
		return nil, err
	}
	sum, err := d.Message.SHA256()
	if err != nil {
		return nil, err
	}
	rec := recorded{Recipients: d.Recipients, Envelope: d.Envelope, Auth: d.Auth, SHA256: sum, Size: d.Message.Size()}
	var out []intake.Receipt
	for _, r := range d.Recipients {
		rc := intake.Receipt{Recipient: r, EmailID: id}
		if m.refuse != "" {
			rc.Rejected, rc.SenderRefused, rc.Reason = true, true, m.refuse
		}
		rec.IDs = append(rec.IDs, id)
		out = append(out, rc)
	}
	m.got = append(m.got, rec)
	return out, nil
}

func (m *memRecorder) deliveries() []recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]recorded(nil), m.got...)
}

// env is a running SMTP intake on loopback.
type env struct {
	t    *testing.T
	root string
	dir  *mailstore.Dir
	rec  *memRecorder
	srv  *intake.Server
	addr string
}

func startSMTP(t *testing.T, cfg intake.Config) *env {
	t.Helper()
	root := t.TempDir()
	dir, err := mailstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{dir: dir}
	// No DNS in these tests: every lookup fails fast as "not found".
	checker := &senderauth.Checker{Resolver: noDNS{}}
	cfg.Domain = "mx.kobana.test"
	srv := intake.NewServer(cfg, testInboxes, rec, dir, checker)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &env{t: t, root: root, dir: dir, rec: rec, srv: srv, addr: ln.Addr().String()}
}

// spoolFiles lists what is left in the spool area.
func (e *env) spoolFiles() []string {
	entries, _ := os.ReadDir(filepath.Join(e.root, "spool"))
	var out []string
	for _, x := range entries {
		out = append(out, x.Name())
	}
	return out
}

// storedMessages counts the stored raw messages.
func (e *env) storedMessages() int {
	n := 0
	e.dir.Walk(context.Background(), func(mailstore.Stored) error { n++; return nil })
	return n
}

// conn is a raw SMTP conversation for tests that need exact bytes
// (pipelining, BDAT, malformed commands, slow clients).
type conn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	k := &conn{t: t, c: c, r: bufio.NewReader(c)}
	k.expect("220")
	return k
}

func (k *conn) send(s string) {
	k.t.Helper()
	k.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(k.c, s); err != nil {
		k.t.Fatalf("writing %q: %v", s, err)
	}
}

// reply reads one (possibly multi-line) reply and returns its last line.
func (k *conn) reply() string {
	k.t.Helper()
	k.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		line, err := k.r.ReadString('\n')
		if err != nil {
			k.t.Fatalf("reading a reply: %v (got %q)", err, line)
		}
		if len(line) < 4 || line[3] != '-' {
			return strings.TrimRight(line, "\r\n")
		}
	}
}

// expect reads a reply and checks its start.
func (k *conn) expect(prefix string) string {
	k.t.Helper()
	line := k.reply()
	if !strings.HasPrefix(line, prefix) {
		k.t.Fatalf("reply %q, want %s…", line, prefix)
	}
	return line
}

// message builds a message with an attachment of n bytes.
func message(subject string, n int) string {
	var b strings.Builder
	b.WriteString("From: Supplier <billing@supplier.test>\r\nTo: invoices@in.kobana.test\r\nSubject: " + subject +
		"\r\nMessage-ID: <" + subject + "@supplier.test>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b1\r\n\r\n" +
		"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nInvoice attached.\r\n--b1\r\nContent-Type: application/pdf\r\n" +
		"Content-Disposition: attachment; filename=invoice.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	line := strings.Repeat("QUJD", 19) + "\r\n" // 76 base64 characters
	for written := 0; written < n; written += 57 {
		b.WriteString(line)
	}
	b.WriteString("--b1--\r\n")
	return b.String()
}

func digest(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// noDNS answers every query with "not found", at once.
type noDNS = dnstest.NoDNS
