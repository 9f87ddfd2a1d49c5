package pg_test

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/kobana/workflow/mcpserver/store/pg"
)

// proxy is a TCP front for the test database's server that a test can cut:
// it stands for the network between replicas and the database.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target pg.Endpoint

	mu    sync.Mutex
	mode  proxyMode
	conns map[net.Conn]bool
}

type proxyMode int

const (
	// proxyUp forwards connections.
	proxyUp proxyMode = iota
	// proxyRefuse closes every connection at once (a server that is down).
	proxyRefuse
	// proxyHang accepts connections and never answers (a host that is
	// unreachable or a server that is stuck).
	proxyHang
)

func startProxy(t *testing.T) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: pg.ServerEndpoint(t), conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.set(proxyRefuse)
	})
	return p
}

// dsn returns a connection string through the proxy on the given schema.
func (p *proxy) dsn(schema, app string) string {
	host, port, _ := net.SplitHostPort(p.ln.Addr().String())
	n, _ := strconv.Atoi(port)
	return pg.DSN(p.t, host, uint16(n), map[string]string{"search_path": schema, "application_name": app})
}

// set switches the mode; leaving proxyUp cuts every open connection, and
// leaving proxyHang every hanging one.
func (p *proxy) set(m proxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.mode
	p.mode = m
	if m != proxyUp || old == proxyHang {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != proxyUp {
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		mode := p.mode
		if mode == proxyHang {
			p.conns[c] = true
		}
		p.mu.Unlock()
		switch mode {
		case proxyRefuse:
			c.Close()
		case proxyUp:
			go p.forward(c)
		}
	}
}

func (p *proxy) forward(c net.Conn) {
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
