package guard

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// ErrNotSentAgain is the error of a request the transport wanted to send
// again on another connection after bytes of it may have left on the
// first: [SendOnce] refuses every such resend.
var ErrNotSentAgain = errors.New("the connection failed after the request may have left, and a request is not sent twice on its own")

// An UnansweredError is the error of a request whose bytes were all
// written but whose response never came whole: the receiver may have
// acted on it. Err is the transport's error.
type UnansweredError struct {
	Err error
}

func (e *UnansweredError) Error() string {
	return "the request was sent whole and no response came: " + e.Err.Error()
}

// Unwrap returns the transport's error.
func (e *UnansweredError) Unwrap() error { return e.Err }

// SendOnce returns a round tripper that sends each request through tr at
// most once. net/http sends a request again on a new connection, by
// itself, when a reused connection fails before the response: for
// HTTP/1.1 if the request counts as idempotent (GET, HEAD, OPTIONS, TRACE,
// or any method whose header map holds an Idempotency-Key or
// X-Idempotency-Key) and its body can be replayed; for HTTP/2 after
// REFUSED_STREAM, a GOAWAY or a PROTOCOL_ERROR reset, whatever the method.
// The round tripper lets such a second attempt go only when nothing of the
// request reached the transport's writer on the attempts before (no
// request header was written); otherwise it stops it before its first
// byte and the request fails with [ErrNotSentAgain].
//
// A request that fails after all its bytes were written (the connection
// reset or closed before a complete response, a timeout while waiting for
// it) fails with an [*UnansweredError]: its receiver may have acted on it.
//
// SendOnce sets tr.DialContext to a wrapper of itself (or of a plain
// dialer when it is nil) so that it can hold back a connection's next
// write; tr must not be used on its own afterwards. Build tr completely
// before calling SendOnce.
func SendOnce(tr *http.Transport) http.RoundTripper {
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &holdConn{Conn: c}, nil
	}
	return &onceTransport{tr: tr}
}

// onceTransport is SendOnce's round tripper.
type onceTransport struct {
	tr *http.Transport
}

// CloseIdleConnections closes the transport's idle connections, so that
// http.Client.CloseIdleConnections reaches them.
func (o *onceTransport) CloseIdleConnections() { o.tr.CloseIdleConnections() }

// RoundTrip implements http.RoundTripper.
func (o *onceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	a := &attempts{cancel: cancel}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:      a.gotConn,
		WroteHeaders: a.wroteHeaders,
		WroteRequest: a.wroteRequest,
	})
	resp, err := o.tr.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		a.mu.Lock()
		refused, whole := a.refused, a.whole
		a.mu.Unlock()
		if refused {
			err = ErrNotSentAgain
		}
		if whole {
			err = &UnansweredError{Err: err}
		}
		return nil, err
	}
	// The request's context lives as long as its response body.
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// attempts follows one request through the transport's attempts at it.
type attempts struct {
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	conns int  // connections the transport took for the request
	left  bool // request headers were written: bytes may have left
	whole bool // the request was written whole
	// refused says a resend was stopped.
	refused bool
}

// gotConn stops a second attempt at a request that may have left: the
// request's context ends, so HTTP/2 writes nothing more of it and HTTP/1.1
// tries no further connection, and the HTTP/1.1 connection it was given
// refuses its next write, so not a byte of it goes out on that one.
func (a *attempts) gotConn(info httptrace.GotConnInfo) {
	a.mu.Lock()
	a.conns++
	stop := a.conns > 1 && a.left
	if stop {
		a.refused = true
	}
	a.mu.Unlock()
	if !stop {
		return
	}
	a.cancel(ErrNotSentAgain)
	c := info.Conn
	if tc, ok := c.(*tls.Conn); ok {
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			// Shared by other requests; the ended context stops this one.
			return
		}
		c = tc.NetConn()
	}
	if hc, ok := c.(*holdConn); ok {
		hc.hold.Store(true)
	}
}

func (a *attempts) wroteHeaders() {
	a.mu.Lock()
	a.left = true
	a.mu.Unlock()
}

func (a *attempts) wroteRequest(info httptrace.WroteRequestInfo) {
	a.mu.Lock()
	a.left = true
	if info.Err == nil {
		a.whole = true
	}
	a.mu.Unlock()
}

// holdConn is a connection whose writes can be refused from some moment on
// (SendOnce stops a resend with it).
type holdConn struct {
	net.Conn
	hold atomic.Bool
}

func (c *holdConn) Write(b []byte) (int, error) {
	if c.hold.Load() {
		return 0, ErrNotSentAgain
	}
	return c.Conn.Write(b)
}

// cancelBody ends a request's context when its response body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// SendOnceVia returns a client like [Guard.ClientVia] whose transport is
// [SendOnce]'s: it never follows a redirect and never sends a request
// twice on its own.
func (g *Guard) SendOnceVia(n Network) *http.Client {
	return &http.Client{Transport: SendOnce(g.TransportVia(n)), CheckRedirect: refuseRedirect}
}
