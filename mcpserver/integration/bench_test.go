package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// benchTarget is one server (framework + Inbox) over one store.
type benchTarget struct {
	name  string
	url   string
	token string
}

func benchServer(b *testing.B, name string, st store.Store) benchTarget {
	b.Helper()
	ctx := context.Background()
	seeded, err := inboxdemo.Load(ctx, st, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	b.Cleanup(hs.Close)
	ibx, p, err := inboxmcp.New(inboxmcp.Options{Store: st, PublicURL: hs.URL})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ibx}})
	if err != nil {
		b.Fatal(err)
	}
	mux.Handle("/", srv.HTTPHandler(mcpserver.HTTPOptions{Extra: map[string]http.Handler{inboxmcp.DownloadPath: p.DownloadHandler()}}))
	return benchTarget{name: name, url: hs.URL + "/mcp", token: seeded[0].Token}
}

// benchTargets serves the demo data from the embedded store and from
// PostgreSQL, side by side.
func benchTargets(b *testing.B) []benchTarget {
	b.Helper()
	ctx := context.Background()
	lite, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	dsn, _ := pgtest.SchemaDSN(b, "bench", "bench")
	pgs, err := pg.Open(ctx, dsn, pg.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pgs.Close() })
	return []benchTarget{benchServer(b, "sqlite", lite), benchServer(b, "postgres", pgs)}
}

// rpc posts one 2026-07-28 JSON-RPC request and decodes its result.
func rpc(c *http.Client, t benchTarget, method string, params map[string]any) (map[string]any, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": formCaps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", t.url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, _ := params["name"].(string); name != "" {
		req.Header.Set("Mcp-Name", name)
	} else if uri, _ := params["uri"].(string); uri != "" {
		req.Header.Set("Mcp-Name", uri)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Error != nil || out.Result == nil {
		return nil, fmt.Errorf("%s: HTTP %d %s", method, resp.StatusCode, raw)
	}
	return out.Result, nil
}

// BenchmarkResourcesRead reads one demo e-mail (kobana://inbox/emails/…)
// through the whole server (bearer token, permissions, record) over HTTP,
// from the embedded store and from PostgreSQL in the same run.
func BenchmarkResourcesRead(b *testing.B) {
	params := func() map[string]any { return map[string]any{"uri": "kobana://inbox/emails/eml_inv_00"} }
	for _, t := range benchTargets(b) {
		if r, err := rpc(http.DefaultClient, t, "resources/read", params()); err != nil || r["contents"] == nil {
			b.Fatalf("%s: %v %v", t.name, r, err)
		}
		b.Run(t.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := rpc(http.DefaultClient, t, "resources/read", params()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
		b.Run(t.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := rpc(http.DefaultClient, t, "resources/read", params()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkConfirmRoundTrip is the confirmation of a destructive tool
// (inboxes_add_recipient): the question (key read, state signed) and the
// confirmed call (key looked up, state verified, nonce consumed in the
// ledger, tool run), per operation.
func BenchmarkConfirmRoundTrip(b *testing.B) {
	call := func(state string) map[string]any {
		p := map[string]any{"name": "inboxes_add_recipient", "arguments": map[string]any{"id": "ibx_invoices", "recipient": "@bench.example.com"}}
		if state != "" {
			p["requestState"] = state
			p["inputResponses"] = yesAnswer
		}
		return p
	}
	roundTrip := func(t benchTarget) error {
		asked, err := rpc(http.DefaultClient, t, "tools/call", call(""))
		if err != nil {
			return err
		}
		state, _ := asked["requestState"].(string)
		if state == "" {
			return fmt.Errorf("no question: %v", asked)
		}
		done, err := rpc(http.DefaultClient, t, "tools/call", call(state))
		if err != nil {
			return err
		}
		if done["isError"] == true || done["resultType"] == "input_required" {
			return fmt.Errorf("confirmed call: %v", done)
		}
		return nil
	}
	for _, t := range benchTargets(b) {
		if err := roundTrip(t); err != nil {
			b.Fatalf("%s: %v", t.name, err)
		}
		b.Run(t.name, func(b *testing.B) {
			for b.Loop() {
				if err := roundTrip(t); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "confirmations/s")
		})
		b.Run(t.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := roundTrip(t); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "confirmations/s")
		})
	}
}

// BenchmarkConsume is the ledger alone: recording fresh nonces from
// concurrent callers, embedded store and PostgreSQL side by side.
func BenchmarkConsume(b *testing.B) {
	ctx := context.Background()
	lite, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "ledger.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	dsn, _ := pgtest.SchemaDSN(b, "ledger", "bench")
	pgs, err := pg.Open(ctx, dsn, pg.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pgs.Close() })
	exp := time.Now().Add(5 * time.Minute)
	var seq atomicCounter // across the runs of each sub-benchmark: every nonce is fresh
	for _, t := range []struct {
		name string
		st   store.Ledger
	}{{"sqlite", lite}, {"postgres", pgs}} {
		b.Run(t.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := t.st.Consume(ctx, fmt.Sprintf("nonce-%d", seq.next()), exp); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "nonces/s")
		})
	}
}

type atomicCounter struct{ n atomic.Int64 }

func (c *atomicCounter) next() int64 { return c.n.Add(1) }
