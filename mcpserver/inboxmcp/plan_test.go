package inboxmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

// fakePlanner stands in for package plan: it records what workflows_plan
// hands it and answers in the plan's shape.
type fakePlanner struct {
	mu     sync.Mutex
	inputs []inboxmcp.PlanInput
	// sizes are the sizes of the messages handed over, read while open.
	sizes []int64
}

func (f *fakePlanner) plan(_ context.Context, in inboxmcp.PlanInput) (json.RawMessage, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	size := int64(-1)
	if in.Message != nil {
		size = in.Message.Size()
		if _, err := in.Message.ReadAt(make([]byte, 1), 0); err != nil {
			return nil, "", fmt.Errorf("the message cannot be read: %w", err)
		}
	}
	f.sizes = append(f.sizes, size)
	if strings.Contains(string(in.Responses), "unreadable") {
		return nil, "", fmt.Errorf("%w: example responses: not a step index", inboxmcp.ErrPlanInput)
	}
	return json.RawMessage(`{"version":1,"valid":true,"summary":{"send":1,"fail":0,"skip":0}}`), "1 step: 1 would be sent", nil
}

func (f *fakePlanner) last() (inboxmcp.PlanInput, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inputs[len(f.inputs)-1], f.sizes[len(f.sizes)-1]
}

// TestWorkflowsPlan: a read-only caller plans a document; the planner gets
// the workspace's secret names (never values, never a webhook's), the facts
// a run of the e-mail would have with the run's own ids pending, and the
// e-mail's raw message; without an e-mail its facts are pending too.
func TestWorkflowsPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("viewer", "2025-11-25", nil)
	doc := `{"result":{},"workflow":[{"type":"request","url":"https://erp.example.com/x"}]}`
	var out inboxmcp.Planned
	structured(t, h.Call(cs, "workflows_plan", map[string]any{"document": doc, "email_id": "eml_inv_00",
		"responses": map[string]any{"0": map[string]any{"status": 201}}}), &out)
	if out.Text != "1 step: 1 would be sent" || !strings.Contains(string(out.Plan), `"send":1`) {
		t.Errorf("output %+v", out)
	}
	in, size := h.planner.last()
	if string(in.Document) != doc || !strings.Contains(string(in.Responses), `"status":201`) {
		t.Errorf("document %s, responses %s", in.Document, in.Responses)
	}
	if !slices.Equal(in.SecretNames, []string{"CHAT_WEBHOOK_URL", "ERP_TOKEN"}) && !slices.Equal(in.SecretNames, []string{"ERP_TOKEN", "CHAT_WEBHOOK_URL"}) {
		t.Errorf("secret names %v", in.SecretNames)
	}
	for k, want := range map[string]string{"email_id": "eml_inv_00", "inbox_id": "ibx_invoices", "agent_id": "agt_invoices", "workspace_id": demo.Workspace, "env": "development"} {
		if in.Facts[k] != want {
			t.Errorf("fact %s = %q, want %q (facts %v)", k, in.Facts[k], want, in.Facts)
		}
	}
	if !slices.Contains(in.PendingFacts, "workflow_run_id") || !slices.Contains(in.PendingFacts, "agent_run_id") || slices.Contains(in.PendingFacts, "email_id") {
		t.Errorf("pending facts %v", in.PendingFacts)
	}
	if size <= 0 {
		t.Errorf("the e-mail's message was not handed over (size %d)", size)
	}
	for _, v := range in.Facts {
		if strings.Contains(v, "erp_live_") || strings.Contains(v, "whsec_") {
			t.Errorf("a secret value reached the planner: %v", in.Facts)
		}
	}

	// Without an e-mail: its facts are pending, no message.
	structured(t, h.Call(cs, "workflows_plan", map[string]any{"document": doc}), &out)
	in, size = h.planner.last()
	if size != -1 || in.Facts["email_id"] != "" || !slices.Contains(in.PendingFacts, "email_id") || in.Facts["workspace_id"] != demo.Workspace {
		t.Errorf("without an e-mail: facts %v, pending %v, message size %d", in.Facts, in.PendingFacts, size)
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
