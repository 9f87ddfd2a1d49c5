package inboxmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/sqlite"
)

// receiver is a webhook endpoint that records what it got.
type receiver struct {
	mu   sync.Mutex
	reqs []recorded
	srv  *httptest.Server
}

type recorded struct {
	header http.Header
	body   []byte
}

func (r *receiver) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.reqs) }

// harness is Inbox over a store seeded with the demo, served over HTTP
// (mcptest.Env: connect, call…), with fakes for the executor and the
// planner and a receiver the demo webhooks point at.
type harness struct {
	*mcptest.Env
	st      *sqlite.Store
	clock   *mcptest.Clock
	product *inboxmcp.Product
	recv    *receiver
	runner  *fakeRunner
	planner *fakePlanner
}

// fakeRunner stands in for the executor: it records its inputs and returns
// a run record in the executor's shape.
type fakeRunner struct {
	mu     sync.Mutex
	inputs []inbox.WorkflowInput
	status string
}

func (f *fakeRunner) RunWorkflow(ctx context.Context, in inbox.WorkflowInput) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	st := f.status
	if st == "" {
		st = "succeeded"
	}
	return json.RawMessage(`{"status":"` + st + `","steps":[{"index":0,"label":"Create payable","state":"` + st + `","request":{"method":"POST","url":"https://erp.example.com/api/payables","headers":{"authorization":"Bearer [redacted secrets.ERP_TOKEN]"},"body":"{}"},"response":{"status":201,"headers":{},"body":"{}"}}]}`), nil
}

var demoNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func newHarness(t testing.TB) *harness {
	t.Helper()
	ctx := context.Background()
	clk := mcptest.NewClock(demoNow)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "inbox.db"), store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seeded, err := inboxdemo.Seed(ctx, st, demoNow)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{st: st, clock: clk, runner: &fakeRunner{}, planner: &fakePlanner{}}

	h.recv = &receiver{}
	h.recv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.recv.mu.Lock()
		h.recv.reqs = append(h.recv.reqs, recorded{header: r.Header.Clone(), body: b})
		h.recv.mu.Unlock()
		w.Write([]byte(`{"received":true}`))
	}))
	t.Cleanup(h.recv.srv.Close)

	h.Env = mcptest.Serve(t, mcptest.DemoTokens(t, st, seeded), func(base string) (*mcpserver.Server, map[string]http.Handler) {
		ibx, p, err := inboxmcp.New(inboxmcp.Options{
			Store:      st,
			Runner:     h.runner,
			HTTPClient: h.recv.srv.Client(),
			PublicURL:  base,
			Now:        clk.Now,
			Plan:       h.planner.plan,
			Lint: func(doc []byte) (json.RawMessage, bool) {
				if json.Valid(doc) {
					return json.RawMessage(`[]`), true
				}
				return json.RawMessage(`[{"code":"invalid_json","message":"not JSON"}]`), false
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		h.product = p
		srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ibx}, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		return srv, map[string]http.Handler{inboxmcp.DownloadPath: p.DownloadHandler()}
	})
	// Point the demo webhooks at the local receiver.
	for _, id := range []string{"whk_erp", "whk_chat"} {
		rec, err := st.GetRecord(ctx, demo.Workspace, inbox.KindWebhook, id)
		if err != nil {
			t.Fatal(err)
		}
		var wh inbox.Webhook
		json.Unmarshal(rec.Data, &wh)
		wh.URL = h.recv.srv.URL + "/hooks/" + id
		rec.Data, _ = json.Marshal(wh)
		if err := st.PutRecord(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

var (
	httpClient = mcptest.BearerClient
	eras       = mcptest.Eras
	yes        = mcptest.Yes
	textOf     = mcptest.TextOf
	rpcCode    = mcptest.RPCCode
)

var structured = mcptest.Structured

func (h *harness) count(ws, kind string, q store.Query) int {
	h.T.Helper()
	return mcptest.Count(h.T, h.st, ws, kind, q)
}
