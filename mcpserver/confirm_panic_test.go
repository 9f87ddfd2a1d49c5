package mcpserver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// panickyLedger is a store whose ledger panics while armed.
type panickyLedger struct {
	*sqlite.Store
	armed atomic.Bool
}

func (l *panickyLedger) Consume(ctx context.Context, nonce string, expires time.Time) error {
	if l.armed.CompareAndSwap(true, false) {
		panic(panicSecret)
	}
	return l.Store.Consume(ctx, nonce, expires)
}

// A panic in a confirmation's store call (which runs in a goroutine of its
// own, so that a stuck store does not hold the answer) is that call's
// error: confirmation_unavailable, nothing run, the panic reported on
// panics.MCP with its stack. The next call is confirmed and runs.
func TestConfirmationStorePanicIsUnavailable(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	ledger := &panickyLedger{Store: e.st}
	ledger.armed.Store(true)
	heard := listenPanics(t)
	url := serve(t, ledger, e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"}))
	cs := mcptest.Connect(t, mcptest.HTTP(url, e.tokens["owner"]), mcptest.Modern, mcptest.Yes)
	before := panics.Count(panics.MCP)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n3"}})
	if err != nil || !res.IsError || mcptest.ErrorCode(res) != mcpserver.CodeConfirmationUnavailable {
		t.Fatalf("got %s %v, want confirmation_unavailable", textOf(res), err)
	}
	if e.toy.runs.Load() != 0 {
		t.Fatal("the tool ran without a recorded confirmation")
	}
	if got := panics.Count(panics.MCP) - before; got != 1 || !heard.has("confirmation store call") {
		t.Fatalf("%d panics counted on the MCP surface (at the confirmation store call: %v), want 1 there", got, heard.has("confirmation store call"))
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n3"}})
	if err != nil || res.IsError {
		t.Fatalf("the call after the panic: %s %v, want it run", textOf(res), err)
	}
	if e.toy.runs.Load() != 1 {
		t.Fatalf("the tool ran %d times after the panic, want 1", e.toy.runs.Load())
	}
}
