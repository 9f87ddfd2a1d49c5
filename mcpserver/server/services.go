package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
)

// service is a running part of the server: a listener (HTTP, stdio, SMTP)
// or another long-running part (the pipeline). Adding one is a field of
// Config and an entry in Config.services.
type service interface {
	// name names the service in Config.Ready's addresses and in errors.
	name() string
	// listen binds what the service listens on. It runs before the
	// products are built (the HTTP address is the default public URL),
	// after the demo is seeded.
	listen(a *assembly) error
	// addr is the network address listen bound; nil when none.
	addr() net.Addr
	// announce tells the person running the server where the service
	// takes work; it is called once, before serve.
	announce(w io.Writer)
	// serve takes work until ctx ends or the service stops on its own
	// (stdio's client closing its input); nil is a normal end.
	serve(ctx context.Context, a *assembly) error
}

// httpServer serves MCP over Streamable HTTP at /mcp, with the products'
// routes beside it.
type httpServer struct {
	cfg HTTP
	ln  net.Listener
	// scheme is "https" with TLS, else "http".
	scheme string
	// auth makes /mcp a protected resource, open are the authorization
	// server's cross-origin routes, authNote says why OAuth is off (see
	// setupAuth).
	auth     *mcpserver.ResourceAuth
	open     map[string]http.Handler
	authNote string
	// console is the console's URL once it is mounted.
	console string
}

func (h *httpServer) name() string { return "http" }

func (h *httpServer) listen(a *assembly) error {
	ln, err := net.Listen("tcp", h.cfg.Addr)
	if err != nil {
		return err
	}
	a.closers = append(a.closers, func() { ln.Close() })
	h.scheme = "http"
	if h.cfg.TLS != nil {
		cfg, err := h.cfg.TLS.tlsConfig(a.cfg.StorePath)
		if err != nil {
			return err
		}
		ln, h.scheme = tls.NewListener(ln, cfg), "https"
	}
	h.ln = ln
	a.publicURL = h.cfg.PublicURL
	if a.publicURL == "" {
		a.publicURL = h.scheme + "://" + ln.Addr().String()
	}
	addPlayground(a.handlers)
	h.cfg.AllowedHosts = defaultHosts(h.cfg, a.publicURL)
	return h.setupAuth(a)
}

func (h *httpServer) addr() net.Addr { return h.ln.Addr() }

func (h *httpServer) announce(w io.Writer) {
	fmt.Fprintf(w, "serving MCP on %s://%s/mcp\n", h.scheme, h.ln.Addr())
	fmt.Fprintln(w, playgroundNote(h.scheme+"://"+h.ln.Addr().String()))
	if h.console != "" {
		fmt.Fprintf(w, "console on %s (sign in with a code from kobana token signin)\n", h.console)
	}
	if h.auth != nil {
		fmt.Fprintf(w, "OAuth: %s is a protected resource of %s\n", h.auth.Resource, strings.Join(h.auth.AuthorizationServers, ", "))
	}
	if h.authNote != "" {
		fmt.Fprintln(w, h.authNote)
	}
	if tcp, ok := h.ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && len(h.cfg.AllowedHosts) == 0 {
		fmt.Fprintln(w, "note: only loopback Host names are accepted; pass -allowed-host NAME for the names clients use to reach this address")
	}
}

func (h *httpServer) serve(ctx context.Context, a *assembly) error {
	read, idle := h.cfg.ReadTimeout, h.cfg.IdleTimeout
	if read <= 0 {
		read = DefaultHTTPReadTimeout
	}
	if idle <= 0 {
		idle = DefaultHTTPIdleTimeout
	}
	hs := &http.Server{
		Handler: recoverHTTP(a.withHealth(a.server.HTTPHandler(mcpserver.HTTPOptions{
			AllowedHosts:        h.cfg.AllowedHosts,
			AllowedOrigins:      h.cfg.AllowedOrigins,
			Extra:               a.handlers,
			Auth:                h.auth,
			OpenRoutes:          h.open,
			MaxSessionsPerToken: h.cfg.MaxSessionsPerToken,
			MaxSessions:         h.cfg.MaxSessions,
		}))),
		ReadHeaderTimeout: min(10*time.Second, read),
		ReadTimeout:       read,
		IdleTimeout:       idle,
	}
	return serveUntilDone(ctx, hs, h.ln, min(5*time.Second, a.cfg.StopGrace), http.ErrServerClosed)
}

// listenerServer is a server of the connections a listener accepts:
// *http.Server, *smtp.Server.
type listenerServer interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
	Close() error
}

// serveUntilDone serves ln with srv until ctx ends, then shuts srv down:
// what it is doing (a request, a message being received) is finished and
// answered for up to grace, and what is still running then is cut. closed
// is the error Serve returns once shut down, which is not a failure.
func serveUntilDone(ctx context.Context, srv listenerServer, ln net.Listener, grace time.Duration, closed error) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, closed) {
		return err
	}
	return nil
}

// stdioServer serves MCP on a pair of streams for one token.
type stdioServer struct {
	cfg   Stdio
	token string
}

func (s *stdioServer) name() string { return "stdio" }

func (s *stdioServer) listen(a *assembly) error {
	s.token = s.cfg.Token
	if s.token == "" && len(a.tokens) > 0 {
		s.token = a.tokens[0].Token
		fmt.Fprintf(a.notices, "stdio speaks for %s (KOBANA_TOKEN is not set)\n", a.tokens[0].Name)
	}
	if s.token == "" {
		return &ConfigError{ErrStdioToken}
	}
	return nil
}

func (s *stdioServer) addr() net.Addr { return nil }

func (s *stdioServer) announce(io.Writer) {} // standard output is the protocol; nothing to say

func (s *stdioServer) serve(ctx context.Context, a *assembly) error {
	in, out := s.cfg.In, s.cfg.Out
	if in == nil {
		in = eofReader{}
	}
	if out == nil {
		out = io.Discard
	}
	err := a.server.ServeStdio(ctx, s.token, io.NopCloser(in), nopWriteCloser{out})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the client closed its input, or serve is stopping
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
