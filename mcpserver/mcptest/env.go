package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

// Clock is a settable clock for the store, the framework and the products
// of a test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Env is a server under test, reached as the holders of its tokens reach
// it: over HTTP at URL, or in process. Its methods fail T on what is not a
// tool's own answer (a transport or protocol error).
type Env struct {
	T      testing.TB
	Server *mcpserver.Server
	// Base is the HTTP server's root URL; URL is its MCP endpoint.
	Base, URL string
	// Tokens are the bearer tokens by the name tests call their holder by
	// (usually the role: "owner", "viewer"…).
	Tokens map[string]string
}

// Serve starts an HTTP server for the test, calls build with its root URL
// (what a product is told as its public URL) for the MCP server and the
// handlers to serve beside it (mcpserver.HTTPOptions.Extra), and serves
// them until the test ends. It returns the Env with tokens.
func Serve(t testing.TB, tokens map[string]string, build func(base string) (*mcpserver.Server, map[string]http.Handler)) *Env {
	t.Helper()
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	srv, extra := build(hs.URL)
	mux.Handle("/", srv.HTTPHandler(mcpserver.HTTPOptions{Extra: extra}))
	return &Env{T: t, Server: srv, Base: hs.URL, URL: hs.URL + "/mcp", Tokens: tokens}
}

// Connect opens a checked session (see Connect) over HTTP as who, speaking
// era; a non-nil answer makes the client declare elicitation support.
func (e *Env) Connect(who, era string, answer Answer) *mcp.ClientSession {
	e.T.Helper()
	return Connect(e.T, HTTP(e.URL, e.Tokens[who]), era, answer)
}

// ConnectStdio is Connect over an in-process connection, as stdio.
func (e *Env) ConnectStdio(who, era string, answer Answer) *mcp.ClientSession {
	e.T.Helper()
	return Connect(e.T, Stdio(e.T, e.Server, e.Tokens[who]), era, answer)
}

// Call calls a tool and returns its result, a tool error included.
func (e *Env) Call(cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	e.T.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		e.T.Fatalf("%s: %v", tool, err)
	}
	return res
}

// OK calls a tool that must succeed and decodes its structured result into
// out, when out is not nil (zeroed first: a field the result leaves out
// does not keep an old value).
func (e *Env) OK(cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	e.T.Helper()
	r := e.Call(cs, tool, args)
	if r.IsError {
		e.T.Fatalf("%s %v: %s", tool, args, TextOf(r))
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero()
		Structured(e.T, r, out)
	}
}

// Fails calls a tool that must fail with the error code, and returns the
// error's text.
func (e *Env) Fails(cs *mcp.ClientSession, tool string, args map[string]any, code string) string {
	e.T.Helper()
	r := e.Call(cs, tool, args)
	if !r.IsError || !strings.HasPrefix(TextOf(r), code+":") {
		e.T.Fatalf("%s %v: got %s, want error %s", tool, args, TextOf(r), code)
	}
	return TextOf(r)
}

// RawCall sends one 2026-07-28 tools/call as who as plain JSON-RPC over
// HTTP (see ToolCall) and returns its result.
func (e *Env) RawCall(who, tool string, args, caps map[string]any, state string, responses map[string]any) map[string]any {
	e.T.Helper()
	return e.ToolCall(who, tool, args, caps, state, responses).Must(e.T)
}

// ToolCall is the 2026-07-28 tools/call of who to the Env's endpoint.
func (e *Env) ToolCall(who, tool string, args, caps map[string]any, state string, responses map[string]any) ToolCall {
	return ToolCall{URL: e.URL, Token: e.Tokens[who], Tool: tool, Args: args, Caps: caps, State: state, Responses: responses}
}

// Structured decodes a tool result's structured content into v.
func Structured(t testing.TB, r *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

// Member adds person to a workspace with role (creating the person) and
// returns a new token of theirs with scopes.
func Member(t testing.TB, st store.Identity, p store.Person, workspace string, role store.Role, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	if err := st.PutPerson(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMembership(ctx, workspace, p.ID, role); err != nil {
		t.Fatal(err)
	}
	return Token(t, st, p.ID, workspace, scopes...)
}

// Token returns a new token of a member of a workspace with scopes.
func Token(t testing.TB, st store.Identity, person, workspace string, scopes ...string) string {
	t.Helper()
	tok, err := st.CreateToken(context.Background(), store.NewToken{Person: person, Workspace: workspace, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Count is the number of records of a kind in a workspace matching q, all
// of them (up to store.MaxLimit).
func Count(t testing.TB, st store.Records, workspace, kind string, q store.Query) int {
	t.Helper()
	q.Limit = store.MaxLimit
	recs, err := st.ListRecords(context.Background(), workspace, kind, q)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// DemoTokens returns tokens of the demo organization (package demo) by the
// names tests use: owner and viewer (the demo's, as Seed returned them),
// owner-ro (the owner, read only), sandbox (the owner on the Sandbox
// workspace), owner2 (a second owner of Finance, Carla) and guest (a member
// of Finance whose role grants nothing).
func DemoTokens(t testing.TB, st store.Identity, seeded []demo.Token) map[string]string {
	t.Helper()
	if len(seeded) < 2 {
		t.Fatalf("the demo seed returned %d tokens, want the owner's and the viewer's", len(seeded))
	}
	return map[string]string{
		"owner":    seeded[0].Token,
		"viewer":   seeded[1].Token,
		"owner-ro": Token(t, st, demo.Owner, demo.Workspace, "read"),
		"sandbox":  Token(t, st, demo.Owner, demo.Sandbox, "read", "write"),
		"owner2":   Member(t, st, store.Person{ID: "per_carla", Organization: demo.Organization, Name: "Carla"}, demo.Workspace, "owner", "read", "write"),
		"guest":    Member(t, st, store.Person{ID: "per_guest", Organization: demo.Organization, Name: "Guest"}, demo.Workspace, "guest", "read", "write"),
	}
}

// DemoOperator makes Olga an operator of the demo's Finance workspace and
// returns a read-write token of hers.
func DemoOperator(t testing.TB, st store.Identity) string {
	t.Helper()
	return Member(t, st, store.Person{ID: "per_olga", Organization: demo.Organization, Name: "Olga"}, demo.Workspace, "operator", "read", "write")
}
