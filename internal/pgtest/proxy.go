package pgtest

import (
	"io"
	"net"
	"strconv"
	"sync"
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
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}
