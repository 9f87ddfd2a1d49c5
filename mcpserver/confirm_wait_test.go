package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// expiringLedger is a store whose ledger waits for its context to end, as
// a locked database does, and records the deadline it was given.
type expiringLedger struct {
	*sqlite.Store
	mu        sync.Mutex
	deadlines []time.Time
	unbounded int
}

func (l *expiringLedger) Consume(ctx context.Context, nonce string, expires time.Time) error {
	l.mu.Lock()
	if d, ok := ctx.Deadline(); ok {
		l.deadlines = append(l.deadlines, d)
	} else {
		l.unbounded++
	}
	l.mu.Unlock()
	// The lock is never released: the wait ends with the context. (The
	// context is not waited for here: its expiry is what is simulated.)
	return context.DeadlineExceeded
}

// The ledger is asked with a deadline at most ConfirmationWait away, and a
// wait that expires answers confirmation_unavailable: nothing runs.
func TestConfirmationWaitsForTheLedgerAtMostTwoSeconds(t *testing.T) {
	if mcpserver.ConfirmationWait > 2*time.Second {
		t.Fatalf("ConfirmationWait is %v; the user must hear within 2 s", mcpserver.ConfirmationWait)
	}
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	ledger := &expiringLedger{Store: e.st}
	url := serve(t, ledger, e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"}))
	cs := mcptest.Connect(t, mcptest.HTTP(url, e.tokens["owner"]), mcptest.Modern, mcptest.Yes)
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n3"}})
	end := time.Now()
	if err != nil || !res.IsError || mcptest.ErrorCode(res) != mcpserver.CodeConfirmationUnavailable {
		t.Fatalf("got %s %v, want confirmation_unavailable", textOf(res), err)
	}
	if e.toy.runs.Load() != 0 {
		t.Fatal("the tool ran without a recorded confirmation")
	}
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	if ledger.unbounded > 0 || len(ledger.deadlines) != 1 {
		t.Fatalf("ledger calls: %d with a deadline, %d without; want one, with", len(ledger.deadlines), ledger.unbounded)
	}
	if d := ledger.deadlines[0]; d.Before(start) || d.After(end.Add(mcpserver.ConfirmationWait)) {
		t.Errorf("deadline %v is not within ConfirmationWait of the call (%v … %v)", d, start, end)
	}
}

// stuckStore is a store whose confirmation calls block until released,
// whatever their context says.
type stuckStore struct {
	*sqlite.Store
	release  chan struct{}
	stuckKey bool // SigningKey blocks too
}

func (s *stuckStore) Consume(ctx context.Context, nonce string, expires time.Time) error {
	<-s.release
	return s.Store.Consume(context.Background(), nonce, expires)
}

func (s *stuckStore) SigningKey(ctx context.Context, purpose string) (store.Key, error) {
	if s.stuckKey {
		<-s.release
	}
	return s.Store.SigningKey(context.Background(), purpose)
}

// A store that ignores deadlines does not hold the answer: it comes at
// ConfirmationWait (shortened here) while the store is still stuck.
func TestConfirmationDoesNotWaitForAStuckStore(t *testing.T) {
	for _, stuckKey := range []bool{false, true} {
		name := "ledger"
		if stuckKey {
			name = "signing key"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
			st := &stuckStore{Store: e.st, release: make(chan struct{}), stuckKey: stuckKey}
			defer close(st.release)
			srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"})}})
			if err != nil {
				t.Fatal(err)
			}
			mcpserver.SetConfirmWait(srv, 50*time.Millisecond)
			url := serveServer(t, srv)
			cs := mcptest.Connect(t, mcptest.HTTP(url, e.tokens["owner"]), mcptest.Modern, mcptest.Yes)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n3"}})
			if err != nil || mcptest.ErrorCode(res) != mcpserver.CodeConfirmationUnavailable || !strings.Contains(textOf(res), "nothing was run") {
				t.Fatalf("got %s %v, want confirmation_unavailable", textOf(res), err)
			}
			if e.toy.runs.Load() != 0 {
				t.Fatal("the tool ran without a recorded confirmation")
			}
		})
	}
}

// serve serves one product over a store on a loopback HTTP server and
// returns the /mcp URL.
func serve(t *testing.T, st interface {
	store.Identity
	store.Keys
	store.Ledger
}, p *mcpserver.Product) string {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{p}})
	if err != nil {
		t.Fatal(err)
	}
	return serveServer(t, srv)
}

// serveServer serves srv on a loopback HTTP server and returns the /mcp URL.
func serveServer(t *testing.T, srv *mcpserver.Server) string {
	t.Helper()
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}
