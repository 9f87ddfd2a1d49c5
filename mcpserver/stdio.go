package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioDrainLimit bounds how long the end of a stdio client's input waits
// for the answers to the requests read before it.
var stdioDrainLimit = 10 * time.Second

// inflight tracks the requests a stdio client sent that the server has not
// answered yet, by the id the SDK answers them with: a second request with
// the id of one still unanswered is refused, the end of the client's input
// waits for them (`printf 'REQ1\nREQ2\n' | kobana serve -stdio` answers
// both, then exits), and the answers to a batch's requests are gathered
// into one array.
type inflight struct {
	ctx     context.Context
	mu      sync.Mutex
	pending map[string]*batch // request id → its batch (nil: none)
	idle    chan struct{}     // closed and replaced whenever pending empties
}

// batch gathers the answers to the requests of one JSON-RPC batch.
type batch struct {
	waiting int               // requests not answered yet
	answers []json.RawMessage // answers so far, the input's errors first
}

func newInflight(ctx context.Context) *inflight {
	return &inflight{ctx: ctx, pending: map[string]*batch{}, idle: make(chan struct{})}
}

// add notes request k, of batch b (nil: none); false when a request with
// that id is still unanswered.
func (f *inflight) add(k string, b *batch) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.pending[k]; ok {
		return false
	}
	f.pending[k] = b
	if b != nil {
		b.waiting++
	}
	return true
}

// done notes that request k needs no more waiting for, answered by answer
// (nil: cancelled, never answered). It returns what to write: answer
// itself, a batch's array once its last request is answered, or nothing.
func (f *inflight) done(k string, answer []byte) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.pending[k]
	if !ok {
		return answer
	}
	delete(f.pending, k)
	if len(f.pending) == 0 {
		close(f.idle)
		f.idle = make(chan struct{})
	}
	if b == nil {
		return answer
	}
	if answer != nil {
		b.answers = append(b.answers, bytes.Clone(answer))
	}
	b.waiting--
	return b.flush()
}

// sealed is called once every message of batch b was read: it returns the
// array to write when nothing in b waits for an answer.
func (f *inflight) sealed(b *batch) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return b.flush()
}

// flush is the array of b's answers once none is awaited; nil before, or
// when b had only notifications (JSON-RPC answers those with nothing).
func (b *batch) flush() []byte {
	if b.waiting > 0 || len(b.answers) == 0 {
		return nil
	}
	out, _ := json.Marshal(b.answers)
	b.answers = nil
	return out
}

// drain waits until every request read has been answered, ctx ends, or
// stdioDrainLimit passes.
func (f *inflight) drain() {
	limit := time.NewTimer(stdioDrainLimit)
	defer limit.Stop()
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
		case <-limit.C:
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

// stdioInput is the client's input, handed to the SDK one valid message a
// line. What is no valid JSON-RPC message is answered here and never
// reaches the SDK, whose connection would end on it or answer it with
// another id: -32700 for a line that is not JSON; -32600 Invalid Request
// for JSON that is no message (see checkMessage), an id the SDK cannot
// echo exactly (1.5, beyond ±2^53), the id of a request still unanswered, a
// line longer than mcp.DefaultMaxLineLength, or a batch where the protocol
// has none. The error carries the message's id when it has a usable one,
// else null, and the server keeps serving the lines that follow, as the
// official TypeScript SDK does.
//
// Batches exist on 2024-11-05 and 2025-03-26 sessions only: their
// messages are handed to the SDK one by one and their answers gathered into
// one array (stdioOutput), with the errors of the batch's invalid members.
// At the end of the input it waits for the answers to the requests read
// (at most stdioDrainLimit) before reporting the end.
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

// batchVersions are the protocol versions with JSON-RPC batches.
var batchVersions = []string{"2024-11-05", "2025-03-26"}

// noteInitialize remembers the version an initialize request asks for.
func (r *stdioInput) noteInitialize(raw []byte) {
	var m struct {
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) == nil {
		r.requested = m.Params.ProtocolVersion
	}
}

// batches says whether the session takes batches: its protocol version, as
// far as the input can tell before the server answers (the one initialize
// settled on, else the one it asked for, which the server grants when it
// knows it), is one that had them.
func (r *stdioInput) batches() bool {
	v := r.out.protocol()
	if v == "" {
		v = r.requested
	}
	return slices.Contains(batchVersions, v)
}

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
		r.out.send(errorAnswer(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is longer than %d bytes", r.line, mcp.DefaultMaxLineLength)))
	case len(line) == 0:
	case !json.Valid(line):
		r.out.send(errorAnswer(nil, codeParseError, fmt.Sprintf("Parse error: line %d is not JSON", r.line)))
	case line[0] == '[':
		r.batch(line)
	default:
		m, err := r.admit(line, nil)
		if err != nil {
			r.out.send(err.answer())
			break
		}
		r.pass(line, m)
	}
	r.skipping, r.partial = false, r.partial[:0]
}

// admit checks one message, of batch b (nil: none), and notes it when it
// is a request; an *invalid says why it is refused.
func (r *stdioInput) admit(raw []byte, b *batch) (message, *invalid) {
	m, err := checkMessage(raw)
	if err != nil {
		e := err.(*invalid)
		e.msg = fmt.Sprintf("%s (line %d)", e.msg, r.line)
		return m, e
	}
	if _, err := jsonrpc.DecodeMessage(raw); err != nil {
		return m, &invalid{code: codeInvalidRequest, id: m.id, msg: fmt.Sprintf("Invalid Request: line %d is not a JSON-RPC 2.0 message the server can read", r.line)}
	}
	if b != nil && m.method == "initialize" {
		return m, &invalid{code: codeInvalidRequest, id: m.id, msg: "Invalid Request: initialize must not be part of a batch"}
	}
	if m.kind == kindRequest && !r.f.add(m.key, b) {
		// Not the id: the answer to the request using it carries that one.
		return m, &invalid{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the id of the request on line %d is the id of a request not answered yet", r.line)}
	}
	return m, nil
}

// pass hands one admitted message to the SDK.
func (r *stdioInput) pass(raw []byte, m message) {
	switch m.method {
	case "initialize":
		r.noteInitialize(raw)
	case "notifications/cancelled":
		// A cancelled request is answered by nobody: it is no longer
		// waited for.
		var c struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &c) == nil {
			if _, k, why := checkID(c.Params.RequestID); why == "" {
				if out := r.f.done(k, nil); out != nil {
					r.out.send(out)
				}
			}
		}
	}
	r.ready = append(append(r.ready, raw...), '\n')
}

// batch serves a line that is a JSON-RPC batch.
func (r *stdioInput) batch(line []byte) {
	if !r.batches() {
		r.out.send(errorAnswer(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is a batch; JSON-RPC batches exist on protocol 2025-03-26 and 2024-11-05 sessions only", r.line)))
		return
	}
	var members []json.RawMessage
	if json.Unmarshal(line, &members) != nil || len(members) == 0 {
		r.out.send(errorAnswer(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is an empty batch", r.line)))
		return
	}
	b := &batch{}
	for _, raw := range members {
		raw = bytes.TrimSpace(raw)
		m, err := r.admit(raw, b)
		if err != nil {
			b.answers = append(b.answers, err.answer())
			continue
		}
		r.pass(raw, m)
	}
	if out := r.f.sealed(b); out != nil {
		r.out.send(out)
	}
}

// stdioOutput is the server's output: the SDK's lines and the input's
// errors, one whole line per write. Each answer of the SDK is noted (the
// request no longer waited for), an error answer made one a client can
// read (see fixAnswer), and an answer to a batch's request held until the
// batch's array is complete. It notes the protocol version initialize
// settled on.
type stdioOutput struct {
	out   io.WriteCloser
	f     *inflight
	lines lines

	mu      sync.Mutex
	err     error // the first write error
	version string
}

func newStdioOutput(out io.WriteCloser, f *inflight) *stdioOutput {
	w := &stdioOutput{out: out, f: f}
	w.lines.fn = w.route
	return w
}

func (w *stdioOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines.feed(p)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// Close closes the output.
func (w *stdioOutput) Close() error { return w.out.Close() }

// route writes one line of the SDK (under mu).
func (w *stdioOutput) route(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != nil {
		w.write(line) // a request or notification of the server's own
		return
	}
	if m.Result != nil && m.Result.ProtocolVersion != "" {
		w.version = m.Result.ProtocolVersion
	}
	line = fixAnswer(line)
	if _, k, why := checkID(m.ID); why == "" {
		line = w.f.done(k, line)
	}
	if line != nil {
		w.write(line)
	}
}

// write writes one line (under mu).
func (w *stdioOutput) write(line []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.out.Write(append(bytes.Clone(line), '\n'))
}

// send writes a line of the input's own.
func (w *stdioOutput) send(line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.write(line)
}

// protocol is the version initialize settled on; empty before.
func (w *stdioOutput) protocol() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version
}
