package billing_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// demoNow anchors the demo: 2026-11-20 09:00 in Brasília.
var demoNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// otherOrg is a second organization with its own Billing records.
const (
	otherOrg      = "org_other"
	otherCustomer = "cus_other_only"
)

// env is Billing (with Inbox, unless left out) over a store seeded with the
// demo, served over HTTP (mcptest.Env: connect, call, ok, fails…).
type env struct {
	*mcptest.Env
	st    *sqlite.Store
	path  string // the store's file
	clock *mcptest.Clock
}

type envOptions struct {
	maxResourceBytes int
	withInbox        bool
}

func newEnv(t *testing.T) *env { return newEnvWith(t, envOptions{withInbox: true}) }

func newEnvWith(t testing.TB, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	clk := mcptest.NewClock(demoNow)
	path := filepath.Join(t.TempDir(), "billing.db")
	st, err := sqlite.Open(ctx, path, store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seeded, err := inboxdemo.Load(ctx, st, demoNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := billing.SeedDemo(ctx, st, demoNow); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tokens := mcptest.DemoTokens(t, st, seeded)
	// Another organization, with its own owner and one customer.
	must(st.PutOrganization(ctx, store.Organization{ID: otherOrg, Name: "Other Org"}))
	must(st.PutWorkspace(ctx, store.Workspace{ID: "ws_other", Organization: otherOrg, Name: "Other"}))
	tokens["other"] = mcptest.Member(t, st, store.Person{ID: "per_otto", Organization: otherOrg, Name: "Otto"}, "ws_other", "owner", "read", "write")
	b, _ := json.Marshal(billing.Customer{ID: otherCustomer, Name: "Only In Other Org", CreatedAt: demoNow, UpdatedAt: demoNow})
	must(st.PutRecord(ctx, store.Record{Workspace: otherOrg, Kind: billing.KindCustomer, ID: otherCustomer, Created: demoNow, Data: b}))

	e := &env{st: st, path: path, clock: clk}
	e.Env = mcptest.Serve(t, tokens, func(string) (*mcpserver.Server, map[string]http.Handler) {
		bp, _, err := billing.New(billing.Options{Store: st, Now: clk.Now, MaxResourceBytes: o.maxResourceBytes})
		must(err)
		products := []*mcpserver.Product{bp}
		if o.withInbox {
			ip, _, err := inboxmcp.New(inboxmcp.Options{Store: st, Now: clk.Now})
			must(err)
			products = append(products, ip)
		}
		srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: products, Now: clk.Now})
		must(err)
		return srv, nil
	})
	return e
}

// replica returns an env whose server runs over another handle on the same
// store file, with its own Billing product, as a second replica would.
func (e *env) replica() *env {
	e.T.Helper()
	st, err := sqlite.Open(context.Background(), e.path, store.Options{Now: e.clock.Now})
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { st.Close() })
	r := *e
	r.st = st
	r.Env = mcptest.Serve(e.T, e.Tokens, func(string) (*mcpserver.Server, map[string]http.Handler) {
		bp, _, err := billing.New(billing.Options{Store: st, Now: e.clock.Now})
		if err != nil {
			e.T.Fatal(err)
		}
		srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{bp}, Now: e.clock.Now})
		if err != nil {
			e.T.Fatal(err)
		}
		return srv, nil
	})
	return &r
}

var (
	eras    = mcptest.Eras
	accept  = mcptest.Yes
	textOf  = mcptest.TextOf
	rpcCode = mcptest.RPCCode
)

// stored reads a record straight from the store.
func (e *env) stored(org, kind, id string, v any) bool {
	e.T.Helper()
	rec, err := e.st.GetRecord(context.Background(), org, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		e.T.Fatal(err)
	}
	if err := json.Unmarshal(rec.Data, v); err != nil {
		e.T.Fatal(err)
	}
	return true
}

func (e *env) invoice(id string) billing.Invoice {
	e.T.Helper()
	var inv billing.Invoice
	if !e.stored(demo.Organization, billing.KindInvoice, id, &inv) {
		e.T.Fatalf("invoice %s not in the store", id)
	}
	return inv
}

func (e *env) count(org, kind string, q store.Query) int {
	e.T.Helper()
	return mcptest.Count(e.T, e.st, org, kind, q)
}

var (
	formCaps      = mcptest.FormCaps
	yesAnswer     = mcptest.YesAnswer
	resultText    = mcptest.ResultText
	inputRequired = mcptest.InputRequired
)
