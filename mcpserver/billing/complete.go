package billing

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// idSource is where suggestions for an id come from: a record kind and the
// listing tool the caller must be allowed to run.
type idSource struct {
	kind, tool string
}

var templateSources = map[string]idSource{
	URIPrefix + "customers/{id}":     {KindCustomer, "billing_customers_list"},
	URIPrefix + "subscriptions/{id}": {KindSubscription, "billing_subscriptions_list"},
	URIPrefix + "invoices/{id}":      {KindInvoice, "billing_invoices_list"},
	URIPrefix + "invoices/{id}/pdf":  {KindInvoice, "billing_invoices_list"},
	URIPrefix + "nfes/{id}":          {KindNFe, "billing_nfes_list"},
	URIPrefix + "nfes/{id}/pdf":      {KindNFe, "billing_nfes_list"},
	URIPrefix + "nfes/{id}/xml":      {KindNFe, "billing_nfes_list"},
}

var promptSources = map[string]idSource{
	"customer_id": {KindCustomer, "billing_customers_list"},
}

// complete implements mcpserver.CompleteFunc for Billing.
func (p *Product) complete(ctx context.Context, c *mcpserver.Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, _ map[string]string) ([]string, error) {
	var src idSource
	switch ref.Type {
	case "ref/prompt":
		if arg.Name == "month" {
			return p.months(arg.Value), nil
		}
		s, ok := promptSources[arg.Name]
		if !ok {
			return nil, nil
		}
		src = s
	case "ref/resource":
		if ref.URI == URIPrefix+"schemas/{resource}" && arg.Name == "resource" {
			if !c.May("billing_schemas_list") {
				return nil, nil
			}
			return schemaNames(arg.Value), nil
		}
		s, ok := templateSources[ref.URI]
		if !ok || arg.Name != "id" {
			return nil, nil
		}
		src = s
	default:
		return nil, nil
	}
	if !c.May(src.tool) {
		return nil, nil
	}
	recs, err := p.opts.Store.ListRecords(ctx, c.Organization, src.kind, store.Query{Prefix: arg.Value, Limit: 100})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out, nil
}

// months returns the last twelve months, current first, matching prefix.
func (p *Product) months(prefix string) []string {
	now := p.now().In(brt)
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, brt)
	out := make([]string, 0, 12)
	for i := range 12 {
		m := first.AddDate(0, -i, 0).Format("2006-01")
		if strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}
