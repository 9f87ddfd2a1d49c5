package billing

import (
	"context"
	"strings"

	"github.com/kobana/workflow/mcpserver"
)

// SchemaField describes one field of an API resource.
type SchemaField struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Format      string   `json:"format,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description"`
	// Sortable fields may be passed as sort to the resource's list tool.
	Sortable bool `json:"sortable"`
}

// Schema describes an API resource: its fields and the tools that serve it.
type Schema struct {
	Resource    string        `json:"resource"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	URI         string        `json:"uri"`
	Tools       []string      `json:"tools"`
	Fields      []SchemaField `json:"fields"`
}

// SchemaSummary is one entry of the catalog.
type SchemaSummary struct {
	Resource    string `json:"resource"`
	Title       string `json:"title"`
	Description string `json:"description"`
	URI         string `json:"uri"`
}

// SchemaCatalog lists the API resources.
type SchemaCatalog struct {
	Schemas []SchemaSummary `json:"schemas"`
}

func field(name, typ, desc string) SchemaField {
	return SchemaField{Name: name, Type: typ, Description: desc}
}

func (f SchemaField) sorts() SchemaField               { f.Sortable = true; return f }
func (f SchemaField) enum(v ...string) SchemaField     { f.Enum = v; return f }
func (f SchemaField) format(format string) SchemaField { f.Format = format; return f }

var addressField = field("address", "object", "postal address: street, number, complement, neighborhood, city, city_code (IBGE, 7 digits), state (UF), zip (CEP, 8 digits)")

// Schemas is the catalog of Billing's API resources, in catalog order.
var Schemas = []Schema{
	{Resource: "organization", Title: "Organization", Description: "The token's organization as issuer of invoices and NF-e: legal name, CNPJ, address.",
		Tools: []string{ToolOrganizationGet},
		Fields: []SchemaField{
			field("id", "string", "organization id"),
			field("name", "string", "trade name"),
			field("legal_name", "string", "legal name (razão social), printed on invoices and NF-e"),
			field("cnpj", "string", "CNPJ, 14 digits"),
			field("state_registration", "string", "state registration (inscrição estadual)"),
			field("email", "string", "billing e-mail, sender of reminders").format("email"),
			addressField,
			field("currency", "string", "currency of every amount").enum(Currency),
			field("nfe_series", "integer", "series of the NF-e the organization issues"),
			field("fiscal_profile_complete", "boolean", "whether NF-e can be issued (CNPJ and address present)"),
			field("created_at", "string", "when the billing profile was created").format("date-time"),
		}},
	{Resource: "customers", Title: "Customers", Description: "People and companies the organization bills.",
		Tools: []string{ToolCustomersList, ToolCustomersGet, ToolCustomersCreate, ToolCustomersUpdate, ToolCustomersDelete},
		Fields: []SchemaField{
			field("id", "string", "customer id (cus_…)"),
			field("name", "string", "name or legal name").sorts(),
			field("email", "string", "where invoices and reminders go").format("email").sorts(),
			field("document", "string", "CPF (11 digits) or CNPJ (14 digits), check digits validated"),
			field("document_type", "string", "which document the customer has").enum("cpf", "cnpj"),
			field("phone", "string", "phone number, digits"),
			addressField,
			field("created_at", "string", "when the customer was created").format("date-time").sorts(),
			field("updated_at", "string", "last change").format("date-time").sorts(),
		}},
	{Resource: "subscriptions", Title: "Subscriptions", Description: "Recurring charges: a fixed amount billed to a customer every month or year.",
		Tools: []string{ToolSubscriptionsList, ToolSubscriptionsGet, ToolSubscriptionsCreate, ToolSubscriptionsCancel},
		Fields: []SchemaField{
			field("id", "string", "subscription id (sub_…)"),
			field("customer_id", "string", "the customer billed"),
			field("description", "string", "plan or service, printed on its invoices"),
			field("amount_cents", "integer", "amount per interval in cents of BRL (R$ 1,00 = 100)").sorts(),
			field("currency", "string", "currency").enum(Currency),
			field("interval", "string", "how often it bills").enum("monthly", "yearly"),
			field("status", "string", "active bills every interval; cancelled bills no more").enum(SubscriptionActive, SubscriptionCancelled),
			field("start_date", "string", "first billing day").format("date").sorts(),
			field("next_billing_date", "string", "next day the subscription bills (active only)").format("date").sorts(),
			field("cancelled_at", "string", "when it was cancelled").format("date-time"),
			field("cancel_reason", "string", "why it was cancelled"),
			field("created_at", "string", "when it was created").format("date-time").sorts(),
		}},
	{Resource: "invoices", Title: "Invoices", Description: "Charges to customers, with their payment status and PDF.",
		Tools: []string{ToolInvoicesList, ToolInvoicesGet, ToolInvoicesCreate, ToolInvoicesCancel, ToolInvoicesRefund, ToolInvoicesSendReminder},
		Fields: []SchemaField{
			field("id", "string", "invoice id (inv_…)"),
			field("number", "string", "sequential number printed on the invoice").sorts(),
			field("customer_id", "string", "the customer charged"),
			field("customer_name", "string", "the customer's name when the invoice was issued"),
			field("subscription_id", "string", "the subscription that issued it, if any"),
			field("description", "string", "what is charged"),
			field("items", "array", "lines: description, quantity, unit_price_cents, amount_cents"),
			field("amount_cents", "integer", "total in cents of BRL").sorts(),
			field("currency", "string", "currency").enum(Currency),
			field("issue_date", "string", "day it was issued").format("date").sorts(),
			field("due_date", "string", "day payment is due; the day after, an open invoice is overdue").format("date").sorts(),
			field("status", "string", "open: awaiting payment; overdue: open past its due date; paid; cancelled (never paid, cannot be charged); refunded (paid, then given back)").
				enum(InvoiceOpen, InvoiceOverdue, InvoicePaid, InvoiceCancelled, InvoiceRefunded),
			field("days_overdue", "integer", "days since the due date (overdue only)").sorts(),
			field("paid_at", "string", "when payment was confirmed").format("date-time").sorts(),
			field("paid_amount_cents", "integer", "amount received"),
			field("payment_method", "string", "how it was paid").enum("boleto", "pix", "credit_card"),
			field("reminders_sent", "integer", "payment reminders e-mailed so far"),
			field("last_reminder_at", "string", "when the last reminder was sent").format("date-time"),
			field("nfe_id", "string", "the NF-e issued for it (authorized, pending or last rejected)"),
			field("pdf", "object", "the invoice PDF: uri (kobana://billing/invoices/{id}/pdf), mime_type, size_bytes"),
			field("created_at", "string", "when it was created").format("date-time").sorts(),
		}},
	{Resource: "nfes", Title: "NF-e", Description: "Electronic invoices (NF-e modelo 55) issued for invoices, with their SEFAZ status, DANFE and XML.",
		Tools: []string{ToolNFesList, ToolNFesGet, ToolNFesEmit, ToolNFesCancel},
		Fields: []SchemaField{
			field("id", "string", "NF-e id (nfe_…)"),
			field("invoice_id", "string", "the invoice it documents"),
			field("customer_id", "string", "the recipient (destinatário)"),
			field("number", "integer", "NF-e number (nNF), sequential per series").sorts(),
			field("series", "integer", "series (série)"),
			field("access_key", "string", "44-digit access key (chave de acesso) with its modulo-11 check digit"),
			field("status", "string", "authorized: valid for tax purposes; rejected: SEFAZ refused it (see rejection); pending: awaiting SEFAZ; cancelled: authorized, then cancelled").
				enum(NFeAuthorized, NFeRejected, NFePending, NFeCancelled),
			field("rejection", "object", "rejected only: SEFAZ code (cStat) and message (xMotivo)"),
			field("protocol", "string", "authorization protocol (nProt)"),
			field("amount_cents", "integer", "total of the NF-e in cents (vNF)").sorts(),
			field("issuer", "object", "the organization as it was when the NF-e was issued (emitente): name, document, state_registration, address"),
			field("recipient", "object", "the customer as it was when the NF-e was issued (destinatário): name, document, document_type, email, address"),
			field("issued_at", "string", "emission time (dhEmi)").format("date-time").sorts(),
			field("authorized_at", "string", "authorization time").format("date-time").sorts(),
			field("cancelled_at", "string", "cancellation time").format("date-time"),
			field("pdf", "object", "the DANFE: uri (kobana://billing/nfes/{id}/pdf), mime_type, size_bytes (authorized or cancelled only)"),
			field("xml", "object", "the authorized nfeProc XML: uri (kobana://billing/nfes/{id}/xml), mime_type, size_bytes"),
			field("created_at", "string", "when it was requested").format("date-time").sorts(),
		}},
}

func schemaURI(resource string) string { return URIPrefix + "schemas/" + resource }

func init() {
	for i := range Schemas {
		Schemas[i].URI = schemaURI(Schemas[i].Resource)
	}
}

func catalog() SchemaCatalog {
	out := SchemaCatalog{Schemas: make([]SchemaSummary, 0, len(Schemas))}
	for _, s := range Schemas {
		out.Schemas = append(out.Schemas, SchemaSummary{Resource: s.Resource, Title: s.Title, Description: s.Description, URI: s.URI})
	}
	return out
}

func schemaFor(resource string) (Schema, error) {
	for _, s := range Schemas {
		if s.Resource == resource {
			return s, nil
		}
	}
	names := make([]string, 0, len(Schemas))
	for _, s := range Schemas {
		names = append(names, s.Resource)
	}
	return Schema{}, mcpserver.Errorf("not_found", "unknown resource %q; the catalog has %s", resource, strings.Join(names, ", "))
}

// sortableFields names the fields of a resource that sort.
func sortableFields(resource string) []string {
	s, _ := schemaFor(resource)
	var out []string
	for _, f := range s.Fields {
		if f.Sortable {
			out = append(out, f.Name)
		}
	}
	return out
}

// SchemaArg names a resource of the catalog.
type SchemaArg struct {
	Resource string `json:"resource" jsonschema:"a resource of the catalog: organization, customers, subscriptions, invoices or nfes" enum:"organization,customers,subscriptions,invoices,nfes"`
}

func (p *Product) schemasList(ctx context.Context, c *mcpserver.Caller, _ NoArgs) (SchemaCatalog, error) {
	return catalog(), nil
}

func (p *Product) schemasGet(ctx context.Context, c *mcpserver.Caller, in SchemaArg) (Schema, error) {
	if err := required("resource", in.Resource); err != nil {
		return Schema{}, err
	}
	return schemaFor(in.Resource)
}

// schemaNames returns catalog names with a prefix, in catalog order.
func schemaNames(prefix string) []string {
	var out []string
	for _, s := range Schemas {
		if strings.HasPrefix(s.Resource, prefix) {
			out = append(out, s.Resource)
		}
	}
	return out
}
