package inboxmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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

// kit is Inbox alone with its demo data, built from the public
// constructors: what the snapshot and wire tests look at.
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
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "inbox.db"), store.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seeded, err := inbox.Seed(ctx, st, now)
	if err != nil {
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
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	p, ip, err := inboxmcp.New(inboxmcp.Options{
		Store: st,
		Lint:  func([]byte) (json.RawMessage, bool) { return json.RawMessage(`[]`), true },
		Plan: func(context.Context, inboxmcp.PlanInput) (json.RawMessage, string, error) {
			return json.RawMessage(`{}`), "", nil
		},
		PublicURL: hs.URL,
		Now:       clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	if k.srv, err = mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{p}, Now: clock}); err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", k.srv.HTTPHandler(mcpserver.HTTPOptions{Extra: map[string]http.Handler{inboxmcp.DownloadPath: ip.DownloadHandler()}}))
	k.url = hs.URL + "/mcp"
	return k
}

// TestEveryMessageKindMatchesTheOfficialSchema sends Inbox one request of
// each kind on both eras, over HTTP and in process, and wants the Checker
// of the connection (which fails the test on any message outside the
// official schema) to have seen every kind of answer: lists, tool results
// and tool errors, reads, prompts, completions, input_required results and
// JSON-RPC errors.
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
				wantCode(call(cs, "emails_get", map[string]any{"id": "eml_inv_00"}), "")
				wantCode(call(cs, "emails_list", map[string]any{"limit": 2}), "")
				wantCode(call(cs, "emails_get", map[string]any{"id": "eml_nope"}), "not_found")
				wantCode(call(cs, "emails_get", map[string]any{}), "invalid_arguments")
				// A destructive tool: asked (2026-07-28) and declined, or refused (2025).
				if era == mcptest.Modern {
					wantCode(call(cs, "emails_delete", map[string]any{"id": "eml_inv_01"}), inboxmcp.DeclineCode)
				} else {
					wantCode(call(cs, "emails_delete", map[string]any{"id": "eml_inv_01"}), mcpserver.CodeConfirmationRequired)
				}
				for _, uri := range []string{"kobana://inbox/models", "kobana://inbox/emails/eml_inv_00", "kobana://inbox/emails/eml_inv_00/eml"} {
					if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
						t.Errorf("read %s: %v", uri, err)
					}
				}
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "kobana://inbox/emails/eml_nope"}); err == nil {
					t.Error("reading an unknown e-mail succeeded")
				}
				if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "inbox_overview", Arguments: map[string]string{"inbox_id": "ibx_invoices"}}); err != nil {
					t.Error(err)
				}
				if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "usage_report", Arguments: map[string]string{"month": "November"}}); err == nil {
					t.Error("a month out of format was accepted")
				}
				for _, ref := range []*mcp.CompleteReference{{Type: "ref/resource", URI: "kobana://inbox/emails/{id}"}, {Type: "ref/prompt", Name: "inbox_overview"}} {
					arg := mcp.CompleteParamsArgument{Name: "id", Value: "eml_inv"}
					if ref.Type == "ref/prompt" {
						arg = mcp.CompleteParamsArgument{Name: "inbox_id", Value: "ibx"}
					}
					if res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: arg}); err != nil || len(res.Completion.Values) == 0 {
						t.Errorf("complete %v: %v %v", ref, res, err)
					}
				}
				// A viewer may not write.
				viewer := mcptest.Connect(t, transport("viewer"), era, nil)
				wantCode(call(viewer, "emails_delete", map[string]any{"id": "eml_inv_01"}), "permission_denied")

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
