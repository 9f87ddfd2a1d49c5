package billing_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/sqlite"
)

// testClock is a settable clock shared by the store, the framework and
// the product.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// demoNow anchors the demo: 2026-11-20 09:00 in Brasília.
var demoNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// otherOrg is a second organization with its own Billing records.
const (
	otherOrg      = "org_other"
	otherCustomer = "cus_other_only"
)

type env struct {
	t      testing.TB
	st     *sqlite.Store
	path   string // the store's file
	clock  *testClock
	srv    *mcpserver.Server
	url    string
	tokens map[string]string
}

type envOptions struct {
	maxResourceBytes int
	withInbox        bool
}

func newEnv(t *testing.T) *env { return newEnvWith(t, envOptions{withInbox: true}) }

func newEnvWith(t testing.TB, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	clk := &testClock{t: demoNow}
	path := filepath.Join(t.TempDir(), "billing.db")
	st, err := sqlite.Open(ctx, path, store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seeded, err := inbox.Seed(ctx, st, demoNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := billing.SeedDemo(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, path: path, clock: clk, tokens: map[string]string{"owner": seeded[0].Token, "viewer": seeded[1].Token}}
	mint := func(name, person, ws string, scopes ...string) {
		tok, err := st.CreateToken(ctx, store.NewToken{Person: person, Workspace: ws, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		e.tokens[name] = tok
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mint("owner-ro", demo.Owner, demo.Workspace, "read")
	mint("sandbox", demo.Owner, demo.Sandbox, "read", "write")
	must(st.PutPerson(ctx, store.Person{ID: "per_carla", Organization: demo.Organization, Name: "Carla"}))
	must(st.SetMembership(ctx, demo.Workspace, "per_carla", "owner"))
	mint("owner2", "per_carla", demo.Workspace, "read", "write")
	must(st.PutPerson(ctx, store.Person{ID: "per_guest", Organization: demo.Organization, Name: "Guest"}))
	must(st.SetMembership(ctx, demo.Workspace, "per_guest", "guest"))
	mint("guest", "per_guest", demo.Workspace, "read", "write")
	// Another organization, with its own owner and one customer.
	must(st.PutOrganization(ctx, store.Organization{ID: otherOrg, Name: "Other Org"}))
	must(st.PutWorkspace(ctx, store.Workspace{ID: "ws_other", Organization: otherOrg, Name: "Other"}))
	must(st.PutPerson(ctx, store.Person{ID: "per_otto", Organization: otherOrg, Name: "Otto"}))
	must(st.SetMembership(ctx, "ws_other", "per_otto", "owner"))
	mint("other", "per_otto", "ws_other", "read", "write")
	b, _ := json.Marshal(billing.Customer{ID: otherCustomer, Name: "Only In Other Org", CreatedAt: demoNow, UpdatedAt: demoNow})
	must(st.PutRecord(ctx, store.Record{Workspace: otherOrg, Kind: billing.KindCustomer, ID: otherCustomer, Created: demoNow, Data: b}))

	bp, _, err := billing.New(billing.Options{Store: st, Now: clk.Now, MaxResourceBytes: o.maxResourceBytes})
	must(err)
	products := []*mcpserver.Product{bp}
	if o.withInbox {
		ip, _, err := inboxmcp.New(inboxmcp.Options{Store: st, Now: clk.Now})
		must(err)
		products = append(products, ip)
	}
	e.srv, err = mcpserver.New(mcpserver.Options{Store: st, Products: products, Now: clk.Now})
	must(err)
	hs := httptest.NewServer(e.srv.HTTPHandler(mcpserver.HTTPOptions{}))
	t.Cleanup(hs.Close)
	e.url = hs.URL + "/mcp"
	return e
}

// replica returns an env whose server runs over another handle on the same
// store file, with its own Billing product, as a second replica would.
func (e *env) replica() *env {
	e.t.Helper()
	st, err := sqlite.Open(context.Background(), e.path, store.Options{Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	bp, _, err := billing.New(billing.Options{Store: st, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{bp}, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{}))
	e.t.Cleanup(hs.Close)
	r := *e
	r.st, r.srv, r.url = st, srv, hs.URL+"/mcp"
	return &r
}

var (
	eras    = mcptest.Eras
	accept  = mcptest.Yes
	textOf  = mcptest.TextOf
	rpcCode = mcptest.RPCCode
)

type answerFunc = mcptest.Answer

// connect opens a go-sdk client over Streamable HTTP; a non-nil answer
// makes the client declare elicitation support.
func (e *env) connect(who, era string, answer answerFunc) *mcp.ClientSession {
	e.t.Helper()
	return mcptest.Connect(e.t, mcptest.HTTP(e.url, e.tokens[who]), era, answer)
}

// connectStdio opens a client over an in-process connection, as stdio.
func (e *env) connectStdio(who, era string) *mcp.ClientSession {
	e.t.Helper()
	return mcptest.Connect(e.t, mcptest.Stdio(e.t, e.srv, e.tokens[who]), era, nil)
}

func (e *env) call(cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result.
func (e *env) ok(cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	e.t.Helper()
	r := e.call(cs, tool, args)
	if r.IsError {
		e.t.Fatalf("%s %v: %s", tool, args, textOf(r))
	}
	if out != nil {
		// Decode into a zeroed value: omitted fields must not keep old values.
		reflect.ValueOf(out).Elem().SetZero()
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s: decoding %s: %v", tool, b, err)
		}
	}
}

// fails calls a tool that must fail with the given error code.
func (e *env) fails(cs *mcp.ClientSession, tool string, args map[string]any, code string) string {
	e.t.Helper()
	r := e.call(cs, tool, args)
	if !r.IsError || !strings.HasPrefix(textOf(r), code+":") {
		e.t.Fatalf("%s %v: got %s, want error %s", tool, args, textOf(r), code)
	}
	return textOf(r)
}

// stored reads a record straight from the store.
func (e *env) stored(org, kind, id string, v any) bool {
	e.t.Helper()
	rec, err := e.st.GetRecord(context.Background(), org, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(rec.Data, v); err != nil {
		e.t.Fatal(err)
	}
	return true
}

func (e *env) invoice(id string) billing.Invoice {
	e.t.Helper()
	var inv billing.Invoice
	if !e.stored(demo.Organization, billing.KindInvoice, id, &inv) {
		e.t.Fatalf("invoice %s not in the store", id)
	}
	return inv
}

func (e *env) count(org, kind string, q store.Query) int {
	e.t.Helper()
	q.Limit = 1000
	recs, err := e.st.ListRecords(context.Background(), org, kind, q)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(recs)
}

// rawCall sends one 2026-07-28 tools/call as plain JSON-RPC over HTTP.
func (e *env) rawCall(who, tool string, args, caps map[string]any, state string, responses map[string]any) map[string]any {
	e.t.Helper()
	return mcptest.ToolCall{URL: e.url, Token: e.tokens[who], Tool: tool, Args: args, Caps: caps, State: state, Responses: responses}.Must(e.t)
}

var (
	formCaps      = mcptest.FormCaps
	yesAnswer     = mcptest.YesAnswer
	resultText    = mcptest.ResultText
	inputRequired = mcptest.InputRequired
)
