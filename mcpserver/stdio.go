package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inflight counts the requests a stdio client sent that the server has not
// answered yet, so that the end of the client's input does not drop them:
// `printf 'REQ1\nREQ2\n' | kobana serve -stdio` answers both, then exits.
//
// It watches the bytes, not the SDK's connection: the reader side sees each
// request line before the server can read it, the writer side each answer
// as the server writes it.
type inflight struct {
	ctx     context.Context
	mu      sync.Mutex
	pending map[string]int // request id → requests read and not yet answered
	idle    chan struct{}  // closed and replaced whenever pending empties
}

func newInflight(ctx context.Context) *inflight {
	return &inflight{ctx: ctx, pending: map[string]int{}, idle: make(chan struct{})}
}

// idKey is a JSON-RPC id as a map key: 1 and 1.0 are the same id, "1"
// another.
func idKey(raw json.RawMessage) (string, bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return "", false
	}
	return fmt.Sprintf("%T:%v", v, v), true
}

type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"` // notifications/cancelled
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// messagesOf decodes one line: a message or a batch. Lines that are not
// JSON-RPC yield nothing (the server answers those with id null).
func messagesOf(line []byte) []wireMessage {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var batch []wireMessage
		if json.Unmarshal(line, &batch) != nil {
			return nil
		}
		return batch
	}
	var m wireMessage
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []wireMessage{m}
}

// read notes the requests of a line the client sent; a cancelled request
// is answered by nobody, so it is no longer waited for.
func (f *inflight) read(line []byte) {
	for _, m := range messagesOf(line) {
		switch {
		case m.Method == "notifications/cancelled":
			if k, ok := idKey(m.Params.RequestID); ok {
				f.done(k)
			}
		case m.Method != "":
			if k, ok := idKey(m.ID); ok {
				f.mu.Lock()
				f.pending[k]++
				f.mu.Unlock()
			}
		}
	}
}

// wrote notes the answers of a line the server wrote.
func (f *inflight) wrote(line []byte) {
	for _, m := range messagesOf(line) {
		if m.Method != "" || (m.Result == nil && m.Error == nil) {
			continue // a request or notification of the server's own
		}
		if k, ok := idKey(m.ID); ok {
			f.done(k)
		}
	}
}

// done notes that request k needs no more waiting for.
func (f *inflight) done(k string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending[k] > 1 {
		f.pending[k]--
	} else {
		delete(f.pending, k)
	}
	if len(f.pending) == 0 {
		close(f.idle)
		f.idle = make(chan struct{})
	}
}

// drain waits until every request read has been answered, or ctx ends.
func (f *inflight) drain() {
	for {
		f.mu.Lock()
		n, idle := len(f.pending), f.idle
		f.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-idle:
		case <-f.ctx.Done():
			return
		}
	}
}

// lines calls fn with each complete line of the bytes fed to it.
type lines struct {
	partial []byte
	fn      func([]byte)
}

func (l *lines) feed(p []byte) {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial, p...)
			return
		}
		if len(l.partial) > 0 {
			l.fn(append(l.partial, p[:i]...))
			l.partial = l.partial[:0]
		} else {
			l.fn(p[:i])
		}
		p = p[i+1:]
	}
}

// stdioInput is the client's input, handed to the SDK a line at a time.
// A line that is not JSON-RPC is answered here, with a JSON-RPC error whose
// id is null (-32700 when it is not JSON, -32600 when it is JSON but no
// message, a batch where the protocol has none, or longer than
// mcp.DefaultMaxLineLength), and never reaches the SDK, whose connection
// would end on it: the server keeps serving the lines that follow, as the
// official TypeScript SDK does. At the end of the input it waits for the
// answers to the requests read before reporting the end.
type stdioInput struct {
	in  io.ReadCloser
	f   *inflight
	out *stdioOutput

	chunk   []byte
	ready   []byte // valid lines, for the SDK to read
	partial []byte // the line being read
	// skipping says an over-long line is being discarded up to its
	// newline; line counts the lines read, for the errors.
	skipping bool
	line     int
	eof      bool
	// requested is the protocol version the client's initialize asked
	// for.
	requested string
}

// noBatches is the first protocol version without JSON-RPC batches.
const noBatches = "2025-06-18"

// noteInitialize remembers the version an initialize request in line asks
// for.
func (r *stdioInput) noteInitialize(line []byte) {
	if !bytes.Contains(line, []byte(`"initialize"`)) {
		return
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) == nil && m.Method == "initialize" {
		r.requested = m.Params.ProtocolVersion
		if r.requested == "" {
			r.requested = noBatches // answered with the server's latest
		}
	}
}

// version is the protocol version of the session, as far as the input
// can tell before the server answers: the one initialize settled on, else
// the one it asked for (the server answers a version it does not know with
// its latest, which has no batches either). Empty before initialize.
func (r *stdioInput) version() string {
	if v := r.out.protocol(); v != "" {
		return v
	}
	if r.requested != "" && !slices.Contains(batchVersions, r.requested) && r.requested < noBatches {
		return noBatches
	}
	return r.requested
}

// batchVersions are the protocol versions before noBatches.
var batchVersions = []string{"2024-11-05", "2025-03-26"}

func (r *stdioInput) Read(p []byte) (int, error) {
	for len(r.ready) == 0 {
		if r.eof {
			r.f.drain()
			return 0, io.EOF
		}
		if r.chunk == nil {
			r.chunk = make([]byte, 32<<10)
		}
		n, err := r.in.Read(r.chunk)
		r.feed(r.chunk[:n])
		if err == io.EOF {
			if len(r.partial) > 0 || r.skipping {
				r.complete()
			}
			r.eof = true
		} else if err != nil {
			if len(r.ready) > 0 {
				break // what was read first
			}
			return 0, err
		}
	}
	n := copy(p, r.ready)
	r.ready = r.ready[n:]
	return n, nil
}

// Close closes the client's input.
func (r *stdioInput) Close() error { return r.in.Close() }

// feed splits p into lines.
func (r *stdioInput) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !r.skipping {
			if len(r.partial)+len(part) > mcp.DefaultMaxLineLength {
				r.skipping, r.partial = true, r.partial[:0]
			} else {
				r.partial = append(r.partial, part...)
			}
		}
		if i < 0 {
			return
		}
		r.complete()
		p = p[i+1:]
	}
}

// complete judges the line read so far.
func (r *stdioInput) complete() {
	r.line++
	line := bytes.TrimSpace(r.partial)
	switch {
	case r.skipping:
		r.out.reject(jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is longer than %d bytes", r.line, mcp.DefaultMaxLineLength))
	case len(line) == 0:
	default:
		if code, msg := r.judge(line); code != 0 {
			r.out.reject(code, msg)
			break
		}
		r.f.read(line)
		r.noteInitialize(line)
		r.ready = append(append(r.ready, line...), '\n')
	}
	r.skipping, r.partial = false, r.partial[:0]
}

// judge says why a line is not a JSON-RPC message or batch the SDK takes
// (code 0 when it is one).
func (r *stdioInput) judge(line []byte) (code int, msg string) {
	if !json.Valid(line) {
		return jsonrpc.CodeParseError, fmt.Sprintf("Parse error: line %d is not JSON", r.line)
	}
	if line[0] != '[' {
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is not a JSON-RPC 2.0 message (%s)", r.line, clip(err.Error(), 200))
		}
		return 0, ""
	}
	if v := r.version(); v >= noBatches {
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is a batch; protocol %s has no JSON-RPC batches", r.line, v)
	}
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is an empty batch", r.line)
	}
	for i, m := range batch {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: message %d of the batch on line %d is not a JSON-RPC 2.0 message (%s)", i, r.line, clip(err.Error(), 200))
		}
	}
	return 0, ""
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stdioOutput is the server's output: the SDK's lines and the errors of
// the input's, one whole line per write. It notes the answers (inflight)
// and the protocol version initialize settled on.
type stdioOutput struct {
	io.WriteCloser
	lines lines

	mu      sync.Mutex
	version string
}

func (w *stdioOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.WriteCloser.Write(p)
	w.lines.feed(p[:n])
	return n, err
}

// reject answers a line that is not JSON-RPC.
func (w *stdioOutput) reject(code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Write(append(b, '\n'))
}

// noteVersion remembers the protocol version of an initialize answer in
// line.
func (w *stdioOutput) noteVersion(line []byte) {
	if !bytes.Contains(line, []byte(`"protocolVersion"`)) {
		return
	}
	var m struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) == nil && m.Result.ProtocolVersion != "" {
		w.version = m.Result.ProtocolVersion // under mu: called from Write
	}
}

// protocol is the version initialize settled on; empty before.
func (w *stdioOutput) protocol() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version
}
