// Command receiver is the other end of a workflow's file upload: a small
// server that accepts the complete example's multipart/form-data upload and
// shows what arrived — each part's name, filename, declared content type, the
// type its first bytes reveal, size and sha256 — and checks it the way a
// careful receiver would (the declared type matches the bytes, the length is
// exact).
//
// Without flags it starts on 127.0.0.1, sends itself the complete example's
// upload step through the executor with the sample e-mail's PDF, prints the
// receiver's view and exits:
//
//	go run ./examples/receiver
//
// With -listen it keeps serving, for `kobana run` or any other client; it
// answers the complete example's three steps (POST /payables, POST
// /payables/{id}/attachments, POST /hooks/…):
//
//	go run ./examples/receiver -listen 127.0.0.1:8089
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// uploadStep is the complete example's second step: the e-mail's first
// attachment as a file part, plus a text field.
const uploadStep = `{"result": {}, "workflow": [{
  "type": "request",
  "label": "adjunta el documento original",
  "url": "%s/payables/pay_1001/attachments",
  "headers": { "Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}" },
  "form": { "file": "${{email.attachments.0}}", "kobana_email_id": "${{kobana.email_id}}" }
}]}`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "serve on this address until interrupted (e.g. 127.0.0.1:8089)")
	emlPath := fs.String("eml", "examples/emails/acme-invoice.eml", "the e-mail whose first attachment is uploaded (without -listen)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rv := &receiver{out: stdout}
	if *listen != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return rv.serve(ctx, *listen, stderr)
	}
	return rv.selfTest(*emlPath, stdout, stderr)
}

// receiver answers the complete example's requests and prints what it
// received.
type receiver struct {
	out io.Writer
	mu  sync.Mutex // one request printed at a time
	ok  bool       // the last upload passed every check
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	fmt.Fprintf(rv.out, "%s %s  Content-Length: %d  Content-Type: %s\n", r.Method, r.URL.Path, r.ContentLength, r.Header.Get("Content-Type"))
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/payables":
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"data":{"id":"pay_1001"}}`)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/payables/") && strings.HasSuffix(r.URL.Path, "/attachments"):
		if err := rv.upload(r); err != nil {
			fmt.Fprintf(rv.out, "  rejected: %v\n", err)
			rv.ok = false
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		rv.ok = true
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/hooks/"):
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		fmt.Fprintf(rv.out, "  %s\n", b)
		io.WriteString(w, "ok")
	default:
		http.NotFound(w, r)
	}
}

// upload reads a multipart/form-data body part by part, streaming each file
// through sha256, and checks it.
func (rv *receiver) upload(r *http.Request) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return fmt.Errorf("want multipart/form-data, got %q", r.Header.Get("Content-Type"))
	}
	counted := &countingReader{r: r.Body}
	mr := multipart.NewReader(counted, params["boundary"])
	files := 0
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the parts: %w", err)
		}
		if p.FileName() == "" {
			v, _ := io.ReadAll(io.LimitReader(p, 4<<10))
			fmt.Fprintf(rv.out, "  field %-16q %q\n", p.FormName(), v)
			continue
		}
		files++
		head := make([]byte, 512)
		n, _ := io.ReadFull(p, head)
		head = head[:n]
		h := sha256.New()
		h.Write(head)
		rest, err := io.Copy(h, p)
		if err != nil {
			return fmt.Errorf("reading file %q: %w", p.FileName(), err)
		}
		declared := p.Header.Get("Content-Type")
		sniffed, _, _ := strings.Cut(http.DetectContentType(head), ";")
		fmt.Fprintf(rv.out, "  file  %-16q filename %q, declared %s, bytes say %s, %d bytes\n", p.FormName(), p.FileName(), declared, sniffed, int64(n)+rest)
		fmt.Fprintf(rv.out, "        sha256 %s\n", hex.EncodeToString(h.Sum(nil)))
		if declared != sniffed && !(sniffed == "text/xml" && strings.HasSuffix(declared, "xml")) {
			return fmt.Errorf("file %q is declared %s but its bytes are %s", p.FileName(), declared, sniffed)
		}
	}
	if counted.n != r.ContentLength {
		return fmt.Errorf("Content-Length %d, but %d bytes arrived", r.ContentLength, counted.n)
	}
	if files == 0 {
		return errors.New("no file part")
	}
	fmt.Fprintf(rv.out, "  accepted: %d bytes, exactly the Content-Length\n", counted.n)
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// serve listens on addr until ctx ends.
func (rv *receiver) serve(ctx context.Context, addr string, stderr io.Writer) int {
	srv := &http.Server{Addr: addr, Handler: rv, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(rv.out, "receiver listening on http://%s (Ctrl-C to stop)\n", ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// selfTest starts the receiver on a free loopback port, sends it the
// complete example's upload step through the executor, and reports whether
// it was accepted.
func (rv *receiver) selfTest(emlPath string, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	srv := &http.Server{Handler: rv, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	plan, diags := compile.Compile(fmt.Appendf(nil, uploadStep, "http://"+ln.Addr().String()), compile.Options{})
	if plan == nil {
		fmt.Fprintln(stderr, diags.Err())
		return 1
	}
	ex := executor.New(executor.Options{Guard: &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	rec := ex.Run(context.Background(), plan, executor.Env{
		Secrets:     resolve.SecretMap{"FINANCE_TOKEN": "tok-receiver-example"},
		Facts:       resolve.FactMap{"email_id": "em_1001"},
		Attachments: resolve.EMLFile(emlPath),
	})
	step := rec.Steps[0]
	fmt.Fprintf(stdout, "the sender recorded: step 0 %s", step.State)
	if step.Error != "" {
		fmt.Fprintf(stdout, " (%s)", step.Error)
	}
	fmt.Fprintln(stdout)
	rv.mu.Lock()
	ok := rv.ok
	rv.mu.Unlock()
	if rec.Status != runrecord.RunSucceeded || !ok {
		return 1
	}
	return 0
}
