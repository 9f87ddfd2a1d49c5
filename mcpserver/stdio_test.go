package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// eofReader is a client's input that tells when it has ended.
type eofReader struct {
	r     io.Reader
	once  sync.Once
	ended chan struct{}
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.ended) })
	}
	return n, err
}

func (e *eofReader) Close() error { return nil }

// bufferCloser is a syncbuf.Buffer that is also an io.Closer.
type bufferCloser struct{ syncbuf.Buffer }

func (*bufferCloser) Close() error { return nil }

// serveLines serves input on stdio and returns the lines written, checking
// each against the official schema of version.
func serveLines(t *testing.T, srv *mcpserver.Server, token, version string, input []string, in *eofReader) []string {
	t.Helper()
	if in == nil {
		in = &eofReader{ended: make(chan struct{})}
	}
	in.r = strings.NewReader(strings.Join(input, "\n") + "\n")
	out := &bufferCloser{}
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { done <- srv.ServeStdio(ctx, token, in, out) }()
	if err := <-done; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("ServeStdio only returned when its context ended")
	}
	check := mcptest.NewChecker(version)
	for _, line := range input {
		check.Sent([]byte(line))
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if err := check.Received(sc.Bytes()); err != nil {
			t.Error(err)
		}
	}
	return lines
}

func meta(version string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
}

// `printf 'REQ1\nREQ2\n' | kobana serve -stdio` answers both, then exits.
func TestStdioAnswersWhatItReadBeforeTheInputEnded(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	t.Run("2026-07-28", func(t *testing.T) {
		lines := serveLines(t, e.srv, e.tokens["owner"], mcptest.Modern, []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta(mcptest.Modern) + `}}`,
			`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"kobana://toy/notes/n1",` + meta(mcptest.Modern) + `}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes_get","arguments":{"id":"n2"},` + meta(mcptest.Modern) + `}}`,
		}, nil)
		ids := answered(t, lines)
		for _, id := range []string{"1", "2", "3"} {
			if !ids[id] {
				t.Errorf("request %s was not answered; output:\n%s", id, strings.Join(lines, "\n"))
			}
		}
	})
	t.Run("2025-11-25", func(t *testing.T) {
		lines := serveLines(t, e.srv, e.tokens["owner"], mcptest.Legacy, []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		}, nil)
		ids := answered(t, lines)
		if !ids["1"] || !ids["2"] {
			t.Errorf("initialize and tools/list were not both answered; output:\n%s", strings.Join(lines, "\n"))
		}
	})
}

// A request still running when the input ends is answered before
// ServeStdio returns.
func TestStdioWaitsForARunningRequest(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	in := &eofReader{ended: make(chan struct{})}
	release := in.ended // the tool finishes only once the input has ended
	type slowOut struct {
		Done bool `json:"done"`
	}
	slow := &mcpserver.Product{Name: "slow", Policy: mcpserver.Policy{DeclineCode: "declined"}, Tools: []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "slow_run", Description: "Takes its time.", Access: mcpserver.Read},
			func(ctx context.Context, c *mcpserver.Caller, in struct{}) (slowOut, error) {
				select {
				case <-release:
				case <-ctx.Done():
					return slowOut{}, ctx.Err()
				}
				return slowOut{Done: true}, nil
			}),
	}}
	srv, err := mcpserver.New(mcpserver.Options{Store: e.st, Products: []*mcpserver.Product{slow}})
	if err != nil {
		t.Fatal(err)
	}
	lines := serveLines(t, srv, e.tokens["owner"], mcptest.Modern, []string{
		`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow_run","arguments":{},` + meta(mcptest.Modern) + `}}`,
	}, in)
	if len(lines) != 1 || !strings.Contains(lines[0], `"done":true`) {
		t.Fatalf("the running call was not answered: %q", lines)
	}
}

// answered returns the ids of the responses among lines.
func answered(t *testing.T, lines []string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, l := range lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if m.Method == "" {
			ids[strings.Trim(string(m.ID), `"`)] = true
		}
	}
	return ids
}

// A line that is not JSON-RPC gets a JSON-RPC error with id null (or its
// id, when it has a usable one) — -32700
// when it is not JSON, -32600 when it is JSON but not a message (or a batch
// where the protocol has none, or a line too long) — and the server keeps
// serving the lines after it (before, the session ended on it: kobana serve
// -stdio exited 1 and later requests were lost). The error never echoes the
// line.
func TestStdioAnswersGarbageAndKeepsServing(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	garbage := []string{
		`this is not JSON {{{ secret-looking-text`,
		`{"id":7,"method":"tools/list"}`,
		`[]`,
		`42`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 17<<20) + `"}}`,
		``,
	}
	wantCodes := []int{-32700, -32600, -32600, -32600, -32600}
	for _, tc := range []struct {
		era           string
		before, after []string
		codes         []int
		last          string
	}{
		{mcptest.Legacy, []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, // no batches on 2025-06-18 and later
		}, []string{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}, append([]int{-32600}, wantCodes...), "2"},
		{mcptest.Modern, nil, []string{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta(mcptest.Modern) + `}}`}, wantCodes, "3"},
	} {
		input := append(append(append([]string{}, tc.before...), garbage...), tc.after...)
		in := strings.NewReader(strings.Join(input, "\n") + "\n")
		out := &bufferCloser{}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := e.srv.ServeStdio(ctx, e.tokens["owner"], io.NopCloser(in), out)
		cancel()
		if err != nil {
			t.Fatalf("%s: ServeStdio: %v (it ended on the garbage)", tc.era, err)
		}
		check := mcptest.NewChecker(tc.era)
		var codes []int
		var answers []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s: an answer that is not a JSON object: %.200s", tc.era, l)
			}
			if m.Error != nil && (string(m.ID) == "null" || string(m.ID) == "7") {
				// JSON-RPC 2.0 wants id null when the id cannot be told
				// (the MCP schema knows no such answer, so it is not
				// checked); the message without "jsonrpc" has one.
				codes = append(codes, m.Error.Code)
				if strings.Contains(m.Error.Message, "secret-looking-text") || strings.Contains(m.Error.Message, "xxxx") || len(m.Error.Message) > 500 {
					t.Errorf("%s: the error echoes the line: %.300s", tc.era, m.Error.Message)
				}
				continue
			}
			if err := check.Received([]byte(l)); err != nil {
				t.Error(err)
			}
			answers = append(answers, l)
		}
		if fmt.Sprint(codes) != fmt.Sprint(tc.codes) {
			t.Errorf("%s: errors with id null %v, want %v; output:\n%.2000s", tc.era, codes, tc.codes, out.String())
		}
		if !answered(t, answers)[tc.last] {
			t.Errorf("%s: the request after the garbage was not answered; output:\n%.2000s", tc.era, out.String())
		}
	}
}
