package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/inbox/intake"
	"github.com/kobana/workflow/mcpserver"
)

// What a sender or a client sends never becomes a label value: reasons
// keep their stable code or become "other", unknown methods and models
// "other", so the number of series stays what the code defines.
func TestLabelsAreBounded(t *testing.T) {
	for reason, want := range map[string]string{
		"":                                  "",
		"quota_exceeded: the plan allows 5": "quota_exceeded",
		"sender_not_allowed":                "sender_not_allowed",
		"Message refused: <evil@x>":         "other",
		"unknown_recipient":                 "unknown_recipient",
		strings.Repeat("a", 200):            "other",
	} {
		if got := code(reason); got != want {
			t.Errorf("code(%.40q) = %q, want %q", reason, got, want)
		}
	}
	m := New(Sources{})
	m.MCP(mcpserver.RequestObserved{Method: "tools/call", Tool: "emails_get", Result: "ok"})
	m.MCP(mcpserver.RequestObserved{Method: "x/" + strings.Repeat("z", 100), Result: "error"})
	if n := testutil.CollectAndCount(m.mcpRequests); n != 2 {
		t.Errorf("%d MCP request series, want 2", n)
	}
	if got := testutil.ToFloat64(m.mcpRequests.WithLabelValues("other", "", "error")); got != 1 {
		t.Errorf("an unknown method counted as other: %v", got)
	}
	m.AgentRun(inbox.AgentRun{Status: "failed", Cause: "provider_error", Model: "made-up-model-9000"})
	if got := testutil.ToFloat64(m.modelTokens.WithLabelValues("other", "input")); got != 0 || testutil.CollectAndCount(m.modelTokens) != 2 {
		t.Errorf("an unknown model is not counted as other")
	}
	for i := range 50 {
		m.Intake("smtp", intake.Transaction{Result: "refused", Reason: strings.Repeat("x", i) + " free text from a sender"})
	}
	if n := testutil.CollectAndCount(m.smtp); n != 1 {
		t.Errorf("%d SMTP transaction series after 50 free-text reasons, want 1", n)
	}
}
