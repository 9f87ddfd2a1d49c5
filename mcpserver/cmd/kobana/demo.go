package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve/eml"
)

func init() {
	register("demo", "run the complete example end to end against a local receiver", demoCommand)
}

// Demo inputs. The secrets are made up: the receiver is the only party that
// sees them, and the run record must show them redacted.
const (
	demoFinanceToken = "demo-finance-token-Zq81xV"
	demoWebhookURL   = "https://hooks.example.com/services/T0DEMO/B0DEMO/demo-webhook-key-4Nc7"
	demoPayableID    = "pay_7Hq2Xb"
)

// demoHosts are the names in the complete example's URLs that the receiver plays.
var demoHosts = []string{"erp.example.com", "hooks.example.com"}

const demoUsage = `usage: kobana demo [-serve] [-model-base-url URL [-model-api-key-env NAME]] [-agents-config FILE]

Runs the complete example (create a payable, attach the e-mail's
first attachment as a file, notify a chat webhook) end to end on this
machine, the whole way an e-mail goes: a kobana serve on 127.0.0.1 (a fresh
store with the demo organization, SMTP, MCP over HTTP, the pipeline) takes
the sample e-mail over SMTP at the demo inbox, authenticates its sender (a
DNS server on 127.0.0.1 publishes the sender domain's SPF and DMARC), and
its invoice agent answers: the model is asked through the real client,
prompt and linter, by default of a model stand-in on 127.0.0.1 that answers
with the complete example, or of the endpoint the model flags name (the same
flags as kobana serve; see docs/agents.md). The pipeline runs the workflow:
a receiver on 127.0.0.1 plays the ERP and the chat webhook, reached behind
the SSRF guard with 127.0.0.1/32 as its only exception. The demo then reads
the e-mail, the agent run and the workflow run back through the MCP server
with an MCP client, and prints them with what the receiver got for each
step. Everything stops and is removed at the end; with -serve the server
keeps serving until interrupted (Ctrl-C), and the demo prints the address of
its console (the back office at /console/) with a one-time sign-in code, so
the run it just made can be looked at in a browser. Without the model flags
nothing leaves the machine and no setup is needed.

Exit status: 0 the run succeeded and the receiver got the e-mail's
attachment byte for byte, 1 otherwise, 2 usage.

flags:
`

func demoCommand(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana demo", flag.ContinueOnError)
	var models agent.Flags
	models.Register(fs)
	keep := fs.Bool("serve", false, "keep the demo's server serving when the run is done, until interrupted, and print its console's address with a one-time sign-in code")
	if code, ok := c.parseFlags(fs, demoUsage, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "kobana demo: unexpected argument %q\n%s", fs.Arg(0), demoUsage)
		return exitUsage
	}
	cfg, err := agent.Load(models, c.getenv, agent.CatalogProviders())
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana demo: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(c.context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := runDemo(ctx, c.Stdout, cfg, *keep)
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana demo: %v\n", err)
		return exitFailure
	}
	if !ok {
		return exitFailure
	}
	return exitOK
}

// attachmentSHA256 returns the hex sha256 of attachment i's decoded bytes.
func attachmentSHA256(m *eml.Message, i int) (string, error) {
	r, err := m.Open(i)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// demoReceiver is an HTTPS server on 127.0.0.1 that plays the ERP and the
// chat webhook of the complete example, with a certificate made for the demo's
// host names, and keeps what it received.
type demoReceiver struct {
	addr string
	srv  *http.Server
	pool *x509.CertPool

	mu       sync.Mutex
	got      []*demoReceived
	uploaded string // sha256 of the last file part received
	// hookSecret signs the deliveries of the workspace's ERP webhook;
	// hookOK says one arrived with a signature that verifies.
	hookSecret string
	hookOK     bool
}

// demoReceived is the receiver's view of one request.
type demoReceived struct {
	Method, Host, Path, Proto string
	Header                    http.Header
	Body                      []byte
	Parts                     []demoPart
	Status                    int
	Answer                    string
}

// demoPart is one part of a multipart/form-data body.
type demoPart struct {
	Name, Filename, ContentType string
	Size                        int
	SHA256                      string
	Value                       string // a field's value; empty for files
	Magic                       string // the first bytes of a file, printable
}

func startDemoReceiver() (*demoReceiver, error) {
	cert, pool, err := demoCertificate()
	if err != nil {
		return nil, fmt.Errorf("making the receiver's certificate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the receiver: %w", err)
	}
	rv := &demoReceiver{addr: ln.Addr().String(), pool: pool}
	rv.srv = &http.Server{
		Handler:           http.HandlerFunc(rv.serve),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go rv.srv.ServeTLS(ln, "", "")
	return rv, nil
}

// close stops the receiver; the run is over, so open connections are cut.
func (rv *demoReceiver) close() { rv.srv.Close() }

// network sends every request, whatever its host, to the receiver: it
// dials the receiver's address through the guard's dialer (so the guard
// still decides) and trusts the receiver's certificate, which names the
// demo's hosts.
func (rv *demoReceiver) network(g *guard.Guard) guard.Network {
	return guard.Network{Dial: g.DialTo(rv.addr), TLS: &tls.Config{RootCAs: rv.pool}}
}

func (rv *demoReceiver) uploadedHash() string {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.uploaded
}

// serve answers like the ERP (POST /payables, POST
// /payables/{id}/attachments) and the chat webhook (POST /services/…).
func (rv *demoReceiver) serve(w http.ResponseWriter, r *http.Request) {
	got := &demoReceived{Method: r.Method, Host: r.Host, Path: r.URL.RequestURI(), Proto: r.Proto, Header: r.Header.Clone()}
	status, answer := rv.answer(r, got)
	got.Status, got.Answer = status, answer
	rv.mu.Lock()
	rv.got = append(rv.got, got)
	rv.mu.Unlock()
	if strings.HasPrefix(answer, "{") {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(status)
	io.WriteString(w, answer)
}

func (rv *demoReceiver) answer(r *http.Request, got *demoReceived) (int, string) {
	const maxBody = 16 << 20
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	path := r.URL.Path
	switch {
	case r.Method != http.MethodPost:
		return http.StatusMethodNotAllowed, `{"error":"method not allowed"}`
	case host == demoHosts[0] && path == "/payables":
		return rv.createPayable(r, got)
	case host == demoHosts[0] && strings.HasPrefix(path, "/payables/") && strings.HasSuffix(path, "/attachments"):
		return rv.attachToPayable(r, got, strings.TrimSuffix(strings.TrimPrefix(path, "/payables/"), "/attachments"))
	case host == demoHosts[1] && strings.HasPrefix(path, "/services/"):
		return rv.notify(r, got)
	case host == demoHosts[0] && path == demoHookPath:
		return rv.webhook(r, got)
	}
	return http.StatusNotFound, `{"error":"not found"}`
}

// authorized reports whether r carries the demo's finance token.
func authorized(r *http.Request) bool {
	return r.Header.Get("Authorization") == "Bearer "+demoFinanceToken
}

// createPayable answers POST /payables like the ERP.
func (rv *demoReceiver) createPayable(r *http.Request, got *demoReceived) (int, string) {
	var err error
	got.Body, err = io.ReadAll(r.Body)
	var p struct {
		Supplier string  `json:"supplier"`
		Amount   float64 `json:"amount"`
	}
	switch {
	case !authorized(r):
		return http.StatusUnauthorized, `{"error":"invalid token"}`
	case err != nil || json.Unmarshal(got.Body, &p) != nil || p.Supplier == "":
		return http.StatusUnprocessableEntity, `{"error":"a JSON body with supplier and amount is required"}`
	}
	return http.StatusCreated, `{"data":{"id":"` + demoPayableID + `","supplier":` + quoteJSON(p.Supplier) + `,"status":"open"}}`
}

// attachToPayable answers POST /payables/{id}/attachments like the ERP:
// a multipart body whose file part is what it says it is.
func (rv *demoReceiver) attachToPayable(r *http.Request, got *demoReceived, id string) (int, string) {
	if err := rv.readParts(r, got); err != nil {
		return http.StatusBadRequest, `{"error":` + quoteJSON(err.Error()) + `}`
	}
	var file *demoPart
	for i := range got.Parts {
		if got.Parts[i].Name == "file" && got.Parts[i].Filename != "" {
			file = &got.Parts[i]
		}
	}
	switch {
	case !authorized(r):
		return http.StatusUnauthorized, `{"error":"invalid token"}`
	case id != demoPayableID:
		return http.StatusNotFound, `{"error":` + quoteJSON("no payable "+id) + `}`
	case file == nil:
		return http.StatusUnprocessableEntity, `{"error":"a file part named file is required"}`
	case file.ContentType == "application/pdf" && !strings.HasPrefix(file.Magic, "%PDF-"):
		return http.StatusUnprocessableEntity, `{"error":"declared application/pdf, but the file is not a PDF"}`
	}
	rv.mu.Lock()
	rv.uploaded = file.SHA256
	rv.mu.Unlock()
	return http.StatusCreated, `{"data":{"id":"att_91Kd","payable_id":"` + id + `","filename":` + quoteJSON(file.Filename) + `,"size":` + fmt.Sprint(file.Size) + `}}`
}

// demoHookPath is where the ERP takes Kobana's webhook deliveries.
const demoHookPath = "/hooks/kobana"

// webhook answers a Kobana webhook delivery like the ERP would: it
// checks the signature against the webhook's secret.
func (rv *demoReceiver) webhook(r *http.Request, got *demoReceived) (int, string) {
	var err error
	got.Body, err = io.ReadAll(r.Body)
	if err != nil {
		return http.StatusBadRequest, `{"error":"unreadable body"}`
	}
	if err := inbox.VerifySignature(rv.hookSecret, r.Header.Get(inbox.HeaderSignature), got.Body, time.Now(), 5*time.Minute); err != nil {
		return http.StatusUnauthorized, `{"error":` + quoteJSON(err.Error()) + `}`
	}
	rv.mu.Lock()
	rv.hookOK = true
	rv.mu.Unlock()
	return http.StatusOK, `{"ok":true}`
}

// hookVerified says a webhook delivery arrived with a signature that
// verifies.
func (rv *demoReceiver) hookVerified() bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.hookOK
}

// workflowRequests are the requests the workflow sent (not the webhook
// deliveries), in the order they arrived.
func (rv *demoReceiver) workflowRequests() []*demoReceived {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	var out []*demoReceived
	for _, g := range rv.got {
		if !strings.HasPrefix(g.Path, demoHookPath) {
			out = append(out, g)
		}
	}
	return out
}

// notify answers the chat webhook: a JSON body with a text.
func (rv *demoReceiver) notify(r *http.Request, got *demoReceived) (int, string) {
	var err error
	got.Body, err = io.ReadAll(r.Body)
	var m struct {
		Text string `json:"text"`
	}
	if err != nil || json.Unmarshal(got.Body, &m) != nil || m.Text == "" {
		return http.StatusBadRequest, "invalid_payload"
	}
	return http.StatusOK, "ok"
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// readParts reads a multipart/form-data body into got.Parts.
func (rv *demoReceiver) readParts(r *http.Request, got *demoReceived) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return errors.New("a multipart/form-data body is required")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the multipart body: %w", err)
		}
		h := sha256.New()
		var head bytes.Buffer
		n, err := io.Copy(io.MultiWriter(h, &limitedBuffer{buf: &head, max: 1024}), p)
		if err != nil {
			return fmt.Errorf("reading part %q: %w", p.FormName(), err)
		}
		part := demoPart{Name: p.FormName(), Filename: p.FileName(), ContentType: p.Header.Get("Content-Type"), Size: int(n), SHA256: hex.EncodeToString(h.Sum(nil))}
		if part.Filename == "" {
			part.Value = head.String()
		} else {
			magic := head.Bytes()[:min(head.Len(), 5)]
			part.Magic = printable(string(magic))
		}
		got.Parts = append(got.Parts, part)
	}
}

// limitedBuffer keeps the first max bytes written to it and discards the rest.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// print shows the receiver's view of one request: this is what the ERP or
// the webhook saw, secrets included, as any receiver would.
func (got *demoReceived) print(w io.Writer, wantHash string) {
	fmt.Fprintf(w, "  the receiver got   %s https://%s%s (%s)\n", got.Method, got.Host, printable(got.Path), got.Proto)
	names := make([]string, 0, len(got.Header))
	for k := range got.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(w, "    %s: %s\n", k, printable(strings.Join(got.Header[k], ", ")))
	}
	if len(got.Body) > 0 {
		fmt.Fprintf(w, "    body: %s\n", printable(string(got.Body)))
	}
	if len(got.Parts) > 0 {
		fmt.Fprintf(w, "    multipart/form-data, %d parts:\n", len(got.Parts))
		for _, p := range got.Parts {
			if p.Filename == "" {
				fmt.Fprintf(w, "      %-16s field %q\n", p.Name, p.Value)
				continue
			}
			fmt.Fprintf(w, "      %-16s file %q, %s, %d bytes, starts with %q\n", p.Name, p.Filename, p.ContentType, p.Size, p.Magic)
			fmt.Fprintf(w, "      %-16s %-37s %s\n", "", "sha256 of the uploaded file:", p.SHA256)
			verdict := "the same bytes"
			if p.SHA256 != wantHash {
				verdict = "DIFFERENT bytes"
			}
			fmt.Fprintf(w, "      %-16s %-37s %s (%s)\n", "", "sha256 of the e-mail's attachment 0:", wantHash, verdict)
		}
	}
	fmt.Fprintf(w, "  and answered       %d %s\n", got.Status, printable(got.Answer))
}

// demoCertificate makes a short-lived self-signed certificate for the
// demo's host names and a pool that trusts it.
func demoCertificate() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "kobana demo receiver"},
		DNSNames:              demoHosts,
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
