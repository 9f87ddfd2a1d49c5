package guard_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer is an httptest.Server that counts what reaches it at three
// levels: accepted TCP connections (a wrapping listener), connections the
// HTTP server saw (ConnState), and requests handled.
type countingServer struct {
	*httptest.Server
	accepts, conns, reqs atomic.Int64
	port                 string
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// newCountingServer listens on network/addr ("tcp4", "127.0.0.1:0") and
// serves h, or a handler answering "ok" when h is nil. It skips the test if
// the address cannot be listened on (e.g. no IPv6 loopback).
func newCountingServer(t testing.TB, network, addr string, h http.Handler) *countingServer {
	t.Helper()
	return startCountingServer(t, network, addr, h, false)
}

// newCountingTLSServer is newCountingServer over TLS, with HTTP/2 enabled.
func newCountingTLSServer(t testing.TB, network, addr string, h http.Handler) *countingServer {
	t.Helper()
	return startCountingServer(t, network, addr, h, true)
}

func startCountingServer(t testing.TB, network, addr string, h http.Handler, tls bool) *countingServer {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s %s: %v", network, addr, err)
	}
	s := &countingServer{}
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reqs.Add(1)
		h.ServeHTTP(w, r)
	}))
	s.Listener.Close()
	s.Listener = countingListener{Listener: ln, n: &s.accepts}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if tls {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	return s
}

// counts returns accepted connections, connections seen by the HTTP
// server and requests, for messages and comparisons.
func (s *countingServer) counts() [3]int64 {
	return [3]int64{s.accepts.Load(), s.conns.Load(), s.reqs.Load()}
}

// expect fails the test unless exactly n connections were accepted and seen
// and n requests handled. Callers use it after one allowed request that
// follows the denied ones: that request's connection is accepted after any
// connection a denied attempt could have left in the accept queue, so n == 1
// proves the denied attempts never connected.
func (s *countingServer) expect(t testing.TB, n int64, what string) {
	t.Helper()
	if got := s.counts(); got != [3]int64{n, n, n} {
		t.Errorf("%s: server saw accepts/conns/requests %v, want %d each", what, got, n)
	}
}

// untouched fails the test if anything reached the server.
func (s *countingServer) untouched(t testing.TB, what string) {
	t.Helper()
	s.expect(t, 0, what)
}

// fakeDNS is a minimal DNS server on UDP loopback. For each name it answers
// A queries with the next address of a sequence (the last one repeats), and
// AAAA queries with no records. Unknown names get NXDOMAIN.
type fakeDNS struct {
	pc      net.PacketConn
	mu      sync.Mutex
	answers map[string][]netip.Addr // lower-case FQDN → A answers in order
	asked   map[string]int          // A queries received per name
}

func newFakeDNS(t testing.TB, answers map[string][]netip.Addr) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake DNS: %v", err)
	}
	f := &fakeDNS{pc: pc, answers: answers, asked: map[string]int{}}
	go f.serve()
	t.Cleanup(func() { pc.Close() })
	return f
}

// resolver returns a Go resolver that asks only this server.
func (f *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp4", f.pc.LocalAddr().String())
		},
	}
}

func (f *fakeDNS) queries(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[name]
}

func (f *fakeDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := f.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := f.answer(buf[:n]); resp != nil {
			f.pc.WriteTo(resp, from)
		}
	}
}

func (f *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	i := 12
	var labels []string
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l&0xc0 != 0 || i+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i:])
	question := q[12 : i+4]
	name := strings.ToLower(strings.Join(labels, ".")) + "."

	f.mu.Lock()
	seq, known := f.answers[name]
	var rr []netip.Addr
	if known && qtype == 1 { // A
		k := f.asked[name]
		f.asked[name]++
		rr = []netip.Addr{seq[min(k, len(seq)-1)]}
	}
	f.mu.Unlock()

	resp := make([]byte, 12, 512)
	copy(resp, q[:2])       // ID
	flags := uint16(0x8580) // response, authoritative, recursion desired and available
	if !known {
		flags |= 3 // NXDOMAIN
	}
	binary.BigEndian.PutUint16(resp[2:], flags)
	binary.BigEndian.PutUint16(resp[4:], 1) // one question
	binary.BigEndian.PutUint16(resp[6:], uint16(len(rr)))
	resp = append(resp, question...)
	for _, a := range rr {
		v4 := a.As4()
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4) // name → question, A, IN, TTL 0, 4 bytes
		resp = append(resp, v4[:]...)
	}
	return resp
}

// get sends a GET with a deadline, so that no test can hang on the network.
func get(t testing.TB, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GET %s timed out", url)
	}
	return resp, err
}
