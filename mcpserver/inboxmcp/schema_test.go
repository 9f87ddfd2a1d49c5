package inboxmcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Every structured result validates against the output schema its tool
// declares in tools/list.
func TestStructuredOutputMatchesSchema(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tl := range list.Tools {
		b, _ := json.Marshal(tl.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s output schema: %v", tl.Name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s output schema: %v", tl.Name, err)
		}
		schemas[tl.Name] = r
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"workspaces_get", nil}, {"models_list", nil}, {"usage_get", nil},
		{"inboxes_list", nil}, {"inboxes_get", map[string]any{"id": "ibx_invoices"}},
		{"emails_list", nil}, {"emails_get", map[string]any{"id": "eml_inv_02"}}, {"emails_eml", map[string]any{"id": "eml_inv_02"}},
		{"agents_list", nil}, {"agents_get", map[string]any{"id": "agt_invoices"}},
		{"agent_runs_list", nil}, {"agent_runs_get", map[string]any{"id": "arun_inv_00"}}, {"agent_runs_get", map[string]any{"id": "arun_inv_04"}},
		{"workflow_runs_list", nil}, {"workflow_runs_get", map[string]any{"id": "wrun_inv_02"}},
		{"webhooks_list", nil}, {"webhooks_get", map[string]any{"id": "whk_chat"}}, {"webhooks_deliveries_list", nil},
		{"secrets_list", nil}, {"system_events_list", nil}, {"system_events_get", map[string]any{"id": "evt_0003"}},
		{"workflows_validate", map[string]any{"document": `{"result":1}`}},
		{"agents_create", map[string]any{"name": "A", "model": "gpt-4.1-mini", "system_message": "be brief"}},
		{"webhooks_create", map[string]any{"url": "https://x.example/h", "events": []string{"email.failed"}}},
		{"webhooks_test", map[string]any{"id": "whk_erp"}},
		{"emails_reprocess", map[string]any{"id": "eml_inv_00"}},
		{"inboxes_add_recipient", map[string]any{"id": "ibx_invoices", "recipient": "@new.example"}},
		{"secrets_set", map[string]any{"name": "K", "value": "v"}},
		{"emails_delete", map[string]any{"id": "eml_rcp_00"}},
	}
	for _, c := range calls {
		r := h.Call(cs, c.tool, c.args)
		if r.IsError {
			t.Errorf("%s: %s", c.tool, textOf(r))
			continue
		}
		b, _ := json.Marshal(r.StructuredContent)
		var v any
		json.Unmarshal(b, &v)
		if err := schemas[c.tool].Validate(v); err != nil {
			t.Errorf("%s: structured output does not match its schema: %v\n%.400s", c.tool, err, b)
		}
	}
}
