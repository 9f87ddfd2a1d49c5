package inboxmcp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// Options are the Inbox product's dependencies.
type Options struct {
	Store store.Store
	// Lint validates workflow documents for workflows_validate; nil leaves
	// that tool out.
	Lint LintFunc
	// Processor runs emails_reprocess once the user confirmed; nil means
	// inbox.Inline over Store with Messages, AgentRunner and Runner: the
	// stages run within the call.
	Processor inbox.Processor
	// Messages opens raw messages for downloads and the default Processor;
	// nil means inbox.BlobMessages over Store.
	Messages inbox.Messages
	// Runner executes workflows for the default Processor; nil refuses a
	// reprocess whose agent answers with a workflow
	// (workflow_runner_unavailable) and records nothing.
	Runner inbox.WorkflowRunner
	// AgentRunner runs agents for the default Processor; nil means
	// inbox.ReplayRunner.
	AgentRunner inbox.AgentRunner
	// HTTPClient sends webhook deliveries. It must be the SSRF-guarded
	// client (no redirects, dial-time address checks); nil refuses to send.
	HTTPClient *http.Client
	// PublicURL is the base URL of this server's HTTP endpoint, used in
	// signed download links (e.g. http://127.0.0.1:8080).
	PublicURL string
	// Environment is the kobana.env fact ("development", "sandbox",
	// "production"); empty means "development".
	Environment string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Product is the Inbox product.
type Product struct {
	opts Options
	repo inbox.Repo
	now  func() time.Time
}

// DeclineCode is what Inbox answers when the user declines a confirmation.
const DeclineCode = "user_declined"

// New builds the Inbox product.
func New(opts Options) (*mcpserver.Product, *Product, error) {
	if opts.Store == nil {
		return nil, nil, errors.New("inboxmcp: Options.Store is required")
	}
	if opts.Environment == "" {
		opts.Environment = "development"
	}
	p := &Product{opts: opts, repo: inbox.Repo{Store: opts.Store}, now: opts.Now}
	if p.now == nil {
		p.now = time.Now
	}
	if p.opts.Messages == nil {
		p.opts.Messages = inbox.BlobMessages{Blobs: opts.Store}
	}
	if p.opts.Processor == nil {
		p.opts.Processor = &inbox.Inline{Repo: p.repo, Secrets: opts.Store, Messages: p.opts.Messages,
			Agents: opts.AgentRunner, Workflows: opts.Runner, Environment: opts.Environment, AppURL: opts.PublicURL, Now: p.now}
	}
	mp := &mcpserver.Product{
		Name:      "inbox",
		Tools:     p.tools(),
		Resources: p.resources(),
		Prompts:   p.prompts(),
		Complete:  p.complete,
		// Inbox never runs a destructive tool without the user's yes.
		Policy: mcpserver.Policy{DeclineCode: DeclineCode, LegacyRunsDirectly: false},
	}
	return mp, p, nil
}

// event appends an entry to the workspace's event log.
func (p *Product) event(ctx context.Context, c *mcpserver.Caller, typ, subject string, payload any) error {
	e, err := inbox.NewEvent(typ, inbox.PersonActor(c.Person), subject, payload, p.now())
	if err != nil {
		return err
	}
	return p.repo.Put(ctx, c.Workspace, e)
}

// toolError turns the domain's refusals into tool errors with their codes.
func toolError(err error) error {
	var de *inbox.Error
	if errors.As(err, &de) {
		return mcpserver.Errorf(de.Code, "%s", de.Message)
	}
	return err
}

// Page is the common pagination input of list tools.
type Page struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many records to return, 1-100 (default 20), most recent first"`
	Before string `json:"before,omitempty" jsonschema:"the next_before of the previous page, to get the page after it (an RFC 3339 time also works: records created before it)"`
}

func (pg Page) query() (store.Query, error) {
	q := store.Query{Limit: pg.Limit}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	if q.Limit > 100 {
		return q, mcpserver.Errorf("invalid_arguments", "limit must be between 1 and 100")
	}
	if pg.Before != "" {
		ts, id, _ := strings.Cut(pg.Before, "|")
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return q, mcpserver.Errorf("invalid_arguments", "before must be the next_before of a previous page, or an RFC 3339 time such as 2026-11-01T00:00:00Z")
		}
		q.Before, q.BeforeID = t, id
	}
	return q, nil
}

// IDArg is the input of tools that address one record.
type IDArg struct {
	ID string `json:"id" jsonschema:"the record id"`
}

func required(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return mcpserver.Errorf("invalid_arguments", "%s is required", name)
	}
	return nil
}

func (p *Product) workspace(ctx context.Context, ws string) (inbox.Workspace, error) {
	return inbox.Get[inbox.Workspace](ctx, p.repo, ws, ws)
}
