package billing

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
)

// document serves rendered bytes as a resource, refusing documents over
// the product's size cap. Binary types go base64 in blob, text as text.
func (p *Product) document(uri, mime string, b []byte) (*mcp.ResourceContents, error) {
	if len(b) > p.max {
		return nil, mcpserver.Errorf("resource_too_large", "%s is %d bytes, over the %d-byte (%d MB) limit of resources; its tool describes it without the content",
			uri, len(b), p.max, p.max>>20)
	}
	if mime == "application/pdf" {
		return &mcp.ResourceContents{URI: uri, MIMEType: mime, Blob: b}, nil
	}
	return &mcp.ResourceContents{URI: uri, MIMEType: mime, Text: string(b)}, nil
}

func (p *Product) nfeWithDocuments(ctx context.Context, org, id string) (nfeDoc, error) {
	n, err := p.getNFe(ctx, org, id)
	if err != nil {
		return nfeDoc{}, err
	}
	if !hasDocuments(n) {
		return nfeDoc{}, mcpserver.Errorf("no_document", "NF-e %s is %s: only an authorized (or later cancelled) NF-e has a DANFE and an authorized XML", n.ID, n.Status)
	}
	return p.nfeDocument(ctx, org, n)
}

func (p *Product) resources() []mcpserver.Resource {
	type readFunc = func(ctx context.Context, c *mcpserver.Caller, uri string, params map[string]string) (any, error)
	tmpl := func(path, name, title, desc, tool, mime string, read readFunc) mcpserver.Resource {
		return mcpserver.Resource{Template: URIPrefix + path, Name: name, Title: title, Description: desc, Tool: tool, MIMEType: mime, Read: read}
	}
	return []mcpserver.Resource{
		{URI: URIPrefix + "organization", Name: "organization", Title: "Organization",
			Description: "The token's organization as issuer: legal name, CNPJ, address, NF-e series (JSON).", Tool: ToolOrganizationGet, MIMEType: "application/json",
			Read: func(ctx context.Context, c *mcpserver.Caller, _ string, _ map[string]string) (any, error) {
				return p.organization(ctx, c.Organization)
			}},
		{URI: URIPrefix + "schemas", Name: "schemas", Title: "API resource catalog",
			Description: "The catalog of Billing API resources with their schema URIs (JSON).", Tool: ToolSchemasList, MIMEType: "application/json",
			Read: func(ctx context.Context, c *mcpserver.Caller, _ string, _ map[string]string) (any, error) {
				return catalog(), nil
			}},
		tmpl("schemas/{resource}", "schema", "API resource schema",
			"The fields of one API resource: type, enum, meaning, and which sort (JSON).", ToolSchemasGet, "application/json",
			func(ctx context.Context, c *mcpserver.Caller, _ string, params map[string]string) (any, error) {
				return schemaFor(params["resource"])
			}),
		tmpl("customers/{id}", "customer", "Customer", "One customer: contact, CPF/CNPJ and address (JSON).", ToolCustomersGet, "application/json",
			func(ctx context.Context, c *mcpserver.Caller, _ string, params map[string]string) (any, error) {
				return p.getCustomer(ctx, c.Organization, params["id"])
			}),
		tmpl("subscriptions/{id}", "subscription", "Subscription", "One subscription: customer, amount, interval, status, next billing date (JSON).",
			ToolSubscriptionsGet, "application/json",
			func(ctx context.Context, c *mcpserver.Caller, _ string, params map[string]string) (any, error) {
				return p.getSubscription(ctx, c.Organization, params["id"])
			}),
		tmpl("invoices/{id}", "invoice", "Invoice", "One invoice: customer, items, amount, due date, status, payment, NF-e and PDF description (JSON).",
			ToolInvoicesGet, "application/json",
			func(ctx context.Context, c *mcpserver.Caller, _ string, params map[string]string) (any, error) {
				inv, err := p.getInvoice(ctx, c.Organization, params["id"])
				if err != nil {
					return nil, err
				}
				pdf, err := p.invoicePDF(ctx, c.Organization, inv)
				if err != nil {
					return nil, err
				}
				inv.PDF.SizeBytes = len(pdf)
				return inv, nil
			}),
		tmpl("invoices/{id}/pdf", "invoice-pdf", "Invoice PDF", "The invoice as a PDF (base64 blob, application/pdf, at most 10 MB).",
			ToolInvoicesGet, "application/pdf",
			func(ctx context.Context, c *mcpserver.Caller, uri string, params map[string]string) (any, error) {
				inv, err := p.getInvoice(ctx, c.Organization, params["id"])
				if err != nil {
					return nil, err
				}
				pdf, err := p.invoicePDF(ctx, c.Organization, inv)
				if err != nil {
					return nil, err
				}
				return p.document(uri, "application/pdf", pdf)
			}),
		tmpl("nfes/{id}", "nfe", "NF-e", "One NF-e: number, series, access key, status, rejection or protocol, DANFE and XML description (JSON).",
			ToolNFesGet, "application/json",
			func(ctx context.Context, c *mcpserver.Caller, _ string, params map[string]string) (any, error) {
				n, err := p.getNFe(ctx, c.Organization, params["id"])
				if err != nil {
					return nil, err
				}
				return p.withSizes(ctx, c.Organization, n)
			}),
		tmpl("nfes/{id}/pdf", "nfe-danfe", "DANFE", "The DANFE of an authorized or cancelled NF-e as a PDF (base64 blob, application/pdf, at most 10 MB).",
			ToolNFesGet, "application/pdf",
			func(ctx context.Context, c *mcpserver.Caller, uri string, params map[string]string) (any, error) {
				d, err := p.nfeWithDocuments(ctx, c.Organization, params["id"])
				if err != nil {
					return nil, err
				}
				pdf, err := d.danfe()
				if err != nil {
					return nil, err
				}
				return p.document(uri, "application/pdf", pdf)
			}),
		tmpl("nfes/{id}/xml", "nfe-xml", "NF-e XML", "The authorized NF-e as an nfeProc XML document (text, application/xml).",
			ToolNFesGet, "application/xml",
			func(ctx context.Context, c *mcpserver.Caller, uri string, params map[string]string) (any, error) {
				d, err := p.nfeWithDocuments(ctx, c.Organization, params["id"])
				if err != nil {
					return nil, err
				}
				x, err := d.xml()
				if err != nil {
					return nil, fmt.Errorf("NF-e %s: %w", params["id"], err)
				}
				return p.document(uri, "application/xml", x)
			}),
	}
}
