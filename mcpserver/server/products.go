package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/store"
)

// A product is an MCP product the server can serve (Config.Products).
// Adding one is an entry in products: its name, what it tells the model,
// how it seeds its demo records and how it is built.
type product struct {
	name string
	// instructions tell a client's model what the product is for.
	instructions string
	// seed adds the product's demo records to the demo organization
	// (Config.Demo); nil when it has none of its own.
	seed func(a *assembly) error
	// build makes the product from what the assembly shares; it may add
	// HTTP routes to a.handlers.
	build func(a *assembly) (*mcpserver.Product, error)
}

// products are the products the server knows, in the order they are
// served.
var products = []product{
	{
		name:         "inbox",
		instructions: "Kobana Inbox: e-mail inboxes whose AI agent turns each message into a workflow; resources under kobana://inbox/.",
		build:        buildInbox,
	},
	{
		name:         "billing",
		instructions: "Kobana Billing: customers, subscriptions, invoices and NF-e of the organization; resources under kobana://billing/.",
		seed:         func(a *assembly) error { return billing.SeedDemo(a.ctx, a.store, a.now()) },
		build: func(a *assembly) (*mcpserver.Product, error) {
			mp, _, err := billing.New(billing.Options{Store: a.store})
			return mp, err
		},
	},
}

// seedDemoOrganization seeds the demo organization (package demo) with the
// Inbox records of its Finance workspace, once, and mints the demo
// people's tokens. It runs whichever products are served, so the
// organization always comes with its Inbox records; the other products add
// theirs to it.
func seedDemoOrganization(a *assembly) ([]demo.Token, error) {
	return inboxdemo.Load(a.ctx, a.store, a.now())
}

// demoSeeded says the demo organization and its Inbox records are in the
// store (a seed cut short is not: the next start completes it).
func demoSeeded(a *assembly) (bool, error) {
	_, err := inbox.NewRepo(a.store).Workspaces.Get(a.ctx, demo.Workspace, demo.Workspace)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, fmt.Errorf("looking for the demo organization: %w", err)
}

// buildInbox builds the Inbox product over the pipeline's stages: they run
// on the queue (this process works it with Config.Process);
// emails_reprocess enqueues them.
func buildInbox(a *assembly) (*mcpserver.Product, error) {
	agents := a.cfg.AgentRunner
	if agents == nil {
		agents = agentRunner(a.notices, a.cfg.Agents, a.log, a.modelBudget())
	}
	if a.cfg.Process {
		describeRetries(a.notices, a.cfg.AgentRetrySchedule)
	}
	pl, err := a.newPipeline(agents)
	if err != nil {
		return nil, err
	}
	mp, p, err := inboxmcp.New(inboxmcp.Options{
		Store:      a.store,
		Guard:      a.guard,
		Processor:  pl.Processor(),
		HTTPClient: a.guard.ClientVia(a.cfg.Outbound),
		PublicURL:  a.publicURL,
		MailDomain: a.cfg.MailDomain,
		Messages:   a.inbox.raw,
	})
	if err != nil {
		return nil, err
	}
	a.handlers[inboxmcp.DownloadPath] = p.DownloadHandler()
	return mp, nil
}

// agentRunner is the Inbox's agent runner for cfg: the model client when
// an endpoint is configured, else the runner that replays recorded answers.
// It tells the person running the server which, on w (never a key). The
// model client's requests go through b, the process's endpoint budget.
func agentRunner(w io.Writer, cfg agent.Config, log *slog.Logger, b *budget.Budget) inbox.AgentRunner {
	if !cfg.Configured() {
		fmt.Fprintln(w, "agents: no model endpoint (-model-base-url or -agents-config): an agent run replays the agent's recorded answer, so new mail fails with no_recorded_output until a model is configured")
		return inbox.ReplayRunner{}
	}
	for _, l := range cfg.Describe() {
		fmt.Fprintln(w, "agents: "+l)
	}
	return &agent.Runner{Config: cfg, Logger: log, Budget: b}
}

// describeRetries tells the person running the server when an e-mail
// whose agent failed for a cause that may pass is tried again.
func describeRetries(w io.Writer, schedule []time.Duration) {
	if schedule == nil {
		schedule = pipeline.DefaultAgentRetrySchedule
	}
	if len(schedule) == 0 {
		fmt.Fprintln(w, "agents: a run that fails because the model is unavailable, rate-limited or slow fails its e-mail at once (-agent-retry-schedule none)")
		return
	}
	var total time.Duration
	parts := make([]string, len(schedule))
	for i, d := range schedule {
		parts[i], total = d.String(), total+d
	}
	fmt.Fprintf(w, "agents: a run that fails because the model is unavailable, rate-limited or slow is tried again after %s (%d more runs over %s, -agent-retry-schedule)\n", strings.Join(parts, ", "), len(schedule), total)
}
