package billing

import (
	"cmp"
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

var templateSources = map[string]mcpserver.IDSource{
	URIPrefix + "customers/{id}":     {Kind: KindCustomer, Tool: ToolCustomersList},
	URIPrefix + "subscriptions/{id}": {Kind: KindSubscription, Tool: ToolSubscriptionsList},
	URIPrefix + "invoices/{id}":      {Kind: KindInvoice, Tool: ToolInvoicesList},
	URIPrefix + "invoices/{id}/pdf":  {Kind: KindInvoice, Tool: ToolInvoicesList},
	URIPrefix + "nfes/{id}":          {Kind: KindNFe, Tool: ToolNFesList},
}

// documentTemplates are the NF-e templates whose document exists only for
// an authorized (or later cancelled) NF-e: they suggest only those.
var documentTemplates = []string{URIPrefix + "nfes/{id}/pdf", URIPrefix + "nfes/{id}/xml"}

var promptSources = map[string]mcpserver.IDSource{
	"customer_id": {Kind: KindCustomer, Tool: ToolCustomersList},
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
// the catalog template, documented NF-e for their documents, the rest from
// the declared sources.
func (p *Product) complete(ctx context.Context, c *mcpserver.Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, args map[string]string) ([]string, error) {
	if ref.Type == "ref/resource" {
		switch {
		case ref.URI == URIPrefix+"schemas/{resource}" && arg.Name == "resource":
			if !c.May(ToolSchemasList) {
				return nil, nil
			}
			return schemaNames(arg.Value), nil
		case slices.Contains(documentTemplates, ref.URI) && arg.Name == "id":
			return p.documentedNFes(ctx, c, arg.Value)
		}
	}
	return p.completer().Complete(ctx, c, ref, arg, args)
}

// documentedNFes are the ids, by prefix and most recent first, of the NF-e
// that have a DANFE and an XML (hasDocuments).
func (p *Product) documentedNFes(ctx context.Context, c *mcpserver.Caller, prefix string) ([]string, error) {
	if !c.May(ToolNFesList) {
		return nil, nil
	}
	var recs []store.Record
	for _, status := range []string{NFeAuthorized, NFeCancelled} {
		rs, err := p.opts.Store.ListRecords(ctx, c.Organization, KindNFe, store.Query{Prefix: prefix, Status: status, Limit: mcpserver.MaxSuggestions})
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	slices.SortFunc(recs, func(a, b store.Record) int {
		return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(b.ID, a.ID))
	})
	out := make([]string, 0, min(len(recs), mcpserver.MaxSuggestions))
	for _, r := range recs[:min(len(recs), mcpserver.MaxSuggestions)] {
		out = append(out, r.ID)
	}
	return out, nil
}
