package mcptest

import (
	"strings"
	"testing"
)

// exchange sends one request through a Checker and returns what it says of
// the server's answer.
func exchange(version, request, answer string) error {
	c := NewChecker(version)
	c.Sent([]byte(request))
	return c.Received([]byte(answer))
}

func TestCheckerAcceptsValidMessages(t *testing.T) {
	cases := []struct{ name, version, request, answer string }{
		{"legacy read", Legacy,
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"kobana://x/1"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"kobana://x/1","mimeType":"application/json","text":"{}"}]}}`},
		{"modern read", Modern,
			`{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"kobana://x/1"}}`,
			`{"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","cacheScope":"private","ttlMs":0,"contents":[{"uri":"kobana://x/1","blob":"AAEC"}]}}`},
		{"modern input required", Modern,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"ok?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}}}}}`},
		{"error", Modern,
			`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"x"}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown prompt"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := exchange(tc.version, tc.request, tc.answer); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCheckerRefusesWhatClientsRefuse(t *testing.T) {
	list := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}]}}`
	cases := []struct{ name, version, request, answer, want string }{
		{"modern read without resultType", Modern,
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"kobana://x/1"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"cacheScope":"private","ttlMs":0,"contents":[{"uri":"kobana://x/1","text":"{}"}]}}`,
			"resultType"},
		{"input required with null content", Modern,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s","content":null}}`,
			"no member content"},
		{"error code 0", Legacy,
			`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":0,"message":"session missing"}}`,
			"error code 0"},
		{"not JSON-RPC", Legacy,
			`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
			`{"id":4,"result":{}}`,
			"JSONRPCResultResponse"},
		{"contents without text or blob", Legacy,
			`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"kobana://x/1"}}`,
			`{"jsonrpc":"2.0","id":5,"result":{"contents":[{"uri":"kobana://x/1"}]}}`,
			"ReadResourceResult"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := exchange(tc.version, tc.request, tc.answer)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	t.Run("structured content against the listed outputSchema", func(t *testing.T) {
		for _, era := range []string{Legacy, Modern} {
			c := NewChecker(era)
			c.Sent([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			answer := list
			if era == Modern {
				answer = strings.Replace(list, `"tools":`, `"resultType":"complete","cacheScope":"private","ttlMs":0,"tools":`, 1)
			}
			if err := c.Received([]byte(answer)); err != nil {
				t.Fatal(err)
			}
			rt := ""
			if era == Modern {
				rt = `"resultType":"complete",`
			}
			for _, tc := range []struct{ result, want string }{
				{`{` + rt + `"content":[{"type":"text","text":"not_found: x"}],"isError":true,"structuredContent":{"error":"not_found"}}`, "outputSchema"},
				{`{` + rt + `"content":[{"type":"text","text":"{}"}]}`, "no structuredContent"},
				{`{` + rt + `"content":[{"type":"text","text":"not_found: x"}],"isError":true}`, ""},
				{`{` + rt + `"content":[{"type":"text","text":"{\"id\":\"a\"}"}],"structuredContent":{"id":"a"}}`, ""},
			} {
				c.Sent([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get"}}`))
				err := c.Received([]byte(`{"jsonrpc":"2.0","id":2,"result":` + tc.result + `}`))
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s %s: %v", era, tc.result, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("%s %s: got %v, want an error mentioning %q", era, tc.result, err, tc.want)
				}
			}
		}
	})
	t.Run("a listed schema that is no JSON Schema", func(t *testing.T) {
		c := NewChecker(Legacy)
		c.Sent([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		err := c.Received([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get","inputSchema":{"type":"object","properties":{"a":{"type":"strin"}}}}]}}`))
		if err == nil || !strings.Contains(err.Error(), "inputSchema is not a JSON Schema") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestCheckerFollowsServerSentEvents(t *testing.T) {
	c := NewChecker(Legacy)
	c.Sent([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	var got []error
	s := &sseChecker{check: c, report: func(err error) {
		if err != nil {
			got = append(got, err)
		}
	}}
	// One event split across reads, with a CRLF line end, and a bad one.
	for _, chunk := range []string{"event: message\r\ndata: {\"jsonrpc\":\"2.0\",", "\"id\":7,\"error\":{\"code\":0,\"message\":\"x\"}}\r\n\r\n", ": comment\n\n"} {
		s.feed([]byte(chunk))
	}
	if len(got) != 1 || got[0] == nil || !strings.Contains(got[0].Error(), "error code 0") {
		t.Fatalf("got %v, want one error-code-0 violation", got)
	}
}
