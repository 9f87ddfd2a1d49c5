package executor_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// bodyCount is one request as a byte-counting receiver saw it.
type bodyCount struct {
	conn          int    // which connection carried it, from 1
	line          string // the request line
	contentLength int64
	got           int64  // body bytes received
	body          []byte // the body, when complete
	complete      bool   // all Content-Length bytes arrived
}

// countingReceiver is a plain HTTP/1.1 server on a socket that reads each
// request body by its Content-Length, counting the bytes, and answers a
// complete request with 200 on the same (keep-alive) connection; a
// connection that ends before its body is complete is recorded as such.
// Before reading past pauseAt bytes of a body larger than that, it calls
// pause once: tests change the .eml there, in the middle of the upload.
type countingReceiver struct {
	ln       net.Listener
	pauseAt  int64
	pause    func()
	mu       sync.Mutex
	requests []bodyCount
	paused   bool
	more     chan struct{} // a request was recorded
}

func newCountingReceiver(t *testing.T, pauseAt int64, pause func()) *countingReceiver {
	t.Helper()
	// A small receive buffer keeps the sender from racing far ahead of what
	// the receiver has read. It is set on the listening socket, so accepted
	// connections negotiate their window with it (shrinking it afterwards
	// can stall a connection on a zero window).
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10)
		})
		return errors.Join(err, serr)
	}}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rv := &countingReceiver{ln: ln, pauseAt: pauseAt, pause: pause, more: make(chan struct{}, 100)}
	acceptAll(t, ln, rv.serve)
	return rv
}

func (rv *countingReceiver) serve(c net.Conn, conn int) {
	br := bufio.NewReader(c)
	tp := textproto.NewReader(br)
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		req := bodyCount{conn: conn, line: line}
		req.contentLength, _ = strconv.ParseInt(h.Get("Content-Length"), 10, 64)
		var sum bytes.Buffer
		first := req.contentLength
		rv.mu.Lock()
		pause := !rv.paused && rv.pause != nil && req.contentLength > rv.pauseAt
		if pause {
			rv.paused = true
			first = rv.pauseAt
		}
		rv.mu.Unlock()
		n, err := io.CopyN(&sum, br, first)
		req.got = n
		if err == nil && pause {
			rv.pause()
			n, err = io.CopyN(&sum, br, req.contentLength-first)
			req.got += n
		}
		req.complete = err == nil
		if req.complete {
			req.body = sum.Bytes()
		}
		rv.mu.Lock()
		rv.requests = append(rv.requests, req)
		rv.mu.Unlock()
		rv.more <- struct{}{}
		if !req.complete {
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	}
}

// seen waits until the receiver has recorded n requests (a cut connection
// is recorded when the receiver reads its end, which may come after the
// client moved on) and returns them by path: "/before", "/upload", "/after".
func (rv *countingReceiver) seen(t *testing.T, n int) map[string]bodyCount {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-rv.more:
		case <-timeout:
			t.Fatalf("the receiver recorded fewer than %d requests: %+v", n, rv.requests)
		}
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	out := map[string]bodyCount{}
	for _, r := range rv.requests {
		out[strings.Fields(r.line)[1]] = r
	}
	return out
}

// filePart returns the bytes of the first part of a multipart body.
func filePart(t *testing.T, body []byte) []byte {
	t.Helper()
	boundary, _, _ := bytes.Cut(bytes.TrimPrefix(body, []byte("--")), []byte("\r\n"))
	p, err := multipart.NewReader(bytes.NewReader(body), string(boundary)).NextPart()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeUploadEML writes an .eml whose first attachment is size pseudo-random
// bytes (base64, 76-column lines) and whose second is a short text. It
// returns the path, the first attachment's bytes, and where its encoded
// body starts and ends in the file.
func writeUploadEML(t *testing.T, size int) (path string, data []byte, start, end int64) {
	t.Helper()
	data = make([]byte, size)
	rand.NewChaCha8([32]byte{7}).Read(data)
	var b strings.Builder
	b.WriteString("From: erp@example.com.br\r\nTo: financeiro@example.com\r\nSubject: remessa\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"U\"\r\n\r\n--U\r\nContent-Type: text/plain\r\n\r\nsegue\r\n" +
		"--U\r\nContent-Type: application/zip; name=\"remessa.zip\"\r\nContent-Disposition: attachment; filename=\"remessa.zip\"\r\n" +
		"Content-Transfer-Encoding: base64\r\n\r\n")
	start = int64(b.Len())
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc)
	end = int64(b.Len())
	b.WriteString("\r\n--U\r\nContent-Type: text/plain; name=\"leia.txt\"\r\n\r\nok\r\n--U--\r\n")
	path = filepath.Join(t.TempDir(), "remessa.eml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data, start, end
}

// The .eml changes: how each change is applied.
var emlChanges = map[string]func(t *testing.T, path string, start, end int64){
	"deleted": func(t *testing.T, path string, _, _ int64) {
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
	},
	"truncated": func(t *testing.T, path string, start, _ int64) {
		if err := os.Truncate(path, start+1000); err != nil {
			t.Error(err)
		}
	},
	"overwritten in place": func(t *testing.T, path string, _, end int64) {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte("AAAA"), end-100); err != nil {
			t.Error(err)
		}
	},
}

const uploadPlan = `{"result":1,"workflow":[
 {"type":"request","url":"http://erp.example/before","form":{"file":"${{email.attachments.1}}"}},
 {"type":"request","url":"http://erp.example/upload","form":{"file":"${{email.attachments.0}}"}},
 {"type":"request","url":"http://erp.example/after","body":{"done":true}}]}`

// TestEmailChangesBetweenSteps changes the .eml between the first step and
// the upload. Deleted: the run's snapshot (the open file) is still read
// whole. Truncated or overwritten: the upload fails before anything of it
// is sent, like a missing attachment, and the independent step after it
// runs.
func TestEmailChangesBetweenSteps(t *testing.T) {
	for name, change := range emlChanges {
		t.Run(name, func(t *testing.T) {
			path, data, start, end := writeUploadEML(t, 256<<10)
			rv := newCountingReceiver(t, 0, nil)
			ex := executor.New(executor.Options{Guard: allowLoopback(), Network: guard.Network{Dial: allowLoopback().DialTo(rv.ln.Addr().String())}})
			rec := ex.Run(t.Context(), compilePlan(t, uploadPlan), executor.Env{Attachments: resolve.EMLFile(path),
				Journal: runrecord.DoneFunc(func(s runrecord.Step) {
					if s.Index == 0 {
						change(t, path, start, end)
					}
				})})
			upload := rec.Steps[1]
			if rec.Steps[0].State != runrecord.Succeeded || rec.Steps[2].State != runrecord.Succeeded {
				t.Fatalf("the other steps: %s", recordJSON(t, rec))
			}
			if name == "deleted" {
				seen := rv.seen(t, 3)
				if upload.State != runrecord.Succeeded || !bytes.Equal(filePart(t, seen["/upload"].body), data) {
					t.Fatalf("upload after deletion: %s", recordJSON(t, rec))
				}
				return
			}
			if upload.State != runrecord.Failed || upload.Reason != runrecord.ReasonReference || upload.Request != nil || upload.PartialUpload ||
				!strings.Contains(upload.Error, "email changed after it was first read") || !strings.Contains(upload.Error, "attachment 0 is not sent") {
				t.Fatalf("upload after the e-mail changed: %s", recordJSON(t, rec))
			}
			if seen := rv.seen(t, 2); len(seen) != 2 || seen["/after"].line == "" {
				t.Fatalf("the receiver saw %+v; the upload must not reach it", seen)
			}
		})
	}
}

// TestEmailChangesDuringBody changes the .eml while the upload's body is on
// the wire, on a keep-alive connection the first step opened. Deleted: the
// upload completes from the snapshot. Truncated or overwritten: the body
// stops short, the connection is cut before Content-Length bytes arrive
// (never a complete-looking request), the record says the receiver may have
// seen part of it, and the step after it goes out on a new connection.
func TestEmailChangesDuringBody(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 16 MiB three times")
	}
	for name, change := range emlChanges {
		t.Run(name, func(t *testing.T) {
			path, data, start, end := writeUploadEML(t, 16<<20)
			rv := newCountingReceiver(t, 64<<10, func() { change(t, path, start, end) })
			ex := executor.New(executor.Options{Guard: allowLoopback(), Network: guard.Network{Dial: allowLoopback().DialTo(rv.ln.Addr().String())}})
			rec := ex.Run(t.Context(), compilePlan(t, uploadPlan), executor.Env{Attachments: resolve.EMLFile(path)})
			seen := rv.seen(t, 3)
			if seen["/before"].conn != seen["/upload"].conn {
				t.Fatalf("the upload did not reuse the first step's connection: %+v", seen)
			}
			upload, cut := rec.Steps[1], seen["/upload"]
			if name == "deleted" {
				if upload.State != runrecord.Succeeded || !cut.complete || !bytes.Equal(filePart(t, cut.body), data) {
					t.Fatalf("upload with the file deleted mid-body: %s; receiver saw %+v", recordJSON(t, rec), cut)
				}
				return
			}
			if cut.complete || cut.got >= cut.contentLength || cut.got < 64<<10 {
				t.Fatalf("the receiver got %d of %d body bytes (complete: %v); want the connection cut before Content-Length", cut.got, cut.contentLength, cut.complete)
			}
			if upload.State != runrecord.Failed || upload.Reason != runrecord.ReasonUploadAborted || !upload.PartialUpload ||
				!strings.Contains(upload.Error, "may have received part of the request") || !strings.Contains(upload.Error, "email changed after it was first read") {
				t.Fatalf("upload record: %s", recordJSON(t, rec))
			}
			if !strings.Contains(recordJSON(t, rec), `"partial_upload":true`) {
				t.Fatalf("the record does not say partial_upload: %s", recordJSON(t, rec))
			}
			if after := seen["/after"]; !after.complete || after.conn == cut.conn || rec.Steps[2].State != runrecord.Succeeded {
				t.Fatalf("the step after the cut: %+v, %s", after, recordJSON(t, rec))
			}
		})
	}
}

// TestEmailTruncatedDuringHTTP2Body: over HTTP/2 the cut is a reset stream;
// the receiver's handler never reads a complete body, and the record says
// partial_upload.
func TestEmailTruncatedDuringHTTP2Body(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 16 MiB")
	}
	path, _, start, end := writeUploadEML(t, 16<<20)
	type result struct {
		n     int64
		err   error
		proto string
	}
	got := make(chan result, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.CopyN(io.Discard, r.Body, 64<<10)
		if err == nil {
			emlChanges["truncated"](t, path, start, end)
			var m int64
			m, err = io.Copy(io.Discard, r.Body)
			n += m
		}
		got <- result{n, err, r.Proto}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	network := guard.Network{Dial: allowLoopback().DialTo(srv.Listener.Addr().String()), TLS: &tls.Config{InsecureSkipVerify: true}}
	ex := executor.New(executor.Options{Guard: allowLoopback(), Network: network})
	rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://erp.example/upload","form":{"file":"${{email.attachments.0}}"}}]}`),
		executor.Env{Attachments: resolve.EMLFile(path)})
	var res result
	select {
	case res = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not finish")
	}
	if res.proto != "HTTP/2.0" || res.err == nil || res.n >= 16<<20 {
		t.Fatalf("the handler read %d bytes over %s, error %v; want an incomplete body over HTTP/2", res.n, res.proto, res.err)
	}
	if s := rec.Steps[0]; s.Reason != runrecord.ReasonUploadAborted || !s.PartialUpload {
		t.Fatalf("record: %s", recordJSON(t, rec))
	}
}
