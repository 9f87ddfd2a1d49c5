package guard

import (
	"context"
	"net"
	"net/http"
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
