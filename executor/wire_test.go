package executor_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// rawRequest is a request exactly as it crossed the wire.
type rawRequest struct {
	Line   string // the request line, e.g. "GET /x?y HTTP/1.1"
	Header []string
	Body   []byte
}

// rawReceiver is a plain-HTTP/1.1 server on a net.Listener that keeps the
// bytes of every request line and header, before any parsing could tidy
// them, and answers each with 200 and a small JSON body.
type rawReceiver struct {
	ln       net.Listener
	mu       sync.Mutex
	requests []rawRequest
}

func newRawReceiver(t *testing.T) *rawReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rv := &rawReceiver{ln: ln}
	acceptAll(t, ln, func(c net.Conn, _ int) { rv.serve(c) })
	return rv
}

// acceptAll serves each connection ln accepts with serve (n counts them
// from 1) until the test ends; then it closes the listener and every
// connection still open (keep-alive connections the client holds) and
// waits for the serving goroutines.
func acceptAll(t *testing.T, ln net.Listener, serve func(c net.Conn, n int)) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c, n)
			}()
		}
	}()
}

func (rv *rawReceiver) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		var req rawRequest
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		req.Line = strings.TrimSuffix(line, "\r\n")
		length := 0
		for {
			h, err := br.ReadString('\n')
			if err != nil {
				return
			}
			h = strings.TrimSuffix(h, "\r\n")
			if h == "" {
				break
			}
			req.Header = append(req.Header, h)
			if name, value, ok := strings.Cut(h, ":"); ok && strings.EqualFold(name, "Content-Length") {
				length, _ = strconv.Atoi(strings.TrimSpace(value))
			}
		}
		req.Body = make([]byte, length)
		if _, err := io.ReadFull(br, req.Body); err != nil {
			return
		}
		rv.mu.Lock()
		rv.requests = append(rv.requests, req)
		rv.mu.Unlock()
		body := `{"ok":true}`
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
}

func (rv *rawReceiver) got() []rawRequest {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]rawRequest(nil), rv.requests...)
}

// header returns the raw value of the header name, and whether it was sent.
func (r rawRequest) header(name string) (string, bool) {
	for _, h := range r.Header {
		if n, v, ok := strings.Cut(h, ":"); ok && textproto.CanonicalMIMEHeaderKey(n) == textproto.CanonicalMIMEHeaderKey(name) {
			return strings.TrimLeft(v, " \t"), true
		}
	}
	return "", false
}

// TestTheRecordSaysWhatWasSent runs steps whose URLs hold characters that
// may never appear in a URL (literal, from a fact, from a secret), a
// non-ASCII host and a fragment, against a receiver that keeps the raw
// bytes: each request line is a valid URL, the record's URL is exactly the
// one sent (the secret shown redacted), and every recorded header arrived
// with the value recorded.
func TestTheRecordSaysWhatWasSent(t *testing.T) {
	rv := newRawReceiver(t)
	g := allowLoopback()
	ex := executor.New(executor.Options{Guard: g, Network: guard.Network{Dial: g.DialTo(rv.ln.Addr().String())}})
	plan := compilePlan(t, `{"result":1,"workflow":[
		{"type":"request","method":"GET","url":"http://erp.example.com/lit?a=b c&id=${{kobana.email_message_id}}#frag ment","headers":{"X-Note":"a\tb","X-Pad":"  padded\t","X-Id":" ${{kobana.inbox_id}}"}},
		{"type":"request","method":"GET","url":"http://bücher.example/ção/${{secrets.P}}?q=${{secrets.P}}"},
		{"type":"request","url":"${{secrets.U}}","headers":{"Authorization":"Bearer ${{secrets.P}}"},"body":{"n":1}},
		{"type":"request","url":"http://erp.example.com/${{kobana.inbox_id}}"}]}`)
	env := executor.Env{
		Secrets: resolve.SecretMap{"P": "my secret", "U": "http://hooks.example.com/h/{x}|y#not-sent"},
		Facts:   resolve.FactMap{"email_message_id": "<m@x>", "inbox_id": "in\t1 "},
	}
	rec := ex.Run(t.Context(), plan, env)
	got := rv.got()
	if len(got) != 3 {
		t.Fatalf("the receiver got %d requests, want 3: %+v\n%s", len(got), got, recordJSON(t, rec))
	}
	want := []struct{ line, host, record string }{
		{"GET /lit?a=b%20c&id=%3Cm@x%3E HTTP/1.1", "erp.example.com", "http://erp.example.com/lit?a=b%20c&id=%3Cm@x%3E"},
		{"GET /%C3%A7%C3%A3o/my%20secret?q=my%20secret HTTP/1.1", "xn--bcher-kva.example", "http://xn--bcher-kva.example/%C3%A7%C3%A3o/[redacted secrets.P]?q=[redacted secrets.P]"},
		{"POST /h/%7Bx%7D%7Cy HTTP/1.1", "hooks.example.com", "[redacted secrets.U]"},
	}
	for i, w := range want {
		r, s := got[i], rec.Steps[i]
		if r.Line != w.line {
			t.Errorf("step %d: request line %q, want %q", i, r.Line, w.line)
		}
		if h, _ := r.header("Host"); h != w.host {
			t.Errorf("step %d: Host %q, want %q", i, h, w.host)
		}
		if s.Request == nil || s.Request.URL != w.record {
			t.Errorf("step %d: record url %+v, want %q", i, s.Request, w.record)
			continue
		}
		if strings.Contains(s.Request.URL, "#") {
			t.Errorf("step %d: the record shows a fragment: %q", i, s.Request.URL)
		}
		for name, value := range s.Request.Headers {
			sent, ok := r.header(name)
			if strings.Contains(value, "[redacted ") {
				value = strings.ReplaceAll(value, "[redacted secrets.P]", "my secret")
			}
			if !ok || sent != value {
				t.Errorf("step %d: header %s recorded as %q, sent as %q (sent: %v)", i, name, value, sent, ok)
			}
		}
	}
	if !bytes.Equal(got[2].Body, []byte(`{"n":1}`)) {
		t.Errorf("step 2 body %q", got[2].Body)
	}
	s3 := rec.Steps[3]
	if s3.State != runrecord.Failed || s3.Reason != runrecord.ReasonInvalidRequest || !strings.Contains(s3.Error, "tab") {
		t.Errorf("step 3 (a tab from a fact): %+v", s3)
	}
	if rec.Steps[0].State != runrecord.Succeeded {
		t.Errorf("step 0: %+v", rec.Steps[0])
	}
}
