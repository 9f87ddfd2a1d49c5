package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// InvoiceListArg filters billing_invoices_list.
type InvoiceListArg struct {
	Page
	CustomerID     string `json:"customer_id,omitempty" jsonschema:"only invoices of this customer" pattern:"^cus_[A-Za-z0-9_-]{1,64}$"`
	SubscriptionID string `json:"subscription_id,omitempty" jsonschema:"only invoices issued by this subscription" pattern:"^sub_[A-Za-z0-9_-]{1,64}$"`
	Status         string `json:"status,omitempty" jsonschema:"open (not yet due), overdue (open past its due date), paid, cancelled or refunded" enum:"open,overdue,paid,cancelled,refunded"`
	DueFrom        string `json:"due_from,omitempty" jsonschema:"only invoices due on or after this day (YYYY-MM-DD)" format:"date" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"`
	DueTo          string `json:"due_to,omitempty" jsonschema:"only invoices due on or before this day (YYYY-MM-DD)" format:"date" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"`
	WithoutNFe     bool   `json:"without_nfe,omitempty" jsonschema:"only invoices with no authorized or pending NF-e"`
}

// InvoiceList is a page of invoices.
type InvoiceList struct {
	Invoices   []Invoice `json:"invoices"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// InvoiceCreateArg creates an invoice.
type InvoiceCreateArg struct {
	CustomerID     string        `json:"customer_id" jsonschema:"the customer to charge" pattern:"^cus_[A-Za-z0-9_-]{1,64}$"`
	Description    string        `json:"description" jsonschema:"what is charged, printed on the invoice" minLength:"1" maxLength:"500"`
	Items          []InvoiceItem `json:"items,omitempty" jsonschema:"the lines; when absent, amount_cents makes one line with the description" maxItems:"200"`
	AmountCents    int64         `json:"amount_cents,omitempty" jsonschema:"total in cents of BRL when items are absent (R$ 150,00 = 15000)" minimum:"1" maximum:"100000000000"`
	DueDate        string        `json:"due_date" jsonschema:"payment due day, YYYY-MM-DD, today or later" format:"date" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"`
	SubscriptionID string        `json:"subscription_id,omitempty" jsonschema:"the customer's active subscription this invoice belongs to" pattern:"^sub_[A-Za-z0-9_-]{1,64}$"`
}

// InvoiceCancelArg cancels an invoice.
type InvoiceCancelArg struct {
	ID     string `json:"id" jsonschema:"the invoice id" pattern:"^inv_[A-Za-z0-9_-]{1,64}$"`
	Reason string `json:"reason,omitempty" jsonschema:"why it is cancelled, kept on the invoice" maxLength:"500"`
}

// InvoiceRefundArg refunds a paid invoice.
type InvoiceRefundArg struct {
	ID     string `json:"id" jsonschema:"the paid invoice to refund" pattern:"^inv_[A-Za-z0-9_-]{1,64}$"`
	Reason string `json:"reason" jsonschema:"why the customer is refunded, kept on the invoice" minLength:"1" maxLength:"500"`
}

// ReminderArg sends a payment reminder.
type ReminderArg struct {
	ID      string `json:"id" jsonschema:"the open or overdue invoice" pattern:"^inv_[A-Za-z0-9_-]{1,64}$"`
	Message string `json:"message,omitempty" jsonschema:"a personal note added to the standard reminder text" maxLength:"2000"`
}

// ReminderResult is what billing_invoices_send_reminder did.
type ReminderResult struct {
	Reminder Reminder `json:"reminder"`
	Invoice  Invoice  `json:"invoice"`
}

// invoiceSorts are the sortable fields of invoices. days_overdue sorts by
// due date, inverted: the longer overdue, the earlier the due date.
var invoiceSorts = sortable{
	"number":       {field: store.TextField("number")},
	"amount_cents": {field: store.NumberField("amount_cents")},
	"issue_date":   {field: store.TextField("issue_date")},
	"due_date":     {field: store.TextField("due_date")},
	"days_overdue": {field: store.TextField("due_date"), inverted: true},
	"paid_at":      {field: store.TimeField("paid_at")},
	"created_at":   {field: store.CreatedField},
}

// reminderInterval is the least time between two reminders of one invoice.
const reminderInterval = 24 * time.Hour

// view is an invoice as the API shows it: an open invoice past its due date
// is overdue, and its PDF is described.
func (p *Product) view(inv Invoice) Invoice {
	today := p.today()
	if inv.Status == InvoiceOpen && inv.DueDate < today {
		inv.Status = InvoiceOverdue
		due, _ := time.ParseInLocation(dateLayout, inv.DueDate, brt)
		now, _ := time.ParseInLocation(dateLayout, today, brt)
		inv.DaysOverdue = int(now.Sub(due).Hours() / 24)
	}
	inv.PDF = &FileInfo{URI: URIPrefix + "invoices/" + inv.ID + "/pdf", MIMEType: "application/pdf"}
	return inv
}

// storedStatus is the store's status of an invoice: overdue is kept as open.
func storedStatus(s string) string {
	if s == InvoiceOverdue {
		return InvoiceOpen
	}
	return s
}

func (p *Product) getInvoice(ctx context.Context, org, id string) (Invoice, error) {
	if err := required("id", id); err != nil {
		return Invoice{}, err
	}
	inv, err := p.repo.invoices.Get(ctx, org, id)
	if err != nil {
		return inv, err
	}
	return p.view(inv), nil
}

// putInvoice stores an invoice (given as viewed or as stored).
func (p *Product) putInvoice(ctx context.Context, org string, inv Invoice) error {
	return p.repo.invoices.Put(ctx, org, inv)
}

// invoiceQuery is the store query of a listing's filters, run by the
// database over every invoice: overdue is an open invoice due before today
// (in Brasília), open one due today or later.
func (p *Product) invoiceQuery(in InvoiceListArg) (store.Query, error) {
	var where []store.Filter
	due := store.TextField("due_date")
	switch in.Status {
	case "":
	case InvoiceOverdue:
		where = append(where, store.Eq(store.StatusField, InvoiceOpen), store.Less(due, p.today()))
	case InvoiceOpen:
		where = append(where, store.Eq(store.StatusField, InvoiceOpen), store.GreaterOrEqual(due, p.today()))
	case InvoicePaid, InvoiceCancelled, InvoiceRefunded:
		where = append(where, store.Eq(store.StatusField, in.Status))
	default:
		return store.Query{}, mcpserver.Errorf("invalid_arguments", "status must be open, overdue, paid, cancelled or refunded, got %q", in.Status)
	}
	if in.DueFrom != "" {
		if _, err := parseDate("due_from", in.DueFrom); err != nil {
			return store.Query{}, err
		}
		where = append(where, store.GreaterOrEqual(due, in.DueFrom))
	}
	if in.DueTo != "" {
		if _, err := parseDate("due_to", in.DueTo); err != nil {
			return store.Query{}, err
		}
		where = append(where, store.LessOrEqual(due, in.DueTo))
	}
	if in.SubscriptionID != "" {
		where = append(where, store.Eq(store.TextField("subscription_id"), in.SubscriptionID))
	}
	if in.WithoutNFe {
		// No NF-e, or its latest one was rejected or cancelled; invoices
		// stored before nfe_status existed are let through and checked one
		// by one (withoutNFe).
		nfeID, nfeStatus := store.TextField("nfe_id"), store.TextField("nfe_status")
		where = append(where, store.Any(store.Missing(nfeID), store.In(nfeStatus, NFeRejected, NFeCancelled), store.Missing(nfeStatus)))
	}
	q, err := in.query(invoiceSorts, where...)
	if err != nil {
		return q, err
	}
	q.Parent = in.CustomerID
	return q, nil
}

// listed turns stored invoices into the API's view, dropping those that a
// without_nfe listing let through only to check: invoices stored before
// nfe_status existed whose NF-e is authorized or pending.
func (p *Product) listed(ctx context.Context, org string, in InvoiceListArg, stored []Invoice) ([]Invoice, error) {
	out := make([]Invoice, 0, len(stored))
	for _, inv := range stored {
		if in.WithoutNFe && inv.NFeID != "" && inv.NFeStatus == "" {
			n, err := p.repo.nfes.Get(ctx, org, inv.NFeID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			if err == nil && (n.Status == NFeAuthorized || n.Status == NFePending) {
				continue
			}
		}
		out = append(out, p.view(inv))
	}
	return out, nil
}

// invoices returns every invoice a listing's filters keep, as viewed, in
// the listing's order.
func (p *Product) invoices(ctx context.Context, org string, in InvoiceListArg) ([]Invoice, error) {
	q, err := p.invoiceQuery(in)
	if err != nil {
		return nil, err
	}
	q.Limit = store.MaxLimit
	stored, err := p.repo.invoices.All(ctx, org, q)
	if err != nil {
		return nil, err
	}
	return p.listed(ctx, org, in, stored)
}

func (p *Product) invoicesList(ctx context.Context, c *mcpserver.Caller, in InvoiceListArg) (InvoiceList, error) {
	q, err := p.invoiceQuery(in)
	if err != nil {
		return InvoiceList{}, err
	}
	stored, next, err := listPage(ctx, p.repo.invoices, c.Organization, q)
	if err != nil {
		return InvoiceList{}, err
	}
	items, err := p.listed(ctx, c.Organization, in, stored)
	return InvoiceList{Invoices: items, NextCursor: next}, err
}

func (p *Product) invoicesGet(ctx context.Context, c *mcpserver.Caller, in InvoiceIDArg) (Invoice, error) {
	inv, err := p.getInvoice(ctx, c.Organization, in.ID)
	if err != nil {
		return inv, err
	}
	pdf, err := p.invoicePDF(ctx, c.Organization, inv)
	if err != nil {
		return inv, err
	}
	inv.PDF.SizeBytes = len(pdf)
	return inv, nil
}

func (p *Product) invoicesCreate(ctx context.Context, c *mcpserver.Caller, in InvoiceCreateArg) (Invoice, error) {
	return p.createInvoice(ctx, c, in)
}

// cancellableInvoice is the invoice a cancel acts on, when it can.
func (p *Product) cancellableInvoice(ctx context.Context, c *mcpserver.Caller, in InvoiceCancelArg) (Invoice, error) {
	inv, err := p.getInvoice(ctx, c.Organization, in.ID)
	if err != nil {
		return inv, err
	}
	switch inv.Status {
	case InvoicePaid:
		return inv, mcpserver.Errorf("invalid_state", "invoice %s is paid and cannot be cancelled; to give the money back use billing_invoices_refund", inv.ID)
	case InvoiceCancelled, InvoiceRefunded:
		return inv, mcpserver.Errorf("invalid_state", "invoice %s is already %s; nothing to cancel", inv.ID, inv.Status)
	}
	if inv.NFeID != "" {
		if n, err := p.repo.nfes.Get(ctx, c.Organization, inv.NFeID); err == nil {
			switch n.Status {
			case NFeAuthorized:
				return inv, mcpserver.Errorf("nfe_authorized", "invoice %s has the authorized NF-e %s (number %d); cancel it with billing_nfes_cancel before cancelling the invoice", inv.ID, n.ID, n.Number)
			case NFePending:
				return inv, mcpserver.Errorf("nfe_pending", "invoice %s has NF-e %s awaiting SEFAZ; wait for its outcome before cancelling the invoice", inv.ID, n.ID)
			}
		}
	}
	return inv, nil
}

// checkInvoiceCancel is billing_invoices_cancel's check.
func (p *Product) checkInvoiceCancel(ctx context.Context, c *mcpserver.Caller, in InvoiceCancelArg) error {
	_, err := p.cancellableInvoice(ctx, c, in)
	return err
}

func (p *Product) invoicesCancel(ctx context.Context, c *mcpserver.Caller, in InvoiceCancelArg) (Invoice, error) {
	inv, err := p.cancellableInvoice(ctx, c, in)
	if err != nil {
		return inv, err
	}
	now := p.now().UTC()
	inv.Status, inv.CancelledAt, inv.CancelReason, inv.UpdatedAt = InvoiceCancelled, now, strings.TrimSpace(in.Reason), now
	if err := p.putInvoice(ctx, c.Organization, inv); err != nil {
		return inv, err
	}
	return p.view(inv), nil
}

// refundableInvoice is the invoice a refund acts on, when it can.
func (p *Product) refundableInvoice(ctx context.Context, c *mcpserver.Caller, in InvoiceRefundArg) (Invoice, error) {
	if err := required("reason", in.Reason); err != nil {
		return Invoice{}, err
	}
	inv, err := p.getInvoice(ctx, c.Organization, in.ID)
	if err != nil {
		return inv, err
	}
	switch inv.Status {
	case InvoicePaid:
	case InvoiceRefunded:
		return inv, mcpserver.Errorf("invalid_state", "invoice %s was already refunded on %s", inv.ID, inv.RefundedAt.Format(time.RFC3339))
	default:
		return inv, mcpserver.Errorf("invalid_state", "invoice %s is %s, not paid: an unpaid invoice cannot be refunded (nothing was received); cancel an open or overdue invoice with billing_invoices_cancel", inv.ID, inv.Status)
	}
	return inv, nil
}

// checkInvoiceRefund is billing_invoices_refund's check.
func (p *Product) checkInvoiceRefund(ctx context.Context, c *mcpserver.Caller, in InvoiceRefundArg) error {
	_, err := p.refundableInvoice(ctx, c, in)
	return err
}

func (p *Product) invoicesRefund(ctx context.Context, c *mcpserver.Caller, in InvoiceRefundArg) (Invoice, error) {
	inv, err := p.refundableInvoice(ctx, c, in)
	if err != nil {
		return inv, err
	}
	now := p.now().UTC()
	inv.Status, inv.RefundedAt, inv.RefundReason, inv.UpdatedAt = InvoiceRefunded, now, strings.TrimSpace(in.Reason), now
	if err := p.putInvoice(ctx, c.Organization, inv); err != nil {
		return inv, err
	}
	return p.view(inv), nil
}

func (p *Product) invoicesSendReminder(ctx context.Context, c *mcpserver.Caller, in ReminderArg) (ReminderResult, error) {
	return p.sendReminder(ctx, c, in)
}

func (p *Product) createInvoice(ctx context.Context, c *mcpserver.Caller, in InvoiceCreateArg) (Invoice, error) {
	if err := required("customer_id", in.CustomerID); err != nil {
		return Invoice{}, err
	}
	if err := required("description", in.Description); err != nil {
		return Invoice{}, err
	}
	if err := required("due_date", in.DueDate); err != nil {
		return Invoice{}, err
	}
	if _, err := parseDate("due_date", in.DueDate); err != nil {
		return Invoice{}, err
	}
	today := p.today()
	if in.DueDate < today {
		return Invoice{}, mcpserver.Errorf("invalid_arguments", "due_date %s is in the past; use today (%s) or later", in.DueDate, today)
	}
	items := in.Items
	switch {
	case len(items) == 0 && in.AmountCents == 0:
		return Invoice{}, mcpserver.Errorf("invalid_arguments", "give items or amount_cents")
	case len(items) > 0 && in.AmountCents != 0:
		return Invoice{}, mcpserver.Errorf("invalid_arguments", "give items or amount_cents, not both: the total is computed from the items")
	case len(items) == 0:
		if err := checkAmount("amount_cents", in.AmountCents); err != nil {
			return Invoice{}, err
		}
		items = []InvoiceItem{{Description: strings.TrimSpace(in.Description), Quantity: 1, UnitPriceCents: in.AmountCents}}
	}
	if len(items) > 200 {
		return Invoice{}, mcpserver.Errorf("invalid_arguments", "an invoice has at most 200 items")
	}
	var total int64
	for i := range items {
		it := &items[i]
		if strings.TrimSpace(it.Description) == "" {
			return Invoice{}, mcpserver.Errorf("invalid_arguments", "items[%d].description is required", i)
		}
		if it.Quantity < 1 || it.Quantity > 1_000_000 {
			return Invoice{}, mcpserver.Errorf("invalid_arguments", "items[%d].quantity must be between 1 and 1000000", i)
		}
		if err := checkAmount(fmt.Sprintf("items[%d].unit_price_cents", i), it.UnitPriceCents); err != nil {
			return Invoice{}, err
		}
		it.Description = strings.TrimSpace(it.Description)
		it.AmountCents = it.Quantity * it.UnitPriceCents
		total += it.AmountCents
		if total > maxAmountCents {
			return Invoice{}, mcpserver.Errorf("invalid_arguments", "the invoice total exceeds R$ 1 bilhão")
		}
	}
	cu, err := p.getCustomer(ctx, c.Organization, in.CustomerID)
	if err != nil {
		return Invoice{}, err
	}
	if in.SubscriptionID != "" {
		s, err := p.getSubscription(ctx, c.Organization, in.SubscriptionID)
		if err != nil {
			return Invoice{}, err
		}
		if s.CustomerID != cu.ID {
			return Invoice{}, mcpserver.Errorf("invalid_arguments", "subscription %s belongs to another customer, not %s", s.ID, cu.ID)
		}
		if s.Status != SubscriptionActive {
			return Invoice{}, mcpserver.Errorf("invalid_state", "subscription %s is %s and issues no more invoices", s.ID, s.Status)
		}
	}
	n, err := p.nextNumber(ctx, c.Organization, "invoice", 1001)
	if err != nil {
		return Invoice{}, err
	}
	now := p.now().UTC()
	inv := Invoice{ID: newID("inv"), Number: fmt.Sprintf("FAT-%06d", n), CustomerID: cu.ID, CustomerName: cu.Name, SubscriptionID: in.SubscriptionID,
		Description: strings.TrimSpace(in.Description), Items: items, AmountCents: total, Currency: Currency, IssueDate: today, DueDate: in.DueDate,
		Status: InvoiceOpen, CreatedAt: now, UpdatedAt: now}
	if err := p.putInvoice(ctx, c.Organization, inv); err != nil {
		return Invoice{}, err
	}
	return p.view(inv), nil
}

func (p *Product) sendReminder(ctx context.Context, c *mcpserver.Caller, in ReminderArg) (ReminderResult, error) {
	inv, err := p.getInvoice(ctx, c.Organization, in.ID)
	if err != nil {
		return ReminderResult{}, err
	}
	if inv.Status != InvoiceOpen && inv.Status != InvoiceOverdue {
		return ReminderResult{}, mcpserver.Errorf("invalid_state", "invoice %s is %s; reminders are only sent for open or overdue invoices", inv.ID, inv.Status)
	}
	now := p.now().UTC()
	if !inv.LastReminderAt.IsZero() && now.Sub(inv.LastReminderAt) < reminderInterval {
		return ReminderResult{}, mcpserver.Errorf("reminder_too_soon", "a reminder for invoice %s was sent at %s; the next one can go after %s",
			inv.ID, inv.LastReminderAt.Format(time.RFC3339), inv.LastReminderAt.Add(reminderInterval).Format(time.RFC3339))
	}
	cu, err := p.getCustomer(ctx, c.Organization, inv.CustomerID)
	if err != nil {
		if isNotFound(err) {
			return ReminderResult{}, mcpserver.Errorf("customer_not_found", "the customer of invoice %s no longer exists; there is nobody to remind", inv.ID)
		}
		return ReminderResult{}, err
	}
	if cu.Email == "" {
		return ReminderResult{}, mcpserver.Errorf("customer_without_email", "customer %s (%s) has no e-mail address; add one with billing_customers_update", cu.ID, cu.Name)
	}
	org, err := p.organization(ctx, c.Organization)
	if err != nil {
		return ReminderResult{}, err
	}
	when := "vence em " + brDate(inv.DueDate)
	if inv.Status == InvoiceOverdue {
		when = fmt.Sprintf("venceu em %s (%d dia(s) em atraso)", brDate(inv.DueDate), inv.DaysOverdue)
	}
	body := fmt.Sprintf("Olá, %s,\n\nA fatura %s de %s, no valor de %s, %s.\n", cu.Name, inv.Number, orgName(org), formatBRL(inv.AmountCents), when)
	if m := strings.TrimSpace(in.Message); m != "" {
		body += "\n" + m + "\n"
	}
	body += "\nSe o pagamento já foi feito, desconsidere esta mensagem.\n"
	r := Reminder{ID: newID("rem"), InvoiceID: inv.ID, CustomerID: cu.ID, To: cu.Email,
		Subject: fmt.Sprintf("Lembrete de pagamento: fatura %s (%s)", inv.Number, formatBRL(inv.AmountCents)), Body: body,
		SentBy: "person:" + c.Person, CreatedAt: now}
	inv.RemindersSent++
	inv.LastReminderAt, inv.UpdatedAt = now, now
	// The queued reminder and the invoice's count of them, together.
	err = p.opts.Store.WithTx(ctx, func(tx store.Tx) error {
		rs := p.repo.in(tx)
		if err := rs.reminders.Put(ctx, c.Organization, r); err != nil {
			return err
		}
		return rs.invoices.Put(ctx, c.Organization, inv)
	})
	if err != nil {
		return ReminderResult{}, err
	}
	return ReminderResult{Reminder: r, Invoice: p.view(inv)}, nil
}

// brDate writes YYYY-MM-DD as DD/MM/YYYY.
func brDate(d string) string {
	if len(d) != 10 {
		return d
	}
	return d[8:] + "/" + d[5:7] + "/" + d[:4]
}

func orgName(o Organization) string {
	if o.Name != "" {
		return o.Name
	}
	if o.LegalName != "" {
		return o.LegalName
	}
	return o.ID
}
