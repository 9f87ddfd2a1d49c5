package mcptest

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reporter fails t with each violation while the test runs, and drops
// violations seen after it ended (a stream still draining during cleanup).
type reporter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func newReporter(t testing.TB) *reporter {
	r := &reporter{t: t}
	t.Cleanup(func() {
		r.mu.Lock()
		r.done = true
		r.mu.Unlock()
	})
	return r
}

func (r *reporter) report(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.t.Errorf("MCP message outside the official schema: %v", err)
	}
}

// Checked returns transport with every message the server sends on it
// checked by check, each violation failing t. A Streamable HTTP transport is
// checked on the wire (its HTTP client is wrapped, the transport copied);
// any other transport message by message.
func Checked(t testing.TB, transport mcp.Transport, check *Checker) mcp.Transport {
	r := newReporter(t)
	if st, ok := transport.(*mcp.StreamableClientTransport); ok {
		cp := *st
		base := http.DefaultClient
		if cp.HTTPClient != nil {
			base = cp.HTTPClient
		}
		hc := *base
		hc.Transport = CheckedRoundTripper(hc.Transport, check, r.report)
		cp.HTTPClient = &hc
		return &cp
	}
	return checkedTransport{inner: transport, check: check, report: r.report}
}

// checkedTransport checks the messages of a message-level connection.
type checkedTransport struct {
	inner  mcp.Transport
	check  *Checker
	report func(error)
}

func (t checkedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &checkedConn{Connection: c, check: t.check, report: t.report}, nil
}

type checkedConn struct {
	mcp.Connection
	check  *Checker
	report func(error)
}

func (c *checkedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		if raw, err := jsonrpc.EncodeMessage(m); err == nil {
			c.report(c.check.Received(raw))
		}
	}
	return m, err
}

func (c *checkedConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if raw, err := jsonrpc.EncodeMessage(m); err == nil {
		c.check.Sent(raw)
	}
	return c.Connection.Write(ctx, m)
}

// CheckedRoundTripper returns an http.RoundTripper (base, or
// http.DefaultTransport when nil) that shows check every JSON-RPC message
// posted and every message answered, as a JSON body or as server-sent
// events, and passes each violation to report.
func CheckedRoundTripper(base http.RoundTripper, check *Checker, report func(error)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &checkedRoundTripper{base: base, check: check, report: report}
}

type checkedRoundTripper struct {
	base   http.RoundTripper
	check  *Checker
	report func(error)
}

func (rt *checkedRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		raw, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		rt.check.Sent(raw)
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(raw))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch media {
	case "application/json":
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		if err == nil && len(bytes.TrimSpace(raw)) > 0 {
			rt.report(rt.check.Received(raw))
		}
	case "text/event-stream":
		resp.Body = &sseChecker{ReadCloser: resp.Body, check: rt.check, report: rt.report}
	}
	return resp, nil
}

// sseChecker checks each event's data as the client reads the stream.
type sseChecker struct {
	io.ReadCloser
	check   *Checker
	report  func(error)
	partial []byte // an incomplete line
	data    bytes.Buffer
}

func (s *sseChecker) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.feed(p[:n])
	return n, err
}

func (s *sseChecker) feed(b []byte) {
	s.partial = append(s.partial, b...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return
		}
		line := bytes.TrimSuffix(s.partial[:i], []byte("\r"))
		s.line(line)
		s.partial = s.partial[i+1:]
	}
}

func (s *sseChecker) line(line []byte) {
	if len(line) == 0 {
		if s.data.Len() > 0 {
			s.report(s.check.Received(bytes.Clone(s.data.Bytes())))
			s.data.Reset()
		}
		return
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	if string(field) != "data" {
		return
	}
	value = bytes.TrimPrefix(value, []byte(" "))
	if s.data.Len() > 0 {
		s.data.WriteByte('\n')
	}
	s.data.Write(value)
}
