package inboxmcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func promptText(r *mcp.GetPromptResult) (string, []string) {
	var text strings.Builder
	var uris []string
	for _, m := range r.Messages {
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			text.WriteString(c.Text)
		case *mcp.EmbeddedResource:
			uris = append(uris, c.Resource.URI)
		}
	}
	return text.String(), uris
}

func TestPromptsBothEras(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := []struct {
		name      string
		args      map[string]string
		wantText  []string
		wantURIs  []string
		wantNoURI bool
	}{
		{"review_failed_runs", map[string]string{"since": "2026-10-01"},
			[]string{"workflow_failed: 3 run(s)", "invalid_output: 1 run(s)", "model_timeout: 1 run(s)", "attachment_unreadable: 1 run(s)", "agent_runs_get", "emails_get", "eml_inv_02"},
			[]string{"kobana://inbox/agent-runs/arun_inv_16", "kobana://inbox/emails/eml_inv_16"}, false},
		{"review_failed_runs", map[string]string{"since": "2026-10-01", "agent_id": "agt_receipts"},
			[]string{"no failed runs"}, nil, true},
		{"review_failed_runs", map[string]string{},
			[]string{"since 2026-11-13", "workflow_failed"}, nil, false},
		{"inbox_overview", map[string]string{"inbox_id": "ibx_invoices"},
			[]string{"Supplier invoices", "Invoice reader", "eml_autoreply", "emails_list", "agent_runs_list", "failed"},
			[]string{"kobana://inbox/inboxes/ibx_invoices", "kobana://inbox/agents/agt_invoices"}, false},
		{"webhook_health", map[string]string{},
			[]string{"whk_chat", "FAILING since", "3 failed deliveries in a row", "HTTP 410", "webhooks_deliveries_list", "1 of 2 webhooks are failing"},
			[]string{"kobana://inbox/webhooks/whk_chat"}, false},
		{"usage_report", map[string]string{"month": "2026-11"},
			[]string{"2026-11", "claude-sonnet-4-5", "gpt-4.1-mini", "usage_get", "By model"},
			[]string{"kobana://inbox/models"}, false},
	}
	for _, era := range eras {
		cs := h.Connect("viewer", era, nil)
		list, err := cs.ListPrompts(context.Background(), nil)
		if err != nil || len(list.Prompts) != 4 {
			t.Fatalf("%s prompts/list = %v %v", era, list, err)
		}
		for _, c := range cases {
			res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: c.name, Arguments: c.args})
			if err != nil {
				t.Errorf("%s %s %v: %v", era, c.name, c.args, err)
				continue
			}
			text, uris := promptText(res)
			for _, w := range c.wantText {
				if !strings.Contains(text, w) {
					t.Errorf("%s %s %v: text lacks %q:\n%s", era, c.name, c.args, w, text)
				}
			}
			for _, w := range c.wantURIs {
				found := false
				for _, u := range uris {
					found = found || u == w
				}
				if !found {
					t.Errorf("%s %s: embedded %v lacks %s", era, c.name, uris, w)
				}
			}
			if c.wantNoURI && len(uris) != 0 {
				t.Errorf("%s %s: unexpected embedded %v", era, c.name, uris)
			}
		}
	}
}

func TestPromptArgumentValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bad := []struct {
		name string
		args map[string]string
	}{
		{"inbox_overview", nil},
		{"inbox_overview", map[string]string{"inbox_id": ""}},
		{"inbox_overview", map[string]string{"inbox_id": "ibx_sandbox_test"}}, // another workspace's
		{"review_failed_runs", map[string]string{"since": "2026/10/01"}},
		{"review_failed_runs", map[string]string{"since": "2026-13-01"}},
		// Formats are exact: surrounding spaces are not part of a date.
		{"review_failed_runs", map[string]string{"since": " 2026-11-20"}},
		{"review_failed_runs", map[string]string{"since": "2026-11-20\n"}},
		{"usage_report", map[string]string{"month": "2026-11 "}},
		{"inbox_overview", map[string]string{"inbox_id": " ibx_invoices"}},
		{"review_failed_runs", map[string]string{"agent_id": "agt_nope"}},
		{"usage_report", map[string]string{"month": "2026-1"}},
		{"usage_report", map[string]string{"month": "November"}},
		{"webhook_health", map[string]string{"verbose": "yes"}},
		{"no_such_prompt", nil},
	}
	for _, era := range eras {
		cs := h.Connect("owner", era, nil)
		for _, b := range bad {
			_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: b.name, Arguments: b.args})
			if rpcCode(err) != -32602 {
				t.Errorf("%s %s %v: %v, want -32602", era, b.name, b.args, err)
			}
		}
	}
}

func TestCompletions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	complete := func(cs *mcp.ClientSession, ref *mcp.CompleteReference, arg, value string) []string {
		t.Helper()
		res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("complete %s %s=%q: %v", ref.Name+ref.URI, arg, value, err)
		}
		return res.Completion.Values
	}
	prompt := func(n string) *mcp.CompleteReference { return &mcp.CompleteReference{Type: "ref/prompt", Name: n} }
	tmpl := func(u string) *mcp.CompleteReference { return &mcp.CompleteReference{Type: "ref/resource", URI: u} }
	for _, era := range eras {
		cs := h.Connect("viewer", era, nil)
		if got := strings.Join(complete(cs, prompt("inbox_overview"), "inbox_id", "ibx_"), ","); got != "ibx_receipts,ibx_invoices" {
			t.Errorf("%s inbox_id = %s (most recent first, this workspace only)", era, got)
		}
		if got := complete(cs, prompt("review_failed_runs"), "agent_id", "agt_i"); strings.Join(got, ",") != "agt_invoices" {
			t.Errorf("%s agent_id = %v", era, got)
		}
		months := complete(cs, prompt("usage_report"), "month", "")
		if len(months) != 12 || months[0] != "2026-11" || months[11] != "2025-12" {
			t.Errorf("%s months = %v", era, months)
		}
		if got := complete(cs, prompt("usage_report"), "month", "2025"); strings.Join(got, ",") != "2025-12" {
			t.Errorf("%s months 2025 = %v", era, got)
		}
		rcp := complete(cs, tmpl("kobana://inbox/emails/{id}"), "id", "eml_rcp")
		if strings.Join(rcp, ",") != "eml_rcp_05,eml_rcp_04,eml_rcp_03,eml_rcp_02,eml_rcp_01,eml_rcp_00" {
			t.Errorf("%s e-mail ids = %v", era, rcp)
		}
		if got := complete(cs, tmpl("kobana://inbox/agent-runs/{id}"), "id", "arun_inv_1"); len(got) != 8 {
			t.Errorf("%s agent-run ids = %v", era, got)
		}
		if got := complete(cs, tmpl("kobana://inbox/workspaces/{id}"), "id", "ws"); strings.Join(got, ",") != "ws_finance" {
			t.Errorf("%s workspace ids = %v", era, got)
		}
		if got := complete(cs, tmpl("kobana://inbox/inboxes/{id}"), "id", "ibx_sand"); len(got) != 0 {
			t.Errorf("%s suggests another workspace's inbox: %v", era, got)
		}
		if got := complete(cs, prompt("review_failed_runs"), "since", "2026"); len(got) != 0 {
			t.Errorf("%s since has no source, got %v", era, got)
		}
		if got := complete(cs, tmpl("kobana://inbox/models"), "id", ""); len(got) != 0 {
			t.Errorf("%s fixed resource completion = %v", era, got)
		}
		// Every record template completes its own records, and each
		// suggestion reads back through resources/read.
		for tpl, prefix := range map[string]string{
			"inboxes/{id}": "ibx_", "emails/{id}": "eml_", "emails/{id}/eml": "eml_", "agents/{id}": "agt_",
			"agent-runs/{id}": "arun_", "workflow-runs/{id}": "wrun_", "webhooks/{id}": "whk_",
			"system-events/{id}": "evt_", "workspaces/{id}": "ws_",
		} {
			got := complete(cs, tmpl("kobana://inbox/"+tpl), "id", "")
			if len(got) == 0 {
				t.Errorf("%s %s: no suggestions", era, tpl)
				continue
			}
			for _, id := range got {
				if !strings.HasPrefix(id, prefix) {
					t.Errorf("%s %s suggests %s", era, tpl, id)
				}
			}
			uri := "kobana://inbox/" + strings.Replace(tpl, "{id}", got[0], 1)
			if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
				t.Errorf("%s suggested %s does not read: %v", era, uri, err)
			}
		}
	}
}
