package inboxmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// constantServer is the baseline: the same go-sdk server and handlers
// (stateless for 2026-07-28, stateful for 2025), answering one constant
// resource of the size of a demo e-mail, with no auth and no store.
func constantServer(b *testing.B, text string) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "constant", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "kobana://inbox/emails/eml_inv_00", Name: "email", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: text}}}, nil
		})
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	stateful := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
	b.Cleanup(hs.Close)
	return hs.URL
}

func BenchmarkResourcesReadEmailHTTP(b *testing.B) {
	h := newHarness(b)
	uri := "kobana://inbox/emails/eml_inv_00"
	first, err := h.connectB(b, h.URL, h.Tokens["viewer"], "2026-07-28").ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		b.Fatal(err)
	}
	constURL := constantServer(b, first.Contents[0].Text) + "/mcp"
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		for _, target := range []struct{ name, url, token string }{{"constant", constURL, ""}, {"inbox", h.URL, h.Tokens["viewer"]}} {
			b.Run(target.name+"/"+era, func(b *testing.B) {
				cs := h.connectB(b, target.url, target.token, era)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
			b.Run(target.name+"/"+era+"/parallel", func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					cs := h.connectB(b, target.url, target.token, era)
					for pb.Next() {
						if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		}
	}
}

func (h *harness) connectB(b *testing.B, url, token, era string) *mcp.ClientSession {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	hc := http.DefaultClient
	if token != "" {
		hc = httpClient(token)
	}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkReadEmailVsConstant interleaves one read from each server per
// iteration, so that both see the same machine load, and reports each
// server's requests per second and their ratio (goal: ratio ≥ 0.7).
func BenchmarkReadEmailVsConstant(b *testing.B) {
	h := newHarness(b)
	uri := "kobana://inbox/emails/eml_inv_00"
	first, err := h.connectB(b, h.URL, h.Tokens["viewer"], "2026-07-28").ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		b.Fatal(err)
	}
	constURL := constantServer(b, first.Contents[0].Text) + "/mcp"
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		b.Run(era, func(b *testing.B) {
			ctx := context.Background()
			constant := h.connectB(b, constURL, "", era)
			ours := h.connectB(b, h.URL, h.Tokens["viewer"], era)
			var tc, ti time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if _, err := constant.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := ours.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
					b.Fatal(err)
				}
				tc += t1.Sub(t0)
				ti += time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(n/tc.Seconds(), "constant-req/s")
			b.ReportMetric(n/ti.Seconds(), "inbox-req/s")
			b.ReportMetric(tc.Seconds()/ti.Seconds(), "ratio")
		})
	}
}
