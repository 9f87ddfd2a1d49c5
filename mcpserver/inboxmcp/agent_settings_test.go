package inboxmcp_test

import (
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox"
)

// TestAgentSettingsTools: agents_create and agents_update set an agent's
// settings (timeout, repair rounds, file inputs), refuse values out of
// range naming the setting, and agents_get shows them.
func TestAgentSettingsTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2025-11-25", nil)
	r := h.Call(cs, "agents_create", map[string]any{"name": "Reader", "model": "claude-haiku-4-5", "system_message": "Read invoices.",
		"settings": map[string]any{"timeout_seconds": 60, "repair_rounds": 0, "file_inputs": true, "file_input_max_bytes": 2000000}})
	if r.IsError {
		t.Fatalf("agents_create: %s", textOf(r))
	}
	var a inbox.Agent
	structured(t, r, &a)
	if a.Settings.Timeout().Seconds() != 60 || a.Settings.Repairs() != 0 || !a.Settings.FileInputs || a.Settings.FileBytes() != 2000000 {
		t.Fatalf("settings %+v", a.Settings)
	}
	r = h.Call(cs, "agents_update", map[string]any{"id": a.ID, "settings": map[string]any{"repair_rounds": 2}})
	a = inbox.Agent{}
	structured(t, r, &a)
	if r.IsError || a.Settings.Repairs() != 2 || a.Settings.FileInputs || a.Settings.Timeout() != inbox.DefaultAgentTimeout {
		t.Fatalf("agents_update: %s %+v", textOf(r), a.Settings)
	}
	var got inbox.Agent
	structured(t, h.Call(cs, "agents_get", map[string]any{"id": a.ID}), &got)
	if got.ID != a.ID {
		t.Fatalf("agents_get %+v", got)
	}
	if got.Settings.Repairs() != 2 {
		t.Errorf("agents_get settings %+v", got.Settings)
	}
	for _, bad := range []map[string]any{{"repair_rounds": 9}, {"timeout_seconds": 3600}, {"file_input_max_bytes": -1}} {
		r := h.Call(cs, "agents_update", map[string]any{"id": a.ID, "settings": bad})
		if !r.IsError || !strings.Contains(textOf(r), "settings.") {
			t.Errorf("settings %v: %s", bad, textOf(r))
		}
	}
}

// TestAgentEgressSetting: an agent's egress list is a setting; a list
// that cannot be read is refused naming the entry.
func TestAgentEgressSetting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2025-11-25", nil)
	r := h.Call(cs, "agents_create", map[string]any{"name": "Reader", "model": "claude-haiku-4-5", "system_message": "Read invoices.",
		"settings": map[string]any{"egress": []string{"erp.example.com", "*.slack.com"}}})
	if r.IsError {
		t.Fatalf("agents_create: %s", textOf(r))
	}
	var a inbox.Agent
	structured(t, r, &a)
	if d := a.Settings.EgressList(); d == nil || d.String() != "erp.example.com, *.slack.com" {
		t.Fatalf("egress %v", a.Settings.Egress)
	}
	r = h.Call(cs, "agents_update", map[string]any{"id": a.ID, "settings": map[string]any{"egress": []string{"erp.example.com", "https://evil.example/x"}}})
	if !r.IsError || !strings.Contains(textOf(r), `settings.egress[1]: destination "https://evil.example/x": write the host alone`) {
		t.Errorf("an unreadable egress entry: %s", textOf(r))
	}
}
