package inboxmcp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// Options are the Inbox product's dependencies.
type Options struct {
	Store store.Store
	// Processor runs emails_reprocess once the user confirmed (the
	// pipeline's, pipeline.Pipeline.Processor); nil refuses every reprocess
	// with CodeReprocessUnavailable.
	Processor inbox.Processor
	// Messages opens raw messages for downloads and dry runs; nil means
	// inbox.BlobMessages over Store.
	Messages inbox.Messages
	// Guard is the SSRF guard the workflow runs go through, so that
	// workflows_plan judges addresses as they will; nil is the deny-list
	// only.
	Guard *guard.Guard
	// HTTPClient sends webhook deliveries. It must be the SSRF-guarded
	// client (no redirects, dial-time address checks); nil refuses to send.
	HTTPClient *http.Client
	// PublicURL is the base URL of this server's HTTP endpoint, used in
	// signed download links (e.g. http://127.0.0.1:8080).
	PublicURL string
	// MailDomain is the domain inboxes receive under (LOCAL@WORKSPACE.DOMAIN,
	// the intake's); empty means inbox.DefaultMailDomain. A workspace with
	// its own mail domain receives at LOCAL@ITS_DOMAIN instead.
	MailDomain string
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
	if opts.MailDomain == "" {
		opts.MailDomain = inbox.DefaultMailDomain
	}
	p := &Product{opts: opts, repo: inbox.NewRepo(opts.Store), now: opts.Now}
	if p.now == nil {
		p.now = time.Now
	}
	if p.opts.Messages == nil {
		p.opts.Messages = inbox.BlobMessages{Blobs: opts.Store}
	}
	if p.opts.Processor == nil {
		p.opts.Processor = unavailable{}
	}
	mp := &mcpserver.Product{
		Name:      "inbox",
		Tools:     p.tools(),
		Resources: p.resources(),
		Prompts:   p.prompts(),
		Complete:  p.complete,
		Completer: p.completer(),
		// Inbox never runs a destructive tool without the user's yes.
		Policy: mcpserver.Policy{DeclineCode: DeclineCode, LegacyRunsDirectly: false},
	}
	return mp, p, nil
}

// CodeReprocessUnavailable refuses emails_reprocess on a server that runs
// no pipeline to process e-mails with.
const CodeReprocessUnavailable = "reprocess_unavailable"

// unavailable is the Processor of a product given none.
type unavailable struct{}

func (unavailable) Check(context.Context, inbox.ReprocessRequest) error {
	return inbox.Errorf(CodeReprocessUnavailable, "this server runs no pipeline that processes e-mails, so nothing can be reprocessed here")
}

func (u unavailable) Reprocess(ctx context.Context, req inbox.ReprocessRequest) (inbox.Reprocessed, error) {
	return inbox.Reprocessed{}, u.Check(ctx, req)
}

// event appends an entry to the workspace's event log.
func (p *Product) event(ctx context.Context, c *mcpserver.Caller, typ, subject string, payload any) error {
	e, err := inbox.NewEvent(typ, inbox.PersonActor(c.Person), subject, payload, p.now())
	if err != nil {
		return err
	}
	return p.repo.Events.Put(ctx, c.Workspace, e)
}

// toolError turns the domain's refusals into tool errors with their codes.
func toolError(err error) error {
	var de *inbox.Error
	if errors.As(err, &de) {
		return mcpserver.Errorf(de.Code, "%s", de.Message)
	}
	return err
}

// Page is the pagination input of list tools: mcpserver's one contract.
type Page = mcpserver.Page

// listPage is one page of a listing, its cursor errors answered as the
// caller's.
func listPage[T any](ctx context.Context, r store.Repo[T], ws string, q store.Query) ([]T, string, error) {
	page, err := r.List(ctx, ws, q)
	if err != nil {
		return nil, "", mcpserver.PageError(err)
	}
	return page.Items, page.Next, nil
}

func required(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return mcpserver.Errorf("invalid_arguments", "%s is required", name)
	}
	return nil
}

func (p *Product) workspace(ctx context.Context, ws string) (inbox.Workspace, error) {
	return p.repo.Workspaces.Get(ctx, ws, ws)
}
