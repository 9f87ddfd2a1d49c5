package egress_test

import (
	"fmt"

	"github.com/kobana/workflow/egress"
)

// A workspace's policy: FINANCE_TOKEN may only go to the ERP, and the agent
// may reach the ERP and the chat service. Check says, for a request about to
// be sent, why it may not go (nil: it may).
func ExamplePolicy_Check() {
	pol, err := egress.ParsePolicy([]byte(`{
  "secrets": {"FINANCE_TOKEN": ["erp.example.com"]},
  "egress": ["erp.example.com", "*.chat.example"]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, req := range []struct {
		url     string
		secrets []string
	}{
		{"https://erp.example.com/payables", []string{"FINANCE_TOKEN"}},
		{"https://hooks.chat.example/T1", []string{"FINANCE_TOKEN"}},
		{"https://attacker.example/x", nil},
	} {
		t, ok := egress.ParseTarget(req.url)
		if !ok {
			fmt.Println("not a URL:", req.url)
			continue
		}
		fmt.Println(req.url, "→", egress.Error(pol.Check(t, req.secrets)))
	}
	// Output:
	// https://erp.example.com/payables → <nil>
	// https://hooks.chat.example/T1 → secret FINANCE_TOKEN may be sent only to erp.example.com; hooks.chat.example is not one of its destinations
	// https://attacker.example/x → attacker.example is outside the egress list, which allows erp.example.com, *.chat.example
}
