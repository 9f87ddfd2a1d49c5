package billing

import (
	"context"

	"github.com/kobana/workflow/mcpserver"
)

// organization returns the caller's billing profile; an organization that
// never set one up gets an empty profile that cannot issue NF-e yet.
func (p *Product) organization(ctx context.Context, org string) (Organization, error) {
	o, err := p.repo.orgs.Get(ctx, org, org)
	if err != nil {
		if !isNotFound(err) {
			return o, err
		}
		o = Organization{ID: org, Currency: Currency, NFeSeries: 1}
	}
	o.FiscalProfileComplete = ValidCNPJ(o.CNPJ) && o.Address.complete() && o.LegalName != ""
	return o, nil
}

func (p *Product) organizationGet(ctx context.Context, c *mcpserver.Caller, _ NoArgs) (Organization, error) {
	return p.organization(ctx, c.Organization)
}
