package inboxmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
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
// (mcptest.Env: connect, call…), with a processor that records what
// emails_reprocess hands it and a receiver the demo webhooks point at.
type harness struct {
	*mcptest.Env
	st      *sqlite.Store
	clock   *mcptest.Clock
	product *inboxmcp.Product
	recv    *receiver
	proc    *fakeProcessor
}

// fakeProcessor stands in for the pipeline's processor (whose processing
// the pipeline's tests check): it records the requests it is handed, and
// refuses an e-mail that does not exist, as the pipeline's does, or that
// refuse names.
type fakeProcessor struct {
	repo   inbox.Repo
	mu     sync.Mutex
	reqs   []inbox.ReprocessRequest
	refuse map[string]error // by e-mail id
}

func (f *fakeProcessor) Check(ctx context.Context, req inbox.ReprocessRequest) error {
	if _, err := f.repo.Emails.Get(ctx, req.Workspace, req.EmailID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refuse[req.EmailID]
}

func (f *fakeProcessor) Reprocess(ctx context.Context, req inbox.ReprocessRequest) (inbox.Reprocessed, error) {
	if err := f.Check(ctx, req); err != nil {
		return inbox.Reprocessed{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	return inbox.Reprocessed{EmailID: req.EmailID, Status: inbox.ReprocessQueued}, nil
}

func (f *fakeProcessor) requests() []inbox.ReprocessRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

var demoNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func newHarness(t testing.TB) *harness { return newHarnessWith(t, nil) }

// newHarnessWith is newHarness with the product's options changed by opts.
func newHarnessWith(t testing.TB, opts func(*inboxmcp.Options)) *harness {
	t.Helper()
	ctx := context.Background()
	clk := mcptest.NewClock(demoNow)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "inbox.db"), store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seeded, err := inboxdemo.Load(ctx, st, demoNow)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{st: st, clock: clk, proc: &fakeProcessor{repo: inbox.NewRepo(st), refuse: map[string]error{}}}

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
		o := inboxmcp.Options{
			Store:      st,
			Processor:  h.proc,
			HTTPClient: h.recv.srv.Client(),
			PublicURL:  base,
			Now:        clk.Now,
		}
		if opts != nil {
			opts(&o)
		}
		ibx, p, err := inboxmcp.New(o)
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
