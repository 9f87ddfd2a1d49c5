package guard_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/kobana/workflow/executor/guard"
)

// resetAfterFirst is a receiver on loopback that reads each request whole
// and counts it; it answers the first one and resets the connection after
// reading every later one, as a crashing receiver does.
func resetAfterFirst(t *testing.T) (addr string, arrivals *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	arrivals = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if arrivals.Add(1) > 1 {
						c.(*net.TCPConn).SetLinger(0)
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}()
		}
	}()
	return ln.Addr().String(), arrivals
}

// send sends a GET, then the request that fails on the connection the GET
// left idle: a POST with a body and an Idempotency-Key, or a GET.
func send(t *testing.T, rt http.RoundTripper, addr, method string) error {
	t.Helper()
	first, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+addr+"/first", nil)
	resp, err := rt.RoundTrip(first)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var body io.Reader
	if method == "POST" {
		body = bytes.NewReader([]byte(`{"n":1}`))
	}
	second, _ := http.NewRequestWithContext(t.Context(), method, "http://"+addr+"/second", body)
	second.Header.Set("Idempotency-Key", `"wrun_1/1"`)
	resp, err = rt.RoundTrip(second)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the second request was answered %s", resp.Status)
	}
	return err
}

// net/http sends a request again on its own when a reused connection fails
// while it waits for the response, if the request is a GET or carries an
// Idempotency-Key (and its body can be replayed, as a bytes.Reader's can):
// the receiver gets it twice. Through SendOnce it gets it once, and the
// error says it was sent whole.
func TestSendOnceStopsNetHTTPsOwnResend(t *testing.T) {
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for _, method := range []string{"POST", "GET"} {
		t.Run("net/http "+method, func(t *testing.T) {
			addr, arrivals := resetAfterFirst(t)
			tr := g.Transport()
			defer tr.CloseIdleConnections()
			send(t, tr, addr, method)
			if n := arrivals.Load(); n != 3 {
				t.Errorf("the receiver got %d requests; net/http is expected to send the second one twice (3)", n)
			}
		})
		t.Run("SendOnce "+method, func(t *testing.T) {
			addr, arrivals := resetAfterFirst(t)
			tr := g.Transport()
			defer tr.CloseIdleConnections()
			err := send(t, guard.SendOnce(tr), addr, method)
			if n := arrivals.Load(); n != 2 {
				t.Errorf("the receiver got %d requests, want 2", n)
			}
			var unanswered *guard.UnansweredError
			if !errors.As(err, &unanswered) || !errors.Is(err, guard.ErrNotSentAgain) {
				t.Errorf("error %v (%T)", err, err)
			}
		})
	}
}

// A request that never left — the receiver refuses the connection — is
// not an UnansweredError.
func TestSendOnceARequestThatNeverLeft(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://"+addr+"/", bytes.NewReader([]byte("x")))
	_, err = guard.SendOnce(g.Transport()).RoundTrip(req)
	var unanswered *guard.UnansweredError
	if err == nil || errors.As(err, &unanswered) || errors.Is(err, guard.ErrNotSentAgain) {
		t.Errorf("error %v", err)
	}
}
