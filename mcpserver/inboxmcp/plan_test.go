package inboxmcp_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/runrecord"
)

// TestWorkflowsPlan: a read-only caller plans a document with the
// workspace's secret names (never values, never a webhook's), the facts a
// run of the e-mail would have — kobana.env the workspace's own, as a run
// takes it — with the run's own ids pending, and the e-mail's attachments;
// without an e-mail its facts are pending too. Each step shows the
// identity headers a run sends.
func TestWorkflowsPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("viewer", "2025-11-25", nil)
	doc := `{"result":{},"workflow":[
		{"type":"request","method":"POST","url":"https://erp.example.com/x/${{kobana.email_id}}","headers":{"Authorization":"Bearer ${{secrets.ERP_TOKEN}}","X-Env":"${{kobana.env}}"},
		 "form":{"file":"${{email.attachments.0}}"}},
		{"type":"request","method":"GET","url":"https://erp.example.com/y/${{steps.0.response.body.id}}"}]}`
	var out inboxmcp.Planned
	structured(t, h.Call(cs, "workflows_plan", map[string]any{"document": doc, "email_id": "eml_inv_00",
		"responses": map[string]any{"0": map[string]any{"status": 201, "body": map[string]any{"id": "pay_1"}}}}), &out)
	var p plan.Plan
	if err := json.Unmarshal(out.Plan, &p); err != nil {
		t.Fatalf("plan %s: %v", out.Plan, err)
	}
	if !p.Valid || p.Summary.Send != 2 || !strings.Contains(out.Text, "would be sent") {
		t.Fatalf("plan %s\n%s", out.Plan, out.Text)
	}
	if !slices.Equal(p.Inputs.SecretNames, []string{"CHAT_WEBHOOK_URL", "ERP_TOKEN"}) {
		t.Errorf("secret names %v", p.Inputs.SecretNames)
	}
	for k, want := range map[string]string{"email_id": "eml_inv_00", "inbox_id": "ibx_invoices", "agent_id": "agt_invoices", "workspace_id": demo.Workspace, "env": "sandbox"} {
		if p.Inputs.Facts[k] != want {
			t.Errorf("fact %s = %q, want %q (facts %v)", k, p.Inputs.Facts[k], want, p.Inputs.Facts)
		}
	}
	if !slices.Contains(p.Inputs.PendingFacts, "workflow_run_id") || !slices.Contains(p.Inputs.PendingFacts, "agent_run_id") || slices.Contains(p.Inputs.PendingFacts, "email_id") {
		t.Errorf("pending facts %v", p.Inputs.PendingFacts)
	}
	if len(p.Inputs.Attachments) == 0 || p.Steps[0].Request.Body.Parts[0].File == nil || !p.Steps[0].Request.Body.Parts[0].File.Known {
		t.Errorf("the e-mail's attachments were not planned with: %+v", p.Inputs.Attachments)
	}
	headers := func(s plan.Step) map[string]string {
		m := map[string]string{}
		for _, h := range s.Request.Headers {
			m[h.Name] = h.Value
		}
		return m
	}
	h0, h1 := headers(p.Steps[0]), headers(p.Steps[1])
	if h0["Authorization"] != "Bearer [redacted secrets.ERP_TOKEN]" || h0["X-Env"] != "sandbox" || p.Steps[1].Request.URL != "https://erp.example.com/y/pay_1" {
		t.Errorf("steps %+v %+v", h0, p.Steps[1].Request)
	}
	if h0[runrecord.HeaderStepID] != "${{kobana.workflow_run_id}}/0" || h0[runrecord.HeaderIdempotencyKey] != `"${{kobana.workflow_run_id}}/0"` ||
		h1[runrecord.HeaderStepID] != "${{kobana.workflow_run_id}}/1" || h1[runrecord.HeaderIdempotencyKey] != "" {
		t.Errorf("identity headers %v / %v (a GET has no Idempotency-Key)", h0, h1)
	}
	if strings.Contains(string(out.Plan), "erp_live_") || strings.Contains(string(out.Plan), "whsec_") {
		t.Errorf("a secret value is in the plan: %s", out.Plan)
	}

	// Without an e-mail: its facts are pending, its attachments unknown.
	out = inboxmcp.Planned{}
	structured(t, h.Call(cs, "workflows_plan", map[string]any{"document": doc}), &out)
	p = plan.Plan{}
	json.Unmarshal(out.Plan, &p)
	if p.Inputs.Attachments != nil || p.Inputs.Facts["email_id"] != "" || !slices.Contains(p.Inputs.PendingFacts, "email_id") || p.Inputs.Facts["workspace_id"] != demo.Workspace {
		t.Errorf("without an e-mail: facts %v, pending %v, attachments %v", p.Inputs.Facts, p.Inputs.PendingFacts, p.Inputs.Attachments)
	}

	// The caller's mistakes.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"document": doc, "email_id": "eml_nope"}, "not_found"},
		{map[string]any{"document": doc, "responses": map[string]any{"unreadable": 1}}, "invalid_arguments"},
		{map[string]any{"document": " "}, "invalid_arguments"},
	} {
		r := h.Call(cs, "workflows_plan", tc.args)
		if !r.IsError || !strings.Contains(textOf(r), tc.want) {
			t.Errorf("%v: %v %s", tc.args, r.IsError, textOf(r))
		}
	}
}
