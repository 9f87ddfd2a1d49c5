package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
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

// flush passes on a last line without a newline.
func (l *lines) flush() {
	if len(l.partial) > 0 {
		l.fn(l.partial)
		l.partial = nil
	}
}

// drainingReader is the client's input: at its end it waits for the
// answers to the requests read before reporting the end.
type drainingReader struct {
	io.ReadCloser
	f     *inflight
	lines lines
}

func (r *drainingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.lines.feed(p[:n])
	if err == io.EOF {
		r.lines.flush()
		if n > 0 {
			// Let the server read these bytes first; the end comes next.
			return n, nil
		}
		r.f.drain()
	}
	return n, err
}

// countingWriter is the server's output.
type countingWriter struct {
	io.WriteCloser
	lines lines
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.lines.feed(p[:n])
	return n, err
}
