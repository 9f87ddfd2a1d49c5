package mcptest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
)

// Eras lists one protocol version of each era, for tests that run on both.
var Eras = []string{"2025-11-25", Modern}

// Answer is how a test client answers an elicitation; a client given one
// declares elicitation support.
type Answer func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)

// Yes accepts the confirmation form.
func Yes(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
}

// Decline declines every elicitation.
func Decline(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// BearerClient returns an HTTP client that sends token as a bearer token.
func BearerClient(token string) *http.Client {
	return &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}
}

// HTTP is the Streamable HTTP transport to url, authenticated with token.
func HTTP(url, token string) mcp.Transport {
	return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: BearerClient(token)}
}

// Stdio connects srv in process for token, as a stdio connection would, and
// returns the client's end; the server side is closed when the test ends.
func Stdio(t testing.TB, srv *mcpserver.Server, token string) mcp.Transport {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), token, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return ct
}

// Connect opens a go-sdk client session over transport speaking era,
// answering elicitations with answer when it is not nil. Every message the
// server sends on it is checked against the official MCP schema of era and
// every tool result against its tool's outputSchema (see Checker): a
// violation fails t. The session is closed when the test ends.
func Connect(t testing.TB, transport mcp.Transport, era string, answer Answer) *mcp.ClientSession {
	t.Helper()
	cs, _ := ConnectChecked(t, transport, era, answer)
	return cs
}

// ConnectChecked is Connect that also returns the session's Checker, whose
// Seen tells which kinds of message the test exercised.
func ConnectChecked(t testing.TB, transport mcp.Transport, era string, answer Answer) (*mcp.ClientSession, *Checker) {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if answer != nil {
		opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return answer(r) }
	}
	check := NewChecker(era)
	c := mcp.NewClient(&mcp.Implementation{Name: "kobana-test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), Checked(t, transport, check), &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect %s: %v", era, err)
	}
	t.Cleanup(func() { cs.Close() })
	// The tools' output schemas, so that every tool result on this
	// connection is checked against its tool's.
	for _, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("connect %s: listing tools: %v", era, err)
		}
	}
	return cs, check
}

// TextOf joins the text contents of a tool result.
func TextOf(r *mcp.CallToolResult) string {
	if r == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ErrorCode returns the error code of a tool result that failed (the text
// before the first ": "), "" for a success.
func ErrorCode(r *mcp.CallToolResult) string {
	if r == nil || !r.IsError {
		return ""
	}
	code, _, _ := strings.Cut(TextOf(r), ": ")
	return code
}

// RPCCode returns the JSON-RPC error code of err, or 0.
func RPCCode(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

// Must sends the call and returns its result, failing the test on a
// transport or JSON-RPC error.
func (c ToolCall) Must(t testing.TB) map[string]any {
	t.Helper()
	r, err := c.Send(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil || r.Result == nil {
		t.Fatalf("%s: JSON-RPC error %v (HTTP %d %s)", c.Tool, r.Error, r.Status, r.Body)
	}
	return r.Result
}

// Concurrently sends the call n times at once and counts the answers that
// succeeded and the tool errors naming code (confirmation_replayed, say);
// a transport or JSON-RPC error, or any other answer, fails the test.
func (c ToolCall) Concurrently(t testing.TB, n int, code string) (ok, refused int64) {
	t.Helper()
	var okN, refusedN atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Send(nil)
			switch {
			case err != nil:
				t.Error(err)
			case r.Error != nil || r.Result == nil:
				t.Errorf("%s: JSON-RPC error %v (HTTP %d %s)", c.Tool, r.Error, r.Status, r.Body)
			case r.Result["isError"] != true:
				okN.Add(1)
			case strings.Contains(ResultText(r.Result), code):
				refusedN.Add(1)
			default:
				t.Errorf("%s: unexpected %s", c.Tool, ResultText(r.Result))
			}
		}()
	}
	wg.Wait()
	return okN.Load(), refusedN.Load()
}

// CallConcurrently sends a copy of params n times at once, spread over
// sessions in turn, and counts the calls that succeeded and those that failed with a
// tool error naming code; a transport error or any other answer fails the
// test.
func CallConcurrently(t testing.TB, sessions []*mcp.ClientSession, params *mcp.CallToolParams, n int, code string) (ok, refused int64) {
	t.Helper()
	var okN, refusedN atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call := *params // the client writes its _meta into the params it is given
			res, err := sessions[i%len(sessions)].CallTool(context.Background(), &call)
			switch {
			case err != nil:
				t.Error(err)
			case !res.IsError:
				okN.Add(1)
			case strings.Contains(TextOf(res), code):
				refusedN.Add(1)
			default:
				t.Errorf("%s: unexpected %s", params.Name, TextOf(res))
			}
		}()
	}
	wg.Wait()
	return okN.Load(), refusedN.Load()
}

// OpenSession opens a 2025-era session at url with client (initialize,
// then notifications/initialized, as raw HTTP requests) and leaves it open;
// it returns the session's id. Benchmarks open many this way, without a
// client library's own state per session.
func OpenSession(tb testing.TB, client *http.Client, url string) string {
	tb.Helper()
	post := func(session, body string) string {
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			tb.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", Legacy)
		}
		resp, err := client.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			tb.Fatalf("POST %s: %s", url, resp.Status)
		}
		return resp.Header.Get("Mcp-Session-Id")
	}
	id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+Legacy+`","capabilities":{},"clientInfo":{"name":"mcptest","version":"1"}}}`)
	post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

// BenchmarkSessions opens b.N 2025-era sessions at url with client
// (OpenSession), leaves them open, and reports the live heap they added,
// per session ("heap-bytes/session"), after a garbage collection on either
// side. The server must run in the benchmark's process.
func BenchmarkSessions(b *testing.B, client *http.Client, url string) {
	b.Helper()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	b.ResetTimer()
	for range b.N {
		OpenSession(b, client, url)
	}
	b.StopTimer()
	b.ReportMetric(float64(heap()-before)/float64(b.N), "heap-bytes/session")
}
