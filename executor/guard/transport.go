package guard

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Timeouts of the dialer and transport built by Guard.Dialer and
// Guard.Transport. A caller bounds a whole request with its context.
const (
	dialTimeout           = 10 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 60 * time.Second
	idleConnTimeout       = 90 * time.Second
)

// Dialer returns a new [net.Dialer] whose Control hook is [Guard.Control],
// so every address it connects to, after resolution, passes the guard.
// Set its Resolver to use another name resolver; do not replace Control.
func (g *Guard) Dialer() *net.Dialer {
	return &net.Dialer{
		Timeout:   dialTimeout,
		KeepAlive: 30 * time.Second,
		Control:   g.Control,
	}
}

// Transport returns a new [http.Transport] that dials through
// [Guard.Dialer] and never uses a proxy: Proxy is nil, whatever HTTP_PROXY
// and HTTPS_PROXY say, because through a proxy the dialled address would be
// the proxy's. HTTP/2 is negotiated over TLS as by [http.DefaultTransport].
//
// Create one and share it: it is safe for concurrent use, and sharing it
// shares its connection pool. Callers may adjust timeouts and TLS settings
// on the result; they must leave Proxy nil and dial through the guard.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.Dialer().DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    10,
		IdleConnTimeout:        idleConnTimeout,
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ResponseHeaderTimeout:  responseHeaderTimeout,
		ExpectContinueTimeout:  1 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// Client returns a new [http.Client] that sends through a new
// [Guard.Transport] and never follows redirects: a 3xx response is returned
// to the caller as is (its body unread, its Location header intact).
// Create one and share it.
func (g *Guard) Client() *http.Client {
	return &http.Client{
		Transport:     g.Transport(),
		CheckRedirect: refuseRedirect,
	}
}

func refuseRedirect(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}

// TransportTo returns a transport like [Guard.Transport] that connects to
// addr ("host:port") whatever host a request names, still through the
// guard's dialer, so the guard still decides whether addr may be reached.
// Demos and tests use it to play remote hosts (erp.example.com) on a local
// receiver; TLS still verifies the certificate against the request's host.
func (g *Guard) TransportTo(addr string) *http.Transport {
	tr := g.Transport()
	d := g.Dialer()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return tr
}

// DialFunc opens a connection to addr ("host:port") over network, as
// [net.Dialer.DialContext] does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Network is how a guarded transport reaches its receivers: who opens its
// connections and with which TLS settings. The zero value dials each host
// as named through [Guard.Dialer] and verifies certificates against the
// system's roots.
type Network struct {
	// Dial, when set, opens the connections instead of the guard's dialer:
	// tests and demos send every request to one local receiver with it
	// ([Guard.DialTo]), or count connections. The guard still checks the
	// address each connection reached (see [Guard.TransportVia]).
	Dial DialFunc
	// TLS, when set, is the TLS configuration of https connections (a test
	// receiver's own certificate authority); nil is the system's roots.
	TLS *tls.Config
}

// TransportVia returns a transport like [Guard.Transport] that opens its
// connections with n.Dial and uses n.TLS. Whatever n.Dial connects to, the
// guard checks the address each connection reached before the transport
// writes a byte to it: a connection to an address the guard refuses is
// closed and its request fails with a *[DeniedError]. A caller's dialer
// therefore cannot take a request where the guard would not let it go,
// though it may have opened the connection (the guard's own dialer refuses
// before connecting). A connection whose remote address is not an IP and
// port (an in-memory pipe) is refused.
func (g *Guard) TransportVia(n Network) *http.Transport {
	tr := g.Transport()
	if n.Dial != nil {
		tr.DialContext = g.checked(n.Dial)
	}
	if n.TLS != nil {
		tr.TLSClientConfig = n.TLS.Clone()
	}
	return tr
}

// ClientVia returns a client like [Guard.Client] over [Guard.TransportVia].
func (g *Guard) ClientVia(n Network) *http.Client {
	return &http.Client{Transport: g.TransportVia(n), CheckRedirect: refuseRedirect}
}

// DialTo returns a DialFunc that connects to addr whatever address it is
// asked for, through [Guard.Dialer], so the guard still decides whether
// addr may be reached: [Guard.TransportTo]'s dial, for a [Network].
func (g *Guard) DialTo(addr string) DialFunc {
	d := g.Dialer()
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
}

// checked wraps dial so that the guard checks where each connection went.
func (g *Guard) checked(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := g.checkConn(c); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// checkConn checks the remote address of a connection a dialer opened.
func (g *Guard) checkConn(c net.Conn) error {
	remote := c.RemoteAddr()
	if remote == nil {
		return fmt.Errorf("guard: refusing a connection without a remote address")
	}
	ap, err := netip.ParseAddrPort(remote.String())
	if err != nil {
		return fmt.Errorf("guard: refusing a connection to %q: not an IP address and port", remote.String())
	}
	return g.CheckAddr(ap.Addr())
}
