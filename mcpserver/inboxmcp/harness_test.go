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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/sqlite"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

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

type harness struct {
	t       testing.TB
	st      *sqlite.Store
	clock   *clock
	srv     *mcpserver.Server
	product *inboxmcp.Product
	url     string // the /mcp endpoint
	base    string
	tokens  map[string]string
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
	clk := &clock{t: demoNow}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "inbox.db"), store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seeded, err := inbox.Seed(ctx, st, demoNow)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, st: st, clock: clk, tokens: map[string]string{}, runner: &fakeRunner{}, planner: &fakePlanner{}}
	h.tokens["owner"] = seeded[0].Token
	h.tokens["viewer"] = seeded[1].Token
	mint := func(name, person, ws string, scopes ...string) {
		tok, err := st.CreateToken(ctx, store.NewToken{Person: person, Workspace: ws, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		h.tokens[name] = tok
	}
	mint("owner-ro", demo.Owner, demo.Workspace, "read")
	mint("sandbox", demo.Owner, demo.Sandbox, "read", "write")
	// A second owner of Finance, and a guest whose role grants nothing.
	if err := st.PutPerson(ctx, store.Person{ID: "per_carla", Organization: demo.Organization, Name: "Carla"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMembership(ctx, demo.Workspace, "per_carla", "owner"); err != nil {
		t.Fatal(err)
	}
	mint("owner2", "per_carla", demo.Workspace, "read", "write")
	if err := st.PutPerson(ctx, store.Person{ID: "per_guest", Organization: demo.Organization, Name: "Guest"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMembership(ctx, demo.Workspace, "per_guest", "guest"); err != nil {
		t.Fatal(err)
	}
	mint("guest", "per_guest", demo.Workspace, "read", "write")

	h.recv = &receiver{}
	h.recv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.recv.mu.Lock()
		h.recv.reqs = append(h.recv.reqs, recorded{header: r.Header.Clone(), body: b})
		h.recv.mu.Unlock()
		w.Write([]byte(`{"received":true}`))
	}))
	t.Cleanup(h.recv.srv.Close)

	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	h.base = hs.URL
	ibx, p, err := inboxmcp.New(inboxmcp.Options{
		Store:      st,
		Runner:     h.runner,
		HTTPClient: h.recv.srv.Client(),
		PublicURL:  hs.URL,
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
	h.srv, err = mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ibx}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", h.srv.HTTPHandler(mcpserver.HTTPOptions{Extra: map[string]http.Handler{inboxmcp.DownloadPath: p.DownloadHandler()}}))
	h.url = hs.URL + "/mcp"
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

type answerFunc = mcptest.Answer

// connect opens a go-sdk client over Streamable HTTP.
func (h *harness) connect(who, era string, answer answerFunc) *mcp.ClientSession {
	h.t.Helper()
	return mcptest.Connect(h.t, mcptest.HTTP(h.url, h.tokens[who]), era, answer)
}

// connectStdio opens a go-sdk client over an in-process stdio-like pipe.
func (h *harness) connectStdio(who, era string) *mcp.ClientSession {
	return h.connectStdioAnswering(who, era, nil)
}

// connectStdioAnswering is connectStdio with an elicitation handler.
func (h *harness) connectStdioAnswering(who, era string, answer answerFunc) *mcp.ClientSession {
	h.t.Helper()
	return mcptest.Connect(h.t, mcptest.Stdio(h.t, h.srv, h.tokens[who]), era, answer)
}

func (h *harness) call(cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	h.t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// structured decodes a tool result's structured content.
func structured(t *testing.T, r *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

func (h *harness) count(ws, kind string, q store.Query) int {
	h.t.Helper()
	q.Limit = 1000
	recs, err := h.st.ListRecords(context.Background(), ws, kind, q)
	if err != nil {
		h.t.Fatal(err)
	}
	return len(recs)
}
