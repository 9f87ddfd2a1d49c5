package billing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// URIPrefix is where every Billing resource lives.
const URIPrefix = "kobana://billing/"

// DeclineCode is what Billing answers when the user declines a confirmation.
const DeclineCode = "USER_DECLINED"

// MaxResourceBytes is the largest document a resource returns (10 MB).
const MaxResourceBytes = 10 << 20

// Store is what Billing persists through: its records, partitioned by
// organization id, and the counters that number invoices and NF-e.
type Store interface {
	store.Records
	store.Counters
	store.Transactor
}

// Options are the Billing product's dependencies.
type Options struct {
	// Store keeps Billing's records and numbers its documents.
	Store Store
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxResourceBytes caps a resource's document; zero means
	// MaxResourceBytes (10 MB).
	MaxResourceBytes int
}

// Product is the Billing product.
type Product struct {
	opts Options
	repo repos
	now  func() time.Time
	max  int
}

// Policy is Billing's confirmation policy: USER_DECLINED on decline,
// destructive tools run directly for clients that cannot be asked, and the
// question names the organization the call acts in.
var Policy = mcpserver.Policy{DeclineCode: DeclineCode, LegacyRunsDirectly: true,
	// Billing's records belong to the organization, not to a workspace.
	Where: func(c *mcpserver.Caller) string { return "organization " + c.Organization }}

// New builds the Billing product.
func New(opts Options) (*mcpserver.Product, *Product, error) {
	if opts.Store == nil {
		return nil, nil, errors.New("billing: Options.Store is required")
	}
	p := &Product{opts: opts, repo: newRepos(opts.Store), now: opts.Now, max: opts.MaxResourceBytes}
	if p.now == nil {
		p.now = time.Now
	}
	if p.max <= 0 {
		p.max = MaxResourceBytes
	}
	mp := &mcpserver.Product{
		Name:      "billing",
		Tools:     p.tools(),
		Resources: p.resources(),
		Prompts:   p.prompts(),
		Complete:  p.complete,
		Completer: p.completer(),
		Policy:    Policy,
	}
	return mp, p, nil
}

// brt is Brasília time (no daylight saving since 2019): due dates are
// calendar days there.
var brt = time.FixedZone("BRT", -3*60*60)

const dateLayout = "2006-01-02"

// today is the current calendar day in Brasília.
func (p *Product) today() string { return p.now().In(brt).Format(dateLayout) }

func parseDate(field, s string) (time.Time, error) {
	t, err := time.ParseInLocation(dateLayout, s, brt)
	if err != nil {
		return t, mcpserver.Errorf("invalid_arguments", "%s must be a date such as 2026-12-10 (YYYY-MM-DD), got %q", field, s)
	}
	return t, nil
}

func parseMonth(s string) (time.Time, error) {
	t, err := time.ParseInLocation("2006-01", s, brt)
	if err != nil || len(s) != 7 {
		return t, fmt.Errorf("month must be YYYY-MM, e.g. 2026-11, got %q", s)
	}
	return t, nil
}

func required(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return mcpserver.Errorf("invalid_arguments", "%s is required", name)
	}
	return nil
}

// Inputs naming one record. Each id has its kind's prefix (cus_, sub_,
// inv_, nfe_); the patterns say so, and the lookup is exact.

// CustomerIDArg names a customer.
type CustomerIDArg struct {
	ID string `json:"id" jsonschema:"the customer id, e.g. cus_acme (see billing_customers_list)" pattern:"^cus_[A-Za-z0-9_-]{1,64}$"`
}

// SubscriptionIDArg names a subscription.
type SubscriptionIDArg struct {
	ID string `json:"id" jsonschema:"the subscription id, e.g. sub_acme (see billing_subscriptions_list)" pattern:"^sub_[A-Za-z0-9_-]{1,64}$"`
}

// InvoiceIDArg names an invoice.
type InvoiceIDArg struct {
	ID string `json:"id" jsonschema:"the invoice id, e.g. inv_1001 (see billing_invoices_list)" pattern:"^inv_[A-Za-z0-9_-]{1,64}$"`
}

// NFeIDArg names an NF-e.
type NFeIDArg struct {
	ID string `json:"id" jsonschema:"the NF-e id, e.g. nfe_0001 (see billing_nfes_list)" pattern:"^nfe_[A-Za-z0-9_-]{1,64}$"`
}

// Page is the pagination and ordering input of list tools: mcpserver's
// one pagination contract and a sort.
type Page struct {
	mcpserver.Page
	Sort string `json:"sort,omitempty" jsonschema:"a sortable field (see kobana://billing/schemas/{resource}), prefixed with - for descending; default -created_at (most recent first)" pattern:"^-?[a-z_]{1,64}$"`
}

// sortKey is how a sortable field orders: by a stored field, inverted when
// the field grows as the sort key shrinks (days_overdue by due date).
type sortKey struct {
	field    store.Field
	inverted bool
}

// sortable maps the sortable fields of a listing to their keys.
type sortable map[string]sortKey

// query is the store query of a page and its sort. Filters pushed into the
// store and the order run in the database over every record; the cursor
// belongs to this listing, filters and order included.
func (pg Page) query(sorts sortable, where ...store.Filter) (store.Query, error) {
	q, err := pg.Page.Query()
	if err != nil {
		return q, err
	}
	q.Where = where
	if s := pg.Sort; s != "" && s != "-created_at" {
		desc := strings.HasPrefix(s, "-")
		name := strings.TrimPrefix(s, "-")
		k, ok := sorts[name]
		if !ok {
			names := make([]string, 0, len(sorts))
			for n := range sorts {
				names = append(names, n)
			}
			slices.Sort(names)
			return q, mcpserver.Errorf("invalid_arguments", "cannot sort by %q; sortable fields: %s (prefix - for descending)", name, strings.Join(names, ", "))
		}
		q.Order = store.Order{By: k.field, Asc: desc == k.inverted}
	}
	return q, nil
}

// nextNumber returns the next number of an organization's counter (start
// the first time), unique across every replica sharing the store. A counter
// that earlier versions kept as a record of KindCounter is continued from
// its last value, never restarted.
func (p *Product) nextNumber(ctx context.Context, org, name string, start int64) (int64, error) {
	if legacy, err := p.repo.counters.Get(ctx, org, name); err == nil {
		start = max(start, legacy.Value+1)
	} else if !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	n, err := p.opts.Store.NextNumber(ctx, org, name, start)
	if err != nil {
		return 0, fmt.Errorf("numbering %s: %w", name, err)
	}
	return n, nil
}

// NoArgs is the input of tools that take no arguments.
type NoArgs struct{}
