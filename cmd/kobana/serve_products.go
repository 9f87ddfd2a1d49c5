package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/kobana/workflow/agent"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

// A product is an MCP product kobana serve can serve (-products). Adding one
// is an entry in products: its name, what it tells the model, and a setup
// that registers its own flags and returns how to seed and build it.
type product struct {
	name string
	// setup registers the product's flags on fs (if it has any) and
	// returns its setup, bound to them; it is read after parsing.
	setup func(fs *flag.FlagSet) productSetup
}

// productSetup is how serve seeds and builds one product.
type productSetup struct {
	// instructions tell a client's model what the product is for.
	instructions string
	// seed adds the product's demo records to the demo organization
	// (-demo); nil when it has none of its own.
	seed func(a *assembly) error
	// check reads the product's flags once they are parsed, before
	// anything is opened; an error is a usage error. nil when there is
	// nothing to check.
	check func(c *Command) error
	// build makes the product from what the assembly shares; it may add
	// HTTP routes to a.handlers.
	build func(a *assembly) (*mcpserver.Product, error)
}

// products are the products kobana serve knows, in the order they are
// served by default.
var products = []product{
	{name: "inbox", setup: inboxProduct},
	{name: "billing", setup: billingProduct},
}

func productNames() []string {
	names := make([]string, len(products))
	for i, p := range products {
		names[i] = p.name
	}
	return names
}

// seedDemoOrganization seeds the demo organization (package demo) with the
// Inbox records of its Finance workspace, once, and mints the demo
// people's tokens. It runs whichever products are served, so the
// organization always comes with its Inbox records; the other products add
// theirs to it.
func seedDemoOrganization(a *assembly) ([]demo.Token, error) {
	return inboxdemo.Seed(a.ctx, a.store, a.now())
}

func inboxProduct(fs *flag.FlagSet) productSetup {
	var models agent.Flags
	models.Register(fs)
	var cfg agent.Config
	return productSetup{
		instructions: "Kobana Inbox: e-mail inboxes whose AI agent turns each message into a workflow; resources under kobana://inbox/.",
		check: func(c *Command) (err error) {
			cfg, err = agent.Load(models, c.getenv, agent.CatalogProviders())
			return err
		},
		build: func(a *assembly) (*mcpserver.Product, error) {
			// The stages run on the queue (this process works it with
			// -process); emails_reprocess enqueues them.
			agents := a.agents
			if agents == nil {
				agents = agentRunner(a.cmd.Stderr, cfg, a.log)
			}
			pl, err := a.newPipeline(agents)
			if err != nil {
				return nil, err
			}
			mp, p, err := inboxmcp.New(inboxmcp.Options{
				Store:      a.store,
				Lint:       agent.LintJSON,
				Plan:       workflowPlanner(a.guard),
				Processor:  pl.Processor(),
				HTTPClient: a.guard.Client(),
				PublicURL:  a.publicURL,
				Messages:   a.inbox.raw,
			})
			if err != nil {
				return nil, err
			}
			a.handlers[inboxmcp.DownloadPath] = p.DownloadHandler()
			return mp, nil
		},
	}
}

// agentRunner is the Inbox's agent runner for cfg: the model client when
// an endpoint is configured, else the runner that replays recorded answers.
// It tells the person running serve which, on w (never a key).
func agentRunner(w io.Writer, cfg agent.Config, log *slog.Logger) inbox.AgentRunner {
	if !cfg.Configured() {
		fmt.Fprintln(w, "agents: no model endpoint (-model-base-url or -agents-config): an agent run replays the agent's recorded answer, so new mail fails with no_recorded_output until a model is configured")
		return inbox.ReplayRunner{}
	}
	for _, l := range cfg.Describe() {
		fmt.Fprintln(w, "agents: "+l)
	}
	return &agent.Runner{Config: cfg, Logger: log}
}

func billingProduct(*flag.FlagSet) productSetup {
	return productSetup{
		instructions: "Kobana Billing: customers, subscriptions, invoices and NF-e of the organization; resources under kobana://billing/.",
		seed:         func(a *assembly) error { return billing.SeedDemo(a.ctx, a.store, a.now()) },
		build: func(a *assembly) (*mcpserver.Product, error) {
			mp, _, err := billing.New(billing.Options{Store: a.store})
			return mp, err
		},
	}
}
