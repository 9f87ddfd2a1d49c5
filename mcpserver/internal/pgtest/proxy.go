package pgtest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP front for the test database's server that a test can cut:
// it stands for the network between replicas and the database.
type Proxy struct {
	t      testing.TB
	ln     net.Listener
	target Endpoint

	mu    sync.Mutex
	mode  Mode
	conns map[net.Conn]bool
	// stall is the marker of StallReply, until a reply was stalled.
	stall   []byte
	stalled chan struct{}
}

// Mode is what a Proxy does with connections.
type Mode int

const (
	// Up forwards connections.
	Up Mode = iota
	// Refuse closes every connection at once (a server that is down).
	Refuse
	// Hang accepts connections and never answers (a host that is
	// unreachable or a server that is stuck).
	Hang
)

// String names the mode for test messages.
func (m Mode) String() string {
	return map[Mode]string{Up: "up", Refuse: "refused", Hang: "hanging"}[m]
}

// StartProxy starts a proxy in mode Up, stopped when the test ends.
func StartProxy(t testing.TB) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{t: t, ln: ln, target: ServerEndpoint(t), conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Set(Refuse)
	})
	return p
}

// DSN returns a connection string through the proxy on the given schema,
// naming its connections app.
func (p *Proxy) DSN(schema, app string) string {
	host, port, _ := net.SplitHostPort(p.ln.Addr().String())
	n, _ := strconv.Atoi(port)
	return DSN(p.t, host, uint16(n), map[string]string{"search_path": schema, "application_name": app})
}

// Set switches the mode; leaving Up cuts every open connection, and leaving
// Hang every hanging one.
func (p *Proxy) Set(m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.mode
	p.mode = m
	if m != Up || old == Hang {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != Up {
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		mode := p.mode
		if mode == Hang {
			p.conns[c] = true
		}
		p.mu.Unlock()
		switch mode {
		case Refuse:
			c.Close()
		case Up:
			go p.forward(c)
		}
	}
}

func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial(p.target.Network, p.target.Address)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		c.Close()
		up.Close()
		return
	}
	done := make(chan struct{}, 2)
	var watching atomic.Bool // the client sent the marker of StallReply
	go func() {
		p.requests(up, c, &watching)
		done <- struct{}{}
	}()
	go func() {
		p.replies(c, up, &watching)
		done <- struct{}{}
	}()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// StallReply makes the proxy stall the reply to the next statement a client
// sends whose text contains marker, once that reply carries rows: from its
// first row on, nothing more reaches that client on that connection (the
// statement ran; its answer is lost, as on a network path that stalls at the
// wrong moment). Other connections, and later statements on other
// connections, are forwarded. The channel is closed once a reply was
// stalled. A statement's text travels when it is first prepared on a
// connection (pgx caches prepared statements per connection): a fresh
// client's first run of it is what this catches. Plain-text connections
// only (the test server's, sslmode=disable).
func (p *Proxy) StallReply(marker string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stall, p.stalled = []byte(marker), make(chan struct{})
	return p.stalled
}

// requests forwards what a client sends, watching for StallReply's marker.
func (p *Proxy) requests(dst, src net.Conn, watching *atomic.Bool) {
	buf := make([]byte, 32<<10)
	var tail []byte
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			marker := p.stall
			p.mu.Unlock()
			if marker != nil {
				seen := append(tail, buf[:n]...)
				if bytes.Contains(seen, marker) {
					watching.Store(true)
				}
				tail = append(tail[:0], seen[max(0, len(seen)-len(marker)):]...)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// replies forwards what the server answers, message by message (a type
// byte and a length), and stops at the first data row of a reply the
// client's watched statement gets; a reply without rows (its command
// completes first) ends the watch.
func (p *Proxy) replies(dst, src net.Conn, watching *atomic.Bool) {
	buf := make([]byte, 32<<10)
	var head []byte // a message header not yet whole
	left := 0       // bytes of the current message not yet forwarded
	for {
		n, err := src.Read(buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			if left > 0 {
				k := min(left, len(chunk))
				if _, werr := dst.Write(chunk[:k]); werr != nil {
					return
				}
				chunk, left = chunk[k:], left-k
				continue
			}
			k := min(5-len(head), len(chunk))
			head, chunk = append(head, chunk[:k]...), chunk[k:]
			if len(head) < 5 {
				continue
			}
			if watching.Load() {
				switch head[0] {
				case 'D':
					p.mu.Lock()
					if p.stall != nil {
						p.stall = nil
						close(p.stalled)
					}
					p.mu.Unlock()
					io.Copy(io.Discard, src)
					return
				case 'C':
					watching.Store(false)
				}
			}
			if _, werr := dst.Write(head); werr != nil {
				return
			}
			left, head = int(binary.BigEndian.Uint32(head[1:]))-4, head[:0]
		}
		if err != nil {
			return
		}
	}
}
