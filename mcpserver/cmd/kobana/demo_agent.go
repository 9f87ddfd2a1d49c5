package main

import (
	"fmt"
	"strings"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// demoAgent is the agent the demo asks about the sample e-mail.
var demoAgent = inbox.Agent{
	ID: "agt_demo_invoices", Name: "Invoice reader", Model: "claude-sonnet-4-5", Status: inbox.StatusActive,
	SystemMessage: "You read supplier invoices sent to the finance inbox. For each invoice: create a payable in the ERP " +
		"(POST https://erp.example.com/payables with Authorization: Bearer ${{secrets.FINANCE_TOKEN}}, the supplier and the amount, " +
		"and source_email_id set to the e-mail's id; the ERP answers 201 with the payable's id in data.id), " +
		"attach the invoice PDF to it (POST https://erp.example.com/payables/ID/attachments, the file as the form field \"file\"), " +
		"then tell the finance channel through the webhook ${{secrets.SLACK_WEBHOOK_URL}}.",
	Skills: []string{"extract_invoice"},
}

// demoInbox is the inbox the demo sends the sample e-mail to (its address
// and allowed senders are set where the demo seeds it).
var demoInbox = inbox.Inbox{ID: "inb_demo_finance", Name: "Finance", AgentID: demoAgent.ID, Status: inbox.StatusActive}

// startDemoModel starts the demo's model stand-in: a local
// OpenAI-compatible server that answers the sample e-mail with the complete
// complete example (and any other e-mail with a result and no workflow).
// It returns the configuration that points every model at it.
func startDemoModel() (agent.Config, func(), error) {
	e, err := inbox.ParseEmail([]byte(examples.InvoiceEmail))
	if err != nil {
		return agent.Config{}, nil, fmt.Errorf("the embedded sample e-mail: %w", err)
	}
	s := standin.New(standin.Match([]string{"Message-ID: " + e.MessageID}, map[string]standin.Reply{
		"Message-ID: " + e.MessageID: standin.Answer(examples.Payable),
	}, standin.Answer(`{"result": {"note": "the demo's stand-in knows only the sample e-mail"}}`)))
	base, stop, err := s.Start()
	if err != nil {
		return agent.Config{}, nil, err
	}
	cfg, err := agent.Load(agent.Flags{BaseURL: base, ResponseFormat: agent.FormatJSONSchema}, nil, agent.CatalogProviders())
	if err != nil {
		stop()
		return agent.Config{}, nil, err
	}
	return cfg, stop, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
