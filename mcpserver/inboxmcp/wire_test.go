package inboxmcp_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// newKit is the harness's server with a token for each role (owner,
// operator, viewer): what the snapshot and wire tests look at.
func newKit(t *testing.T) *mcptest.Env {
	t.Helper()
	h := newHarness(t)
	h.Tokens["operator"] = mcptest.DemoOperator(t, h.st)
	return h.Env
}

// TestEveryMessageKindMatchesTheOfficialSchema sends Inbox one request of
// each kind on both eras, over HTTP and in process (mcptest.EveryMessageKind
// checks every answer against the official schema and that each kind was
// seen).
func TestEveryMessageKindMatchesTheOfficialSchema(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	mcptest.EveryMessageKind(t, k, "owner", mcptest.Decline, func(x *mcptest.Exchange) {
		t, cs := x.T, x.Session
		x.WantCode(x.Call(cs, "emails_get", map[string]any{"id": "eml_inv_00"}), "")
		x.WantCode(x.Call(cs, "emails_list", map[string]any{"limit": 2}), "")
		x.WantCode(x.Call(cs, "emails_get", map[string]any{"id": "eml_nope"}), "not_found")
		x.WantCode(x.Call(cs, "emails_get", map[string]any{}), "invalid_arguments")
		// A destructive tool: asked (2026-07-28) and declined, or refused (2025).
		if x.Era == mcptest.Modern {
			x.WantCode(x.Call(cs, "emails_delete", map[string]any{"id": "eml_inv_01"}), inboxmcp.DeclineCode)
		} else {
			x.WantCode(x.Call(cs, "emails_delete", map[string]any{"id": "eml_inv_01"}), mcpserver.CodeConfirmationRequired)
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
		x.WantCode(x.Call(x.As("viewer", nil), "emails_delete", map[string]any{"id": "eml_inv_01"}), "permission_denied")
	})
}
