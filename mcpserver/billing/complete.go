package billing

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
)

var templateSources = map[string]mcpserver.IDSource{
	URIPrefix + "customers/{id}":     {Kind: KindCustomer, Tool: "billing_customers_list"},
	URIPrefix + "subscriptions/{id}": {Kind: KindSubscription, Tool: "billing_subscriptions_list"},
	URIPrefix + "invoices/{id}":      {Kind: KindInvoice, Tool: "billing_invoices_list"},
	URIPrefix + "invoices/{id}/pdf":  {Kind: KindInvoice, Tool: "billing_invoices_list"},
	URIPrefix + "nfes/{id}":          {Kind: KindNFe, Tool: "billing_nfes_list"},
	URIPrefix + "nfes/{id}/pdf":      {Kind: KindNFe, Tool: "billing_nfes_list"},
	URIPrefix + "nfes/{id}/xml":      {Kind: KindNFe, Tool: "billing_nfes_list"},
}

var promptSources = map[string]mcpserver.IDSource{
	"customer_id": {Kind: KindCustomer, Tool: "billing_customers_list"},
}

// completer suggests Billing ids and months; records live per organization
// and months are counted in Brasília time.
func (p *Product) completer() *mcpserver.IDCompleter {
	return &mcpserver.IDCompleter{
		Records:   p.opts.Store,
		Owner:     func(c *mcpserver.Caller) string { return c.Organization },
		Templates: templateSources,
		Prompts:   promptSources,
		Now:       p.now,
		Location:  brt,
	}
}

// complete implements mcpserver.CompleteFunc for Billing: schema names for
// the catalog template, the rest from the declared sources.
func (p *Product) complete(ctx context.Context, c *mcpserver.Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, args map[string]string) ([]string, error) {
	if ref.Type == "ref/resource" && ref.URI == URIPrefix+"schemas/{resource}" && arg.Name == "resource" {
		if !c.May("billing_schemas_list") {
			return nil, nil
		}
		return schemaNames(arg.Value), nil
	}
	return p.completer().Complete(ctx, c, ref, arg, args)
}
