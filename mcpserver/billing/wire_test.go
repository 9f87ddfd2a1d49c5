package billing_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// newKit is Billing alone (without Inbox) over the harness's store, with a
// token for each role (owner, operator, viewer): what the snapshot and wire
// tests look at.
func newKit(t *testing.T) *mcptest.Env {
	t.Helper()
	e := newEnvWith(t, envOptions{})
	e.Tokens["operator"] = mcptest.DemoOperator(t, e.st)
	return e.Env
}

// TestEveryMessageKindMatchesTheOfficialSchema sends Billing one request of
// each kind on both eras, over HTTP and in process (mcptest.EveryMessageKind
// checks every answer against the official schema and that each kind was
// seen), text and blob reads included.
func TestEveryMessageKindMatchesTheOfficialSchema(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	mcptest.EveryMessageKind(t, k, "owner", mcptest.Decline, func(x *mcptest.Exchange) {
		t, cs := x.T, x.Session
		x.WantCode(x.Call(cs, "billing_invoices_get", map[string]any{"id": "inv_1003"}), "")
		x.WantCode(x.Call(cs, "billing_customers_list", map[string]any{}), "")
		x.WantCode(x.Call(cs, "billing_invoices_get", map[string]any{"id": "inv_nope"}), "not_found")
		x.WantCode(x.Call(cs, "billing_invoices_get", map[string]any{}), "invalid_arguments")
		if x.Era == mcptest.Modern {
			// Asked, and declined: nothing changes.
			x.WantCode(x.Call(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1011"}), billing.DeclineCode)
		} else {
			// Billing runs destructive tools directly on 2025; a paid
			// invoice cannot be cancelled.
			x.WantCode(x.Call(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1001"}), "invalid_state")
		}
		nfes := x.Call(cs, "billing_nfes_list", map[string]any{"status": "authorized"})
		list, _ := nfes.StructuredContent.(map[string]any)["nfes"].([]any)
		if len(list) == 0 {
			t.Fatalf("no authorized NF-e in the demo: %s", mcptest.TextOf(nfes))
		}
		nfe := list[0].(map[string]any)["id"].(string)
		for _, uri := range []string{"kobana://billing/organization", "kobana://billing/schemas", "kobana://billing/invoices/inv_1003",
			"kobana://billing/invoices/inv_1003/pdf", "kobana://billing/nfes/" + nfe + "/pdf", "kobana://billing/nfes/" + nfe + "/xml"} {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Errorf("read %s: %v", uri, err)
				continue
			}
			if c := res.Contents[0]; (c.Blob != nil) != (c.MIMEType == "application/pdf") {
				t.Errorf("read %s: %s with blob=%v", uri, c.MIMEType, c.Blob != nil)
			}
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "kobana://billing/invoices/inv_nope/pdf"}); err == nil {
			t.Error("reading an unknown invoice's PDF succeeded")
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "customer_overview", Arguments: map[string]string{"customer_id": "cus_acme"}}); err != nil {
			t.Error(err)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "customer_overview"}); err == nil {
			t.Error("a missing required argument was accepted")
		}
		for _, c := range []struct {
			ref *mcp.CompleteReference
			arg mcp.CompleteParamsArgument
		}{
			{&mcp.CompleteReference{Type: "ref/resource", URI: "kobana://billing/invoices/{id}"}, mcp.CompleteParamsArgument{Name: "id", Value: "inv_10"}},
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "customer_overview"}, mcp.CompleteParamsArgument{Name: "customer_id", Value: "cus_"}},
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "monthly_billing_summary"}, mcp.CompleteParamsArgument{Name: "month", Value: "2026"}},
		} {
			if res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: c.ref, Argument: c.arg}); err != nil || len(res.Completion.Values) == 0 {
				t.Errorf("complete %v %v: %v %v", c.ref, c.arg, res, err)
			}
		}
		x.WantCode(x.Call(x.As("viewer", nil), "billing_invoices_cancel", map[string]any{"id": "inv_1011"}), "permission_denied")
	})
}
