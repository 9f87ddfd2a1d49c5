package mcptest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Exchange is one run of EveryMessageKind: a protocol era, a transport, and
// the first holder's session on them, whose every message is checked.
type Exchange struct {
	T   *testing.T
	Era string
	// Session is the checked session.
	Session *mcp.ClientSession
	env     *Env
	via     string
}

// As connects another holder of the Env's tokens over the same transport
// and era (checked, but not counted in the kinds seen).
func (x *Exchange) As(who string, answer Answer) *mcp.ClientSession {
	x.T.Helper()
	return Connect(x.T, x.transport(who), x.Era, answer)
}

func (x *Exchange) transport(who string) mcp.Transport {
	if x.via == "http" {
		return HTTP(x.env.URL, x.env.Tokens[who])
	}
	return Stdio(x.T, x.env.Server, x.env.Tokens[who])
}

// Call calls a tool on cs and returns its result, a tool error included.
func (x *Exchange) Call(cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	x.T.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		x.T.Fatalf("%s: %v", tool, err)
	}
	return res
}

// WantCode checks that res failed with the error code, or succeeded when
// code is "".
func (x *Exchange) WantCode(res *mcp.CallToolResult, code string) {
	x.T.Helper()
	if got := ErrorCode(res); got != code {
		x.T.Errorf("got %q (%s), want %s", got, TextOf(res), code)
	}
}

// EveryMessageKind runs exercise on each era, over HTTP and in process,
// with a session of who answering elicitations with answer, and then wants
// that session's Checker (which fails the test on any message outside the
// official schema) to have seen every kind of answer a product gives:
// lists, tool results and tool errors, reads, prompts, completions,
// JSON-RPC errors (-32602), and per era input_required results (2026-07-28)
// or initialize and -32002 (2025). The listings are fetched before
// exercise runs; exercise brings the rest.
func EveryMessageKind(t *testing.T, e *Env, who string, answer Answer, exercise func(x *Exchange)) {
	for _, era := range Eras {
		for _, via := range []string{"http", "stdio"} {
			t.Run(era+"/"+via, func(t *testing.T) {
				x := &Exchange{T: t, Era: era, env: e, via: via}
				cs, check := ConnectChecked(t, x.transport(who), era, answer)
				x.Session = cs
				if _, err := List(context.Background(), cs); err != nil {
					t.Fatal(err)
				}
				exercise(x)
				seen := check.Seen()
				want := []string{"ListToolsResult", "ListResourcesResult", "ListResourceTemplatesResult", "ListPromptsResult",
					"CallToolResult", "CallToolResult isError", "ReadResourceResult", "GetPromptResult", "CompleteResult", "error -32602"}
				if era == Modern {
					want = append(want, "InputRequiredResult")
				} else {
					want = append(want, "InitializeResult", "error -32002")
				}
				for _, kind := range want {
					if seen[kind] == 0 {
						t.Errorf("no %s was checked; seen %v", kind, seen)
					}
				}
			})
		}
	}
}

// Snapshots compares what each of roles sees of the Env's server (see
// Snapshot), connected in process on the 2025 era, with
// dir/<role>.json.
func Snapshots(t *testing.T, e *Env, dir string, roles ...string) {
	for _, role := range roles {
		t.Run(role, func(t *testing.T) {
			cs := Connect(t, Stdio(t, e.Server, e.Tokens[role]), Legacy, nil)
			Snapshot(t, cs, filepath.Join(dir, role+".json"))
		})
	}
}
