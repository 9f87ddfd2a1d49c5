package billing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
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

var invoiceSorts = sorter[Invoice]{
	"number":       func(a, b Invoice) int { return byString(a.Number, b.Number) },
	"amount_cents": func(a, b Invoice) int { return cmpInt(a.AmountCents, b.AmountCents) },
	"issue_date":   func(a, b Invoice) int { return byString(a.IssueDate, b.IssueDate) },
	"due_date":     func(a, b Invoice) int { return byString(a.DueDate, b.DueDate) },
	"days_overdue": func(a, b Invoice) int { return cmpInt(int64(a.DaysOverdue), int64(b.DaysOverdue)) },
	"paid_at":      func(a, b Invoice) int { return byTime(a.PaidAt, b.PaidAt) },
	"created_at":   func(a, b Invoice) int { return byTime(a.CreatedAt, b.CreatedAt) },
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
	var inv Invoice
	if err := required("id", id); err != nil {
		return inv, err
	}
	if _, err := p.repo.get(ctx, org, KindInvoice, id, &inv); err != nil {
		return inv, err
	}
	return p.view(inv), nil
}

// putInvoice stores an invoice (given as viewed or as stored).
func (p *Product) putInvoice(ctx context.Context, org string, inv Invoice) error {
	inv.Status = storedStatus(inv.Status)
	inv.DaysOverdue = 0
	inv.PDF = nil
	return p.repo.put(ctx, org, KindInvoice, inv.ID, inv.CustomerID, inv.Status, inv.CreatedAt, inv)
}

// invoices lists the organization's invoices as viewed, most recent first.
func (p *Product) invoices(ctx context.Context, org string, in InvoiceListArg) ([]Invoice, error) {
	switch in.Status {
	case "", InvoiceOpen, InvoiceOverdue, InvoicePaid, InvoiceCancelled, InvoiceRefunded:
	default:
		return nil, mcpserver.Errorf("invalid_arguments", "status must be open, overdue, paid, cancelled or refunded, got %q", in.Status)
	}
	for name, d := range map[string]string{"due_from": in.DueFrom, "due_to": in.DueTo} {
		if d != "" {
			if _, err := parseDate(name, d); err != nil {
				return nil, err
			}
		}
	}
	stored, err := all[Invoice](ctx, p.repo, org, KindInvoice, store.Query{Parent: in.CustomerID, Status: storedStatus(in.Status)})
	if err != nil {
		return nil, err
	}
	var nfeOf map[string]NFe
	if in.WithoutNFe {
		if nfeOf, err = p.liveNFes(ctx, org); err != nil {
			return nil, err
		}
	}
	out := make([]Invoice, 0, len(stored))
	for _, inv := range stored {
		inv = p.view(inv)
		switch {
		case in.Status != "" && inv.Status != in.Status,
			in.SubscriptionID != "" && inv.SubscriptionID != in.SubscriptionID,
			in.DueFrom != "" && inv.DueDate < in.DueFrom,
			in.DueTo != "" && inv.DueDate > in.DueTo:
			continue
		}
		if in.WithoutNFe {
			if _, ok := nfeOf[inv.ID]; ok {
				continue
			}
		}
		out = append(out, inv)
	}
	return out, nil
}

// liveNFes maps invoice ids to their authorized or pending NF-e.
func (p *Product) liveNFes(ctx context.Context, org string) (map[string]NFe, error) {
	out := map[string]NFe{}
	for _, st := range []string{NFeAuthorized, NFePending} {
		ns, err := all[NFe](ctx, p.repo, org, KindNFe, store.Query{Status: st})
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			out[n.InvoiceID] = n
		}
	}
	return out, nil
}

func (p *Product) invoicesList(ctx context.Context, c *mcpserver.Caller, in InvoiceListArg) (InvoiceList, error) {
	items, err := p.invoices(ctx, c.Organization, in)
	if err != nil {
		return InvoiceList{}, err
	}
	page, next, err := paginate(items, in.Page, invoiceSorts)
	return InvoiceList{Invoices: page, NextCursor: next}, err
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
		var n NFe
		if _, err := p.repo.get(ctx, c.Organization, KindNFe, inv.NFeID, &n); err == nil {
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
	if err := p.repo.put(ctx, c.Organization, KindReminder, r.ID, inv.ID, "queued", now, r); err != nil {
		return ReminderResult{}, err
	}
	inv.RemindersSent++
	inv.LastReminderAt, inv.UpdatedAt = now, now
	if err := p.putInvoice(ctx, c.Organization, inv); err != nil {
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
