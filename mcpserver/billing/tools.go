package billing

import "github.com/kobana/workflow/mcpserver"

// Tool names. Resources, prompts and completions refer to tools by these.
const (
	ToolOrganizationGet      = "billing_organization_get"
	ToolSchemasList          = "billing_schemas_list"
	ToolSchemasGet           = "billing_schemas_get"
	ToolCustomersList        = "billing_customers_list"
	ToolCustomersGet         = "billing_customers_get"
	ToolCustomersCreate      = "billing_customers_create"
	ToolCustomersUpdate      = "billing_customers_update"
	ToolCustomersDelete      = "billing_customers_delete"
	ToolSubscriptionsList    = "billing_subscriptions_list"
	ToolSubscriptionsGet     = "billing_subscriptions_get"
	ToolSubscriptionsCreate  = "billing_subscriptions_create"
	ToolSubscriptionsCancel  = "billing_subscriptions_cancel"
	ToolInvoicesList         = "billing_invoices_list"
	ToolInvoicesGet          = "billing_invoices_get"
	ToolInvoicesCreate       = "billing_invoices_create"
	ToolInvoicesCancel       = "billing_invoices_cancel"
	ToolInvoicesRefund       = "billing_invoices_refund"
	ToolInvoicesSendReminder = "billing_invoices_send_reminder"
	ToolNFesList             = "billing_nfes_list"
	ToolNFesGet              = "billing_nfes_get"
	ToolNFesEmit             = "billing_nfes_emit"
	ToolNFesCancel           = "billing_nfes_cancel"
)

// tools declares every tool: its spec beside its handler (and, for a
// destructive tool, the check that runs before the user is asked). The
// order is tools/list's.
func (p *Product) tools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolOrganizationGet, Title: "Get the organization",
			Description: "Returns the token's organization as issuer: legal name, CNPJ, address, NF-e series, and whether its fiscal profile is complete enough to issue NF-e.",
			Access:      mcpserver.Read, Idempotent: true},
			p.organizationGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSchemasList, Title: "List API resources",
			Description: "Lists the catalog of Billing API resources (organization, customers, subscriptions, invoices, nfes) with their schema URIs. Use billing_schemas_get for a resource's fields.",
			Access:      mcpserver.Read, Idempotent: true},
			p.schemasList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSchemasGet, Title: "Describe an API resource",
			Description: "Describes the fields of one Billing API resource: type, allowed values (enum), meaning, and which fields the list tool can sort by. Use it before filtering or sorting a listing.",
			Access:      mcpserver.Read, Idempotent: true},
			p.schemasGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolCustomersList, Title: "List customers",
			Description: "Lists the organization's customers, most recent first, optionally searching name, e-mail or document and sorting by a sortable field. Returns next_cursor when there are more.",
			Access:      mcpserver.Read, Idempotent: true},
			p.customersList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolCustomersGet, Title: "Get a customer",
			Description: "Returns one customer: contact, CPF/CNPJ and address. Use billing_invoices_list with customer_id for its invoices.",
			Access:      mcpserver.Read, Idempotent: true},
			p.customersGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolCustomersCreate, Title: "Create a customer",
			Description: "Creates a customer to bill. The CPF or CNPJ is checked (check digits); a document and a complete address are needed before NF-e can be issued for the customer.",
			Access:      mcpserver.Write},
			p.customersCreate),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolCustomersUpdate, Title: "Update a customer",
			Description: "Changes a customer's name, e-mail, CPF/CNPJ, phone or address; fields left out stay as they are. Invoices already issued keep the name they were issued with.",
			Access:      mcpserver.Write, Idempotent: true},
			p.customersUpdate),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolCustomersDelete, Title: "Delete a customer",
			Description: "Deletes a customer for good. Refused while the customer has an active subscription or an open or overdue invoice: cancel those first. Paid, cancelled and refunded invoices keep the customer's name.",
			Access:      mcpserver.Write, Destructive: true},
			p.customersDelete), p.checkCustomerDelete),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSubscriptionsList, Title: "List subscriptions",
			Description: "Lists recurring subscriptions, most recent first, by customer and status (active, cancelled), optionally sorted by amount_cents, start_date, next_billing_date or created_at.",
			Access:      mcpserver.Read, Idempotent: true},
			p.subscriptionsList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSubscriptionsGet, Title: "Get a subscription",
			Description: "Returns one subscription: customer, amount, interval, status and next billing date.",
			Access:      mcpserver.Read, Idempotent: true},
			p.subscriptionsGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSubscriptionsCreate, Title: "Create a subscription",
			Description: "Records a recurring charge: a fixed amount billed to a customer every month or year from start_date, with its next billing date. Issue each period's invoice with billing_invoices_create and subscription_id.",
			Access:      mcpserver.Write},
			p.subscriptionsCreate),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolSubscriptionsCancel, Title: "Cancel a subscription",
			Description: "Cancels an active subscription: it issues no more invoices. Invoices already issued stay as they are (cancel them one by one if needed). A cancelled subscription cannot be resumed; create a new one.",
			Access:      mcpserver.Write, Destructive: true},
			p.subscriptionsCancel), p.checkSubscriptionCancel),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInvoicesList, Title: "List invoices",
			Description: "Lists invoices, most recent first, filtered by customer, subscription, status (open, overdue, paid, cancelled, refunded), due-date range or lack of NF-e; sortable by number, amount_cents, issue_date, due_date, days_overdue, paid_at, created_at. Each invoice describes its PDF (URI, type); read the PDF as the resource kobana://billing/invoices/{id}/pdf.",
			Access:      mcpserver.Read, Idempotent: true},
			p.invoicesList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInvoicesGet, Title: "Get an invoice",
			Description: "Returns one invoice: customer, items, amount, due date, status (overdue = open past due), payment, reminders, its NF-e id and its PDF described by URI, type and size (the PDF itself is the resource kobana://billing/invoices/{id}/pdf).",
			Access:      mcpserver.Read, Idempotent: true},
			p.invoicesGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInvoicesCreate, Title: "Create an invoice",
			Description: "Issues an open invoice to a customer, from items or a single amount, due on due_date. Amounts are cents of BRL. Issue its NF-e afterwards with billing_nfes_emit.",
			Access:      mcpserver.Write},
			p.invoicesCreate),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInvoicesCancel, Title: "Cancel an invoice",
			Description: "Cancels an open or overdue invoice so that it can no longer be paid. Refused for a paid invoice (refund it instead) and while it has an authorized NF-e (cancel the NF-e first with billing_nfes_cancel).",
			Access:      mcpserver.Write, Destructive: true},
			p.invoicesCancel), p.checkInvoiceCancel),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInvoicesRefund, Title: "Refund an invoice",
			Description: "Refunds a paid invoice in full and marks it refunded, with the reason. Only paid invoices can be refunded; an open or overdue one is cancelled instead (billing_invoices_cancel).",
			Access:      mcpserver.Write, Destructive: true},
			p.invoicesRefund), p.checkInvoiceRefund),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolInvoicesSendReminder, Title: "Send a payment reminder",
			Description: "Queues a payment reminder e-mail to the customer of an open or overdue invoice (amount, due date, days overdue, an optional personal note) and counts it on the invoice. At most one reminder per invoice every 24 hours; the customer needs an e-mail address.",
			Access:      mcpserver.Write},
			p.invoicesSendReminder),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolNFesList, Title: "List NF-e",
			Description: "Lists NF-e, most recent first, by status (authorized, rejected with SEFAZ's reason, pending, cancelled), invoice or customer; sortable by number, amount_cents, issued_at, authorized_at, created_at.",
			Access:      mcpserver.Read, Idempotent: true},
			p.nfesList),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolNFesGet, Title: "Get an NF-e",
			Description: "Returns one NF-e: number, series, 44-digit access key, status, SEFAZ rejection reason or authorization protocol, and its DANFE PDF and XML described by URI, type and size (read them as the resources kobana://billing/nfes/{id}/pdf and …/xml).",
			Access:      mcpserver.Read, Idempotent: true},
			p.nfesGet),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolNFesEmit, Title: "Issue an NF-e",
			Description: "Issues the NF-e of an open, overdue or paid invoice in the homologation environment (tpAmb 2, no fiscal value), checking the recipient as SEFAZ does: the answer is authorized (with protocol, DANFE and XML) or rejected (with SEFAZ's code and reason; fix the cause, e.g. the customer's CPF/CNPJ or address with billing_customers_update, and emit again). Refused when the invoice already has an authorized or pending NF-e.",
			Access:      mcpserver.Write},
			p.nfesEmit),
		mcpserver.WithCheck(mcpserver.NewTool(mcpserver.ToolSpec{Name: ToolNFesCancel, Title: "Cancel an NF-e",
			Description: "Cancels an authorized NF-e with a 15-255 character justification (SEFAZ's xJust), recording the cancellation protocol. Only within 24 hours of authorization; pending and rejected NF-e cannot be cancelled. The invoice stays as it is.",
			Access:      mcpserver.Write, Destructive: true},
			p.nfesCancel), p.checkNFeCancel),
	}
}
