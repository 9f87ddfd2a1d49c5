package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
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
	// The known label values start at zero: count what the events add.
	mcp0, tokens0, smtp0 := testutil.CollectAndCount(m.mcpRequests), testutil.CollectAndCount(m.modelTokens), testutil.CollectAndCount(m.smtp)
	m.MCP(mcpserver.RequestObserved{Method: "tools/call", Tool: "emails_get", Result: "ok"})
	m.MCP(mcpserver.RequestObserved{Method: "x/" + strings.Repeat("z", 100), Result: "error"})
	if n := testutil.CollectAndCount(m.mcpRequests) - mcp0; n != 2 {
		t.Errorf("%d MCP request series, want 2", n)
	}
	if got := testutil.ToFloat64(m.mcpRequests.WithLabelValues("other", "", "error")); got != 1 {
		t.Errorf("an unknown method counted as other: %v", got)
	}
	m.AgentRun(inbox.AgentRun{Status: "failed", Cause: "provider_error", Model: "made-up-model-9000"})
	if got := testutil.ToFloat64(m.modelTokens.WithLabelValues("other", "input")); got != 0 || testutil.CollectAndCount(m.modelTokens)-tokens0 != 2 {
		t.Errorf("an unknown model is not counted as other")
	}
	for i := range 50 {
		m.Intake("smtp", intake.Transaction{Result: "refused", Reason: strings.Repeat("x", i) + " free text from a sender"})
	}
	if n := testutil.CollectAndCount(m.smtp) - smtp0; n != 1 {
		t.Errorf("%d SMTP transaction series after 50 free-text reasons, want 1", n)
	}
}

// Every kobana family is exported from the first scrape, before any
// event: rate() and alerts on a family that does not exist say nothing.
func TestEveryFamilyFromTheFirstScrape(t *testing.T) {
	m := New(Sources{})
	descs := make(chan *prometheus.Desc, 100)
	m.Registry().Describe(descs)
	close(descs)
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range families {
		have[f.GetName()] = true
	}
	for d := range descs {
		name := d.String()
		i := strings.Index(name, `fqName: "`)
		name = name[i+len(`fqName: "`):]
		name = name[:strings.Index(name, `"`)]
		if strings.HasPrefix(name, "kobana_") && !have[name] {
			t.Errorf("%s is missing before its first event", name)
		}
	}
}
