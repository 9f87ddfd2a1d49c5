package billing_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Reads over the in-process transport, the cost a client sees minus HTTP.
func BenchmarkResourceRead(b *testing.B) {
	e := newEnvWith(b, envOptions{})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := e.Server.Connect(ctx, e.Tokens["viewer"], st)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, uri := range []string{"kobana://billing/schemas/invoices", "kobana://billing/customers/cus_acme", "kobana://billing/invoices/inv_1004", "kobana://billing/invoices/inv_1004/pdf", "kobana://billing/nfes/nfe_0010/pdf", "kobana://billing/nfes/nfe_0010/xml"} {
		b.Run(uri[len("kobana://billing/"):], func(b *testing.B) {
			for b.Loop() {
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
