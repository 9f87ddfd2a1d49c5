// Package engine is what the browser playground runs, compiled to
// WebAssembly: a language server session (package lsp, the one editors
// use) spoken over an in-memory stream, and the dry run of package plan.
// The WebAssembly main (playground/wasm) hands these to JavaScript; the
// package itself is plain Go, tested natively.
//
// NewSession starts a session; Session.Send passes it one JSON-RPC message
// and returns once the server has handled it, its answers delivered.
// PlanJSON plans a document with the inputs the page holds. Samples are the
// documents and inputs the page starts with.
package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/lsp"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
)

// Session is a language server session over an in-memory stream.
type Session struct {
	in      *feed
	deliver func(string)
	done    chan error
}

// NewSession starts a language server that publishes at once (no
// debounce: each change is compiled before Send returns) and hands each
// message it sends to deliver, in order.
func NewSession(deliver func(msg string), version string) *Session {
	s := &Session{in: newFeed(), deliver: deliver, done: make(chan error, 1)}
	srv := lsp.New(lsp.Options{Debounce: 0, Version: version})
	go func() {
		err := srv.Serve(s.in, &framer{deliver: deliver})
		close(s.in.stopped)
		s.done <- err
	}()
	return s
}

// Send passes msg (one JSON-RPC message) to the server and returns once the
// server has handled it and asks for the next one.
func (s *Session) Send(msg string) {
	s.in.push(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(msg), msg))
}

// Close ends the stream; the server stops.
func (s *Session) Close() error {
	s.in.close()
	return <-s.done
}

// feed is the server's input: messages pushed one at a time. push returns
// once the server has read everything and asks for more, which the server
// does only after it has handled the message (answers and diagnostics
// included).
type feed struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
	more   chan struct{} // a message arrived (or the feed closed)
	idle   chan struct{} // the server read all and waits
	// stopped is closed when the server has stopped reading for good.
	stopped chan struct{}
}

func newFeed() *feed {
	return &feed{more: make(chan struct{}, 1), idle: make(chan struct{}, 1), stopped: make(chan struct{})}
}

func (f *feed) Read(p []byte) (int, error) {
	for {
		f.mu.Lock()
		if f.buf.Len() > 0 {
			n, _ := f.buf.Read(p)
			f.mu.Unlock()
			return n, nil
		}
		if f.closed {
			f.mu.Unlock()
			return 0, io.EOF
		}
		f.mu.Unlock()
		select {
		case f.idle <- struct{}{}:
		default:
		}
		<-f.more
	}
}

func (f *feed) push(frame string) {
	f.mu.Lock()
	f.buf.WriteString(frame)
	f.mu.Unlock()
	// Forget an idle signal from before this message.
	select {
	case <-f.idle:
	default:
	}
	select {
	case f.more <- struct{}{}:
	default:
	}
	select {
	case <-f.idle:
	case <-f.stopped:
	}
}

func (f *feed) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	select {
	case f.more <- struct{}{}:
	default:
	}
}

// framer reads the server's framed output and delivers each message body.
type framer struct {
	deliver func(string)
	buf     []byte
}

func (w *framer) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		head, rest, ok := bytes.Cut(w.buf, []byte("\r\n\r\n"))
		if !ok {
			return len(p), nil
		}
		length := -1
		for _, line := range strings.Split(string(head), "\r\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
				length, _ = strconv.Atoi(strings.TrimSpace(value))
			}
		}
		if length < 0 {
			return 0, fmt.Errorf("engine: a message from the server has no Content-Length")
		}
		if len(rest) < length {
			return len(p), nil
		}
		w.deliver(string(rest[:length]))
		w.buf = append(w.buf[:0], rest[length:]...)
	}
}

// Inputs are what the page plans a document with.
type Inputs struct {
	// EML is the sample e-mail; empty for none.
	EML []byte `json:"-"`
	// SecretNames lists the workspace's secret names (one per line or
	// comma-separated); empty means not known.
	SecretNames string `json:"secret_names"`
	// Facts is a JSON object of facts without the kobana. prefix; empty
	// for none.
	Facts string `json:"facts"`
	// Responses are example responses in any form plan.ParseResponses
	// reads; empty for none.
	Responses string `json:"responses"`
	// Now is kobana.now (RFC 3339); empty is the current time.
	Now string `json:"now"`
}

// Result is PlanJSON's answer.
type Result struct {
	Plan *plan.Plan `json:"plan,omitempty"`
	// Text is the plan as kobana plan prints it.
	Text string `json:"text,omitempty"`
	// Problems are inputs that could not be used, each saying which and
	// why; the plan is made without them.
	Problems []string `json:"problems"`
}

// PlanJSON plans doc with in and returns Result as JSON.
func PlanJSON(doc string, in Inputs) string {
	res := Result{Problems: []string{}}
	var pin plan.Inputs
	if strings.TrimSpace(in.SecretNames) != "" {
		names, problems := plan.ParseSecretNames([]byte(in.SecretNames))
		pin.SecretNames = names
		if pin.SecretNames == nil {
			pin.SecretNames = []string{}
		}
		for _, p := range problems {
			res.Problems = append(res.Problems, "secret names: "+p)
		}
	}
	if strings.TrimSpace(in.Facts) != "" {
		facts, err := parseFacts(in.Facts)
		if err != nil {
			res.Problems = append(res.Problems, "facts: "+err.Error())
		} else {
			pin.Facts = facts
		}
	}
	if strings.TrimSpace(in.Responses) != "" {
		rs, err := plan.ParseResponses([]byte(in.Responses))
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
		} else {
			pin.Responses = rs
		}
	}
	if len(in.EML) > 0 {
		data := in.EML
		msg, err := eml.New(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			res.Problems = append(res.Problems, "e-mail: "+err.Error())
		} else {
			defer msg.Close()
			pin.Email = msg
		}
	}
	if in.Now != "" {
		t, err := time.Parse(time.RFC3339Nano, in.Now)
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("now: %q is not an RFC 3339 time", in.Now))
		} else {
			pin.Now = t
		}
	}
	res.Plan = plan.Make(context.Background(), []byte(doc), pin)
	var text strings.Builder
	if res.Plan.Valid {
		plan.WriteText(&text, res.Plan)
	} else {
		text.WriteString("the document does not validate: nothing would be sent\n")
		for _, d := range res.Plan.Diagnostics {
			text.WriteString("  " + d.String() + "\n")
		}
	}
	res.Text = text.String()
	out, err := json.Marshal(res)
	if err != nil {
		return `{"problems":["the plan could not be encoded"]}`
	}
	return string(out)
}

// parseFacts reads a JSON object of fact strings, refusing keys the
// language does not know and kobana.now, which the plan stamps.
func parseFacts(s string) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("want a JSON object {\"email_id\": \"em_42\", …}")
	}
	facts := make(map[string]string, len(raw))
	for k, v := range raw {
		var val string
		if err := json.Unmarshal(v, &val); err != nil {
			return nil, fmt.Errorf("the value of %q must be a string", k)
		}
		if err := resolve.CheckFact(k, val); err != nil {
			return nil, err
		}
		facts[k] = val
	}
	return facts, nil
}

// CompileLoop compiles doc n times and returns the number of diagnostics
// of the last compilation: the page times it to compare the compiler in
// the browser with the native one.
func CompileLoop(doc string, n int) int {
	b := []byte(doc)
	var ds compile.Diagnostics
	for range n {
		_, ds = compile.Compile(b, compile.Options{})
	}
	return len(ds)
}

// Sample is a document the page offers, with the inputs to plan it with.
type Sample struct {
	Name      string `json:"name"`
	Title     string `json:"title"`
	Document  string `json:"document"`
	Facts     string `json:"facts"`
	Responses string `json:"responses"`
	Secrets   string `json:"secret_names"`
}

// Samples are the documents the page offers, the complete example first.
func Samples() []Sample {
	names := "FINANCE_TOKEN\nFINANCE_API_URL\nSLACK_WEBHOOK_URL\n"
	return []Sample{
		{Name: "payable", Title: "Create a payable, attach the invoice and notify (the complete example)", Document: examples.Payable,
			Facts: examples.PayableFacts, Responses: examples.PayableResponses, Secrets: names},
		{Name: "attachment-multipart", Title: "Upload the first attachment as a file", Document: examples.AttachmentMultipart,
			Facts: examples.PayableFacts, Secrets: names},
		{Name: "attachment-base64", Title: "Send the first attachment as base64 in JSON", Document: examples.AttachmentBase64,
			Facts: examples.PayableFacts, Secrets: names},
	}
}

// SampleEmail is the e-mail the page plans with unless another is chosen.
func SampleEmail() (name string, data []byte) {
	return examples.InvoiceEmailName, []byte(examples.InvoiceEmail)
}
