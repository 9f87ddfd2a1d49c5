package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// 2025-era sessions are capped per token — a new session closes the
// token's oldest — and in all — beyond, initialize is refused with 503 and
// Retry-After — so that one client opening sessions without closing them
// cannot grow the server without bound (20,000 from one read-only token
// grew it to 350 MiB). Before, every initialize opened one more.
func TestSessionsAreCappedPerTokenAndInAll(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	hs := httptest.NewServer(e.srv.HTTPHandler(mcpserver.HTTPOptions{MaxSessionsPerToken: 3, MaxSessions: 5}))
	defer hs.Close()
	ctx := context.Background()
	open := func(token string) (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "caps", Version: "1"}, nil).Connect(ctx, mcptest.HTTP(hs.URL+"/mcp", token), &mcp.ClientSessionOptions{ProtocolVersion: mcptest.Legacy})
	}
	var owner []*mcp.ClientSession
	for i := range 4 {
		cs, err := open(e.tokens["owner-ro"])
		if err != nil {
			t.Fatalf("session %d of one token: %v", i, err)
		}
		defer cs.Close()
		owner = append(owner, cs)
	}
	// The fourth closed the first; the three others serve.
	if _, err := owner[0].ListTools(ctx, nil); err == nil {
		t.Error("the token's oldest session still serves after its fourth opened")
	}
	for i, cs := range owner[1:] {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Errorf("session %d: %v", i+1, err)
		}
	}
	if n := e.srv.OpenSessions(); n != 3 {
		t.Errorf("OpenSessions = %d, want 3", n)
	}
	// Two more tokens fill the server; the next initialize is refused.
	for _, tok := range []string{"viewer", "operator"} {
		cs, err := open(e.tokens[tok])
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
	}
	req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := httpClient(e.tokens["owner"]).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("initialize beyond the server's cap: %s (Retry-After %q), want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	// A session closed makes room.
	owner[1].Close()
	if err := testwait.Until(10*time.Second, func() error {
		if n := e.srv.OpenSessions(); n != 4 {
			return fmt.Errorf("%d sessions open", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := open(e.tokens["owner"])
	if err != nil {
		t.Fatalf("initialize once a session closed: %v", err)
	}
	cs.Close()
	// 2026-07-28 holds no session: it is never refused for the cap.
	modern := mcptest.Connect(t, mcptest.HTTP(hs.URL+"/mcp", e.tokens["owner"]), mcptest.Modern, nil)
	if _, err := modern.ListTools(ctx, nil); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("2026-07-28 at the cap: %v", err)
	}
}

// BenchmarkSessionMemory measures what one open 2025-era session costs the
// server: the live heap after b.N sessions are opened (initialize and
// notifications/initialized over HTTP, then left open), per session.
func BenchmarkSessionMemory(b *testing.B) {
	e := newEnv(b, mcpserver.Policy{DeclineCode: "user_declined"})
	hs := httptest.NewServer(e.srv.HTTPHandler(mcpserver.HTTPOptions{MaxSessionsPerToken: 1 << 20, MaxSessions: 1 << 20}))
	defer hs.Close()
	client, url := httpClient(e.tokens["owner-ro"]), hs.URL+"/mcp"
	mcptest.BenchmarkSessions(b, client, url)
	if n := e.srv.OpenSessions(); n != b.N {
		b.Fatalf("%d sessions open, want %d", n, b.N)
	}
}
