package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kobana/workflow/agent"
	"github.com/kobana/workflow/agent/standin"
	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/inbox"
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

// demoInbox is the inbox the sample e-mail arrived at.
var demoInbox = inbox.Inbox{ID: "inb_demo_finance", Name: "Finance", Address: "financeiro@example.inbox.kobana.com.br", AgentID: demoAgent.ID, Status: inbox.StatusActive}

// startDemoModel starts the demo's model stand-in: a local
// OpenAI-compatible server that answers the sample e-mail with the seed's
// complete example (and any other e-mail with a result and no workflow).
// It returns the configuration that points every model at it.
func startDemoModel() (agent.Config, func(), error) {
	e, err := inbox.ParseEmail([]byte(examples.InvoiceEmail))
	if err != nil {
		return agent.Config{}, nil, fmt.Errorf("the embedded sample e-mail: %w", err)
	}
	s := standin.New(standin.Match([]string{"Message-ID: " + e.MessageID}, map[string]standin.Reply{
		"Message-ID: " + e.MessageID: standin.Answer(examples.SeedComplete),
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

// askDemoAgent runs the demo's agent on the sample e-mail through the real
// runner (prompt, client, linter, repairs) and prints what the model
// answered. It returns the answer when the run succeeded.
func askDemoAgent(ctx context.Context, w io.Writer, cfg agent.Config) ([]byte, error) {
	standIn := false
	if !cfg.Configured() {
		var stop func()
		var err error
		if cfg, stop, err = startDemoModel(); err != nil {
			return nil, err
		}
		defer stop()
		standIn = true
	}
	raw := []byte(examples.InvoiceEmail)
	e, err := inbox.ParseEmail(raw)
	if err != nil {
		return nil, fmt.Errorf("the embedded sample e-mail: %w", err)
	}
	e.ID, e.InboxID = demoFacts["email_id"], demoInbox.ID
	in := inbox.AgentInput{
		Workspace:   inbox.Workspace{ID: demoFacts["workspace_id"], Environment: demoFacts["env"]},
		Inbox:       demoInbox,
		Agent:       demoAgent,
		Email:       e,
		Message:     inbox.BytesMessage(raw),
		SecretNames: []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"},
	}
	where := "the model endpoint"
	if standIn {
		where = "the demo's model stand-in (a local OpenAI-compatible server that answers the sample e-mail with the seed's example; pass -model-base-url to ask a real model)"
	}
	for _, l := range cfg.Describe() {
		fmt.Fprintf(w, "  model     %s\n", l)
	}
	fmt.Fprintf(w, "\nThe agent %q (%s) reads the e-mail; its model is asked through %s.\n", demoAgent.Name, demoAgent.Model, where)
	res, err := (&agent.Runner{Config: cfg}).RunAgent(ctx, in)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "agent run: %s after %d request%s, %d repair round%s, %d input and %d output tokens, %.6f USD (prompt %s)\n",
		res.Status, len(res.Calls), plural(len(res.Calls)), len(res.Repairs), plural(len(res.Repairs)), res.Tokens.Input, res.Tokens.Output,
		inbox.Cost(demoAgent.Model, res.Tokens), res.PromptVersion)
	if res.Status != inbox.RunSucceeded {
		fmt.Fprintf(w, "the agent run failed (%s): %s\n", res.Cause, res.Error)
		if res.Answer != "" {
			fmt.Fprintf(w, "the model answered:\n%s\n", indent(res.Answer))
		}
		return nil, nil
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, res.Output, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(res.Output)
	}
	fmt.Fprintf(w, "The model answered (validated by the platform's linter before anything runs):\n%s\n", indent(pretty.String()))
	return res.Output, nil
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
