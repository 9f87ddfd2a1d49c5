package billing_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/sqlite"
)

// kit is Billing alone with its demo data (the demo organization's people
// come with Inbox's seed), built from the public constructors: what the
// snapshot and wire tests look at.
type kit struct {
	srv    *mcpserver.Server
	url    string
	tokens map[string]string // owner, operator, viewer
}

func newKit(t *testing.T) *kit {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "billing.db"), store.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seeded, err := inbox.Seed(ctx, st, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := billing.SeedDemo(ctx, st, now); err != nil {
		t.Fatal(err)
	}
	k := &kit{tokens: map[string]string{"owner": seeded[0].Token, "viewer": seeded[1].Token}}
	if err := st.PutPerson(ctx, store.Person{ID: "per_olga", Organization: demo.Organization, Name: "Olga"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMembership(ctx, demo.Workspace, "per_olga", "operator"); err != nil {
		t.Fatal(err)
	}
	if k.tokens["operator"], err = st.CreateToken(ctx, store.NewToken{Person: "per_olga", Workspace: demo.Workspace, Scopes: []string{"read", "write"}}); err != nil {
		t.Fatal(err)
	}
	p, _, err := billing.New(billing.Options{Store: st, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if k.srv, err = mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{p}, Now: clock}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(k.srv.HTTPHandler(mcpserver.HTTPOptions{}))
	t.Cleanup(hs.Close)
	k.url = hs.URL + "/mcp"
	return k
}

// TestEveryMessageKindMatchesTheOfficialSchema sends Billing one request of
// each kind on both eras, over HTTP and in process, and wants the Checker
// of the connection (which fails the test on any message outside the
// official schema) to have seen every kind of answer: lists, tool results
// and tool errors, text and blob reads, prompts, completions,
// input_required results and JSON-RPC errors.
func TestEveryMessageKindMatchesTheOfficialSchema(t *testing.T) {
	k := newKit(t)
	ctx := context.Background()
	decline := func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "decline"}, nil }
	for _, era := range mcptest.Eras {
		for _, via := range []string{"http", "stdio"} {
			t.Run(era+"/"+via, func(t *testing.T) {
				transport := func(who string) mcp.Transport {
					if via == "http" {
						return mcptest.HTTP(k.url, k.tokens[who])
					}
					return mcptest.Stdio(t, k.srv, k.tokens[who])
				}
				cs, check := mcptest.ConnectChecked(t, transport("owner"), era, decline)
				if _, err := mcptest.List(ctx, cs); err != nil {
					t.Fatal(err)
				}
				call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
					t.Helper()
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					return res
				}
				wantCode := func(res *mcp.CallToolResult, code string) {
					t.Helper()
					if got := mcptest.ErrorCode(res); got != code {
						t.Errorf("got %q (%s), want %s", got, mcptest.TextOf(res), code)
					}
				}
				wantCode(call(cs, "billing_invoices_get", map[string]any{"id": "inv_1003"}), "")
				wantCode(call(cs, "billing_customers_list", map[string]any{}), "")
				wantCode(call(cs, "billing_invoices_get", map[string]any{"id": "inv_nope"}), "not_found")
				wantCode(call(cs, "billing_invoices_get", map[string]any{}), "invalid_arguments")
				if era == mcptest.Modern {
					// Asked, and declined: nothing changes.
					wantCode(call(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1011"}), billing.DeclineCode)
				} else {
					// Billing runs destructive tools directly on 2025; a paid
					// invoice cannot be cancelled.
					wantCode(call(cs, "billing_invoices_cancel", map[string]any{"id": "inv_1001"}), "invalid_state")
				}
				nfes := call(cs, "billing_nfes_list", map[string]any{"status": "authorized"})
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
				viewer := mcptest.Connect(t, transport("viewer"), era, nil)
				wantCode(call(viewer, "billing_invoices_cancel", map[string]any{"id": "inv_1011"}), "permission_denied")

				seen := check.Seen()
				want := []string{"ListToolsResult", "ListResourcesResult", "ListResourceTemplatesResult", "ListPromptsResult",
					"CallToolResult", "CallToolResult isError", "ReadResourceResult", "GetPromptResult", "CompleteResult", "error -32602"}
				if era == mcptest.Modern {
					want = append(want, "InputRequiredResult")
				} else {
					want = append(want, "InitializeResult", "error -32002")
				}
				for _, kind := range want {
					if seen[kind] == 0 {
						t.Errorf("no %s was checked; seen %v", kind, seen)
					}
				}
			})
		}
	}
}
