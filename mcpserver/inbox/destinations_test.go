package inbox

import (
	"testing"

	"github.com/kobana/workflow/egress"
)

// TestSecretsPolicy: user secrets and their destinations come apart from
// the store's secrets; a URL secret is bound to its host; an unreadable
// destinations record binds its secret to nothing.
func TestSecretsPolicy(t *testing.T) {
	all := map[string]string{
		"FINANCE_TOKEN":                         "tok-1",
		DestinationsSecretName("FINANCE_TOKEN"): EncodeDestinations(egress.MustParseList("erp.example.com")),
		"SLACK_WEBHOOK_URL":                     "https://hooks.slack.com/services/T/B/x",
		"PLAIN":                                 "value",
		"BROKEN":                                "v",
		DestinationsSecretName("BROKEN"):        "not json",
		DestinationsSecretName("GONE"):          `["a.example"]`,
		WebhookSecretName("whk_1"):              "whsec_x",
	}
	user, p := SecretsPolicy(all)
	if len(user) != 4 || user["FINANCE_TOKEN"] != "tok-1" {
		t.Errorf("user secrets %v", user)
	}
	for name, want := range map[string]string{"FINANCE_TOKEN": "erp.example.com", "SLACK_WEBHOOK_URL": "hooks.slack.com", "BROKEN": "no host"} {
		if d, ok := p.Destinations(name); !ok || d.String() != want {
			t.Errorf("%s: %v %v, want %s", name, d, ok, want)
		}
	}
	for _, name := range []string{"PLAIN", "GONE"} {
		if _, ok := p.Destinations(name); ok {
			t.Errorf("%s is bound", name)
		}
	}
	ag := Agent{ID: "agt_1", Name: "Invoices", Settings: AgentSettings{Egress: []string{"erp.example.com"}}}
	rp := RunPolicy(p, ag)
	if rp.Egress == nil || rp.Egress.String() != "erp.example.com" || rp.EgressOf != "agent Invoices (agt_1)" || len(rp.Secrets) != 3 {
		t.Errorf("run policy %+v", rp)
	}
	if RunPolicy(p, Agent{}).Egress != nil {
		t.Error("an agent without an egress list has one")
	}
}

// TestCostOfCachedTokens: cached input at the catalog's cached rate; a
// model without one prices them as input.
func TestCostOfCachedTokens(t *testing.T) {
	tk := Tokens{Input: 10000, Cached: 8000, Output: 1000}
	if got, want := Cost("gpt-4.1-mini", tk), RoundUSD(2000*0.4/1e6+8000*0.1/1e6+1000*1.6/1e6); got != want {
		t.Errorf("gpt-4.1-mini: %v, want %v", got, want)
	}
	if got, want := Cost("gemini-2.5-flash", tk), Cost("gemini-2.5-flash", Tokens{Input: 10000, Output: 1000}); got != want {
		t.Errorf("gemini-2.5-flash, no cached rate: %v, want %v", got, want)
	}
}
