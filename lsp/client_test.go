package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/lsp/internal/jsonrpc"
)

// testClient speaks the protocol to a Server over two pipes, as an editor
// would: every message the server writes is read at once and queued, so the
// server never waits on the test.
type testClient struct {
	t      testing.TB
	conn   *jsonrpc.Conn
	toSrv  *io.PipeWriter
	nextID int64
	served chan error

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []*jsonrpc.Message
	closed bool
}

// waitLimit bounds every wait for the server; it only turns a hang into a
// failure.
const waitLimit = 20 * time.Second

func startServer(t testing.TB, opts Options) (*testClient, *Server) {
	t.Helper()
	srv := New(opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &testClient{t: t, conn: jsonrpc.NewConn(outR, inW), toSrv: inW, served: make(chan error, 1)}
	c.cond = sync.NewCond(&c.mu)
	go func() {
		err := srv.Serve(inR, outW)
		outW.Close()
		c.served <- err
	}()
	go func() {
		for {
			m, err := c.conn.Read()
			if rpcErr := (*jsonrpc.Error)(nil); errors.As(err, &rpcErr) {
				c.t.Errorf("the server sent a malformed message: %v", err)
				continue
			}
			c.mu.Lock()
			if err != nil {
				c.closed = true
				c.cond.Broadcast()
				c.mu.Unlock()
				return
			}
			c.queue = append(c.queue, m)
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.served:
		case <-time.After(waitLimit):
			t.Error("the server did not stop when its input closed")
		}
	})
	return c, srv
}

// newClient starts a server and initializes it with the capabilities given
// (nil: none).
func newClient(t testing.TB, opts Options, capabilities any) *testClient {
	t.Helper()
	c, _ := startServer(t, opts)
	if capabilities == nil {
		capabilities = map[string]any{}
	}
	var res initializeResult
	if err := c.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": capabilities}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.notify("initialized", map[string]any{})
	return c
}

// take removes and returns the first queued message for which match is
// true, waiting for one.
func (c *testClient) take(what string, match func(*jsonrpc.Message) bool) *jsonrpc.Message {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for i, m := range c.queue {
			if match(m) {
				c.queue = append(c.queue[:i:i], c.queue[i+1:]...)
				return m
			}
		}
		if c.closed || time.Now().After(deadline) {
			c.t.Fatalf("no %s from the server (closed=%v)", what, c.closed)
		}
		c.cond.Wait()
	}
}

func (c *testClient) request(method string, params any) int64 {
	c.t.Helper()
	c.nextID++
	if err := c.conn.Request(c.nextID, method, params); err != nil {
		c.t.Fatalf("sending %s: %v", method, err)
	}
	return c.nextID
}

// call sends a request and decodes its result into result; it returns the
// error object of an error response.
func (c *testClient) call(method string, params, result any) *jsonrpc.Error {
	c.t.Helper()
	id := c.request(method, params)
	want := fmt.Sprint(id)
	m := c.take("answer to "+method, func(m *jsonrpc.Message) bool { return m.Method == "" && string(m.ID) == want })
	if m.Error != nil {
		return m.Error
	}
	if result != nil {
		if err := json.Unmarshal(m.Result, result); err != nil {
			c.t.Fatalf("%s: decoding %s: %v", method, m.Result, err)
		}
	}
	return nil
}

func (c *testClient) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(method, params); err != nil {
		c.t.Fatalf("sending %s: %v", method, err)
	}
}

// diagnostics waits for the diagnostics of uri at version.
func (c *testClient) diagnostics(uri string, version int) []Diagnostic {
	c.t.Helper()
	m := c.take(fmt.Sprintf("diagnostics of %s version %d", uri, version), func(m *jsonrpc.Message) bool {
		if m.Method != "textDocument/publishDiagnostics" {
			return false
		}
		var p PublishDiagnosticsParams
		return json.Unmarshal(m.Params, &p) == nil && p.URI == uri && p.Version != nil && *p.Version == version
	})
	var p PublishDiagnosticsParams
	json.Unmarshal(m.Params, &p)
	return p.Diagnostics
}

// open opens a document and returns its first diagnostics.
func (c *testClient) open(uri, text string) []Diagnostic {
	c.t.Helper()
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "json", "version": 1, "text": text}})
	return c.diagnostics(uri, 1)
}

// replace sends the whole new text of a document.
func (c *testClient) replace(uri string, version int, text string) {
	c.t.Helper()
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]any{{"text": text}},
	})
}

// cursorDoc splits a document written with one "|" at the cursor.
func cursorDoc(t *testing.T, marked string) (string, int) {
	t.Helper()
	i := strings.Index(marked, "|")
	if i < 0 || strings.Count(marked, "|") != 1 {
		t.Fatalf("document %q needs exactly one | for the cursor", marked)
	}
	return marked[:i] + marked[i+1:], i
}

// posOf returns the position of byte offset off of text in enc.
func posOf(text string, off int, enc Encoding) Position {
	return newLineIndex(text).position(off, enc)
}

func isErrCode(err *jsonrpc.Error, code int64) bool {
	var e *jsonrpc.Error
	return err != nil && errors.As(error(err), &e) && e.Code == code
}
