package billing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
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
	repo repo
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
	p := &Product{opts: opts, repo: repo{st: opts.Store}, now: opts.Now, max: opts.MaxResourceBytes}
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

// Page is the common pagination and ordering input of list tools.
type Page struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many records to return, 1-100 (default 20)" minimum:"1" maximum:"100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"pass next_cursor of the previous page to get the next one" maxLength:"1024"`
	Sort   string `json:"sort,omitempty" jsonschema:"a sortable field (see kobana://billing/schemas/{resource}), prefixed with - for descending; default -created_at (most recent first)" pattern:"^-?[a-z_]{1,64}$"`
}

// sorter compares two records by one field.
type sorter[T any] map[string]func(a, b T) int

// paginate orders items (already filtered, most recent first) and returns
// one page and the cursor of the next.
func paginate[T any](items []T, pg Page, sorts sorter[T]) ([]T, string, error) {
	limit := pg.Limit
	if limit == 0 {
		limit = 20
	}
	if limit < 1 || limit > 100 {
		return nil, "", mcpserver.Errorf("invalid_arguments", "limit must be between 1 and 100")
	}
	offset := 0
	if pg.Cursor != "" {
		n, err := strconv.Atoi(pg.Cursor)
		if err != nil || n < 0 {
			return nil, "", mcpserver.Errorf("invalid_arguments", "cursor %q is not a next_cursor this tool returned", pg.Cursor)
		}
		offset = n
	}
	if s := pg.Sort; s != "" && s != "-created_at" {
		desc := strings.HasPrefix(s, "-")
		field := strings.TrimPrefix(s, "-")
		cmpf, ok := sorts[field]
		if !ok {
			names := make([]string, 0, len(sorts))
			for k := range sorts {
				names = append(names, k)
			}
			slices.Sort(names)
			return nil, "", mcpserver.Errorf("invalid_arguments", "cannot sort by %q; sortable fields: %s (prefix - for descending)", field, strings.Join(names, ", "))
		}
		slices.SortStableFunc(items, func(a, b T) int {
			if desc {
				return cmpf(b, a)
			}
			return cmpf(a, b)
		})
	}
	if offset >= len(items) {
		return []T{}, "", nil
	}
	end := min(offset+limit, len(items))
	next := ""
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return items[offset:end], next, nil
}

func byTime(a, b time.Time) int { return a.Compare(b) }

func byString(a, b string) int { return cmp.Compare(a, b) }

// nextNumber returns the next number of an organization's counter (start
// the first time), unique across every replica sharing the store. A counter
// that earlier versions kept as a record of KindCounter is continued from
// its last value, never restarted.
func (p *Product) nextNumber(ctx context.Context, org, name string, start int64) (int64, error) {
	var legacy struct {
		Value int64 `json:"value"`
	}
	if _, err := p.repo.get(ctx, org, KindCounter, name, &legacy); err == nil {
		start = max(start, legacy.Value+1)
	} else if !errors.Is(err, mcpserver.ErrNotFound) {
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
