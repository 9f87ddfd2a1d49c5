package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
)

// FuzzStdioHostileLines serves a stdio session whose client sends, between
// a 2025-03-26 initialize and a last ping, lines made of the fuzzer's
// bytes: every line the server writes must be a JSON-RPC answer with an id
// member (or an array of them), no answer may carry an id twice, the last
// ping must be answered, and the session must end without error when the
// input does.
func FuzzStdioHostileLines(f *testing.F) {
	e := newEnv(f, mcpserver.Policy{DeclineCode: "user_declined"})
	for _, seed := range []string{
		`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes_get","arguments":{"id":"` + strings.Repeat(`\u0000`, 20) + `"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":5}}`,
		"[1,[],{}]\n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/list\"}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, lines string) {
		input := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` +
			"\n" + lines + "\n" + `{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n"
		out := &bufferCloser{}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.srv.ServeStdio(ctx, e.tokens["owner"], io.NopCloser(strings.NewReader(input)), out); err != nil {
			t.Fatalf("ServeStdio: %v\ninput: %q", err, lines)
		}
		if ctx.Err() != nil {
			t.Fatalf("ServeStdio only returned when its context ended; input: %q", lines)
		}
		ids := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var msgs []json.RawMessage
			if b := []byte(l); bytes.HasPrefix(b, []byte("[")) {
				if err := json.Unmarshal(b, &msgs); err != nil {
					t.Fatalf("a line that is no JSON array: %.300s", l)
				}
			} else {
				msgs = []json.RawMessage{b}
			}
			for _, raw := range msgs {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatalf("an answer that is no JSON object: %.300s\ninput: %q", raw, lines)
				}
				if _, ok := m["method"]; ok {
					continue
				}
				id, ok := m["id"]
				if !ok {
					t.Fatalf("an answer without an id member: %.300s\ninput: %q", raw, lines)
				}
				if e, ok := m["error"]; ok && bytes.Contains(e, []byte(`"code":0`)) {
					t.Errorf("an error with code 0: %.300s", raw)
				}
				if string(id) != "null" {
					ids[string(id)]++
				}
			}
		}
		for id, n := range ids {
			if n > 1 {
				t.Errorf("id %s answered %d times; input: %q\noutput:\n%.2000s", id, n, lines, out.String())
			}
		}
		if ids[`"last"`] != 1 {
			t.Errorf("the last ping was not answered; input: %q\noutput:\n%.2000s", lines, out.String())
		}
	})
}
