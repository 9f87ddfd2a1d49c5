package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/kobana/workflow/mcpserver"
)

// A serviceDef is a way kobana serve takes work: a listener (HTTP, stdio)
// or, as the pipeline grows, another long-running part. Adding one is an
// entry in services: its name, the flag that turns it on, and a setup that
// registers its flags.
type serviceDef struct {
	name string
	// enable is the flag that turns it on, for messages ("-http ADDR").
	enable string
	// companion says the service runs beside the others and does not
	// count as something to serve on its own (the pipeline).
	companion bool
	// setup registers the service's flags on fs and returns the function
	// that, once they are parsed, reads them: the service they ask for
	// (none when they do not), or an error when they are wrong.
	setup func(fs *flag.FlagSet) func() (serviceSetup, error)
}

// serviceSetup is one service serve runs.
type serviceSetup struct {
	name    string
	service service
	// stdout says the service speaks its protocol on standard output, so
	// notices go to standard error.
	stdout bool
}

// service is a running part of kobana serve.
type service interface {
	// listen binds what the service listens on. It runs before the
	// products are built (the HTTP address is the default public URL),
	// after the demo is seeded.
	listen(a *assembly) error
	// addr is the network address listen bound; nil when none.
	addr() net.Addr
	// announce tells the person running serve, on standard error, where
	// the service takes work; it is called once, before serve.
	announce(w io.Writer)
	// serve takes work until ctx ends or the service stops on its own
	// (stdio's client closing its input); nil is a normal end.
	serve(ctx context.Context, a *assembly) error
}

// services are the services kobana serve knows.
var services = []serviceDef{
	{name: "http", enable: "-http ADDR", setup: httpService},
	{name: "stdio", enable: "-stdio", setup: stdioService},
	{name: "smtp", enable: "-smtp ADDR", setup: intakeSetup},
	{name: "pipeline", enable: "-process", setup: pipelineSetup, companion: true},
}

// httpServer serves MCP over Streamable HTTP at /mcp, with the products'
// routes beside it.
type httpServer struct {
	address string
	public  string
	hosts   listFlag
	origins listFlag
	ln      net.Listener
}

func httpService(fs *flag.FlagSet) func() (serviceSetup, error) {
	h := &httpServer{}
	fs.StringVar(&h.address, "http", "", "serve Streamable HTTP on this address, e.g. 127.0.0.1:8080")
	fs.StringVar(&h.public, "public-url", "", "base URL clients reach this server at, for signed download links (default http://ADDR)")
	fs.Var(&h.hosts, "allowed-host", "Host header value accepted on HTTP (repeatable; default: loopback names only)")
	fs.Var(&h.origins, "allowed-origin", "browser Origin accepted on HTTP (repeatable; default: pages of an allowed host)")
	return func() (serviceSetup, error) {
		if h.address == "" {
			if h.public != "" || len(h.hosts) > 0 || len(h.origins) > 0 {
				return serviceSetup{}, errors.New("-public-url, -allowed-host and -allowed-origin need -http ADDR")
			}
			return serviceSetup{}, nil
		}
		return serviceSetup{name: "http", service: h}, nil
	}
}

func (h *httpServer) listen(a *assembly) error {
	ln, err := net.Listen("tcp", h.address)
	if err != nil {
		return err
	}
	h.ln = ln
	a.closers = append(a.closers, func() { ln.Close() })
	a.publicURL = h.public
	if a.publicURL == "" {
		a.publicURL = "http://" + ln.Addr().String()
	}
	addPlayground(a.handlers)
	return nil
}

func (h *httpServer) addr() net.Addr { return h.ln.Addr() }

func (h *httpServer) announce(w io.Writer) {
	fmt.Fprintf(w, "serving MCP on http://%s/mcp\n", h.ln.Addr())
	fmt.Fprintln(w, playgroundNote("http://"+h.ln.Addr().String()))
	if tcp, ok := h.ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && len(h.hosts) == 0 {
		fmt.Fprintln(w, "note: only loopback Host names are accepted; pass -allowed-host NAME for the names clients use to reach this address")
	}
}

func (h *httpServer) serve(ctx context.Context, a *assembly) error {
	hs := &http.Server{
		Handler: a.server.HTTPHandler(mcpserver.HTTPOptions{
			AllowedHosts:   h.hosts,
			AllowedOrigins: h.origins,
			Extra:          a.handlers,
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	return serveUntilDone(ctx, hs, h.ln, 5*time.Second, http.ErrServerClosed)
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

// stdioServer serves MCP on standard input and output for one token.
type stdioServer struct {
	token string
}

func stdioService(fs *flag.FlagSet) func() (serviceSetup, error) {
	on := fs.Bool("stdio", false, "serve on standard input and output (token from KOBANA_TOKEN)")
	return func() (serviceSetup, error) {
		if !*on {
			return serviceSetup{}, nil
		}
		return serviceSetup{name: "stdio", service: &stdioServer{}, stdout: true}, nil
	}
}

func (s *stdioServer) listen(a *assembly) error {
	s.token = a.cmd.getenv("KOBANA_TOKEN")
	if s.token == "" && len(a.tokens) > 0 {
		s.token = a.tokens[0].Token
		fmt.Fprintf(a.cmd.Stderr, "stdio speaks for %s (KOBANA_TOKEN is not set)\n", a.tokens[0].Name)
	}
	if s.token == "" {
		return usageError{errors.New("-stdio needs a token in KOBANA_TOKEN (see kobana token create)")}
	}
	return nil
}

func (s *stdioServer) addr() net.Addr { return nil }

func (s *stdioServer) announce(io.Writer) {} // standard output is the protocol; nothing to say

func (s *stdioServer) serve(ctx context.Context, a *assembly) error {
	var in io.Reader = a.cmd.Stdin
	if in == nil {
		in = eofReader{}
	}
	err := a.server.ServeStdio(ctx, s.token, io.NopCloser(in), nopWriteCloser{a.cmd.Stdout})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the client closed its input, or serve is stopping
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
