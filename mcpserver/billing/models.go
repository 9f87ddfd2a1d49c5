package billing

import (
	"time"
)

// Record kinds in store.Records. They carry a billing_ prefix so that they
// never meet another product's kinds.
const (
	KindOrganization = "billing_organization"
	KindCustomer     = "billing_customer"
	KindSubscription = "billing_subscription"
	KindInvoice      = "billing_invoice"
	KindNFe          = "billing_nfe"
	KindReminder     = "billing_reminder"
	// KindCounter is where earlier versions kept the invoice and NF-e
	// counters; such records are only read now, so that numbering continues
	// from them (the store's counters hand out the numbers).
	KindCounter = "billing_counter"
)

// Currency is the only currency Billing charges in.
const Currency = "BRL"

// Invoice statuses. Overdue is an open invoice past its due date: it is
// stored as open and reported as overdue from the day after the due date.
const (
	InvoiceOpen      = "open"
	InvoicePaid      = "paid"
	InvoiceOverdue   = "overdue"
	InvoiceCancelled = "cancelled"
	InvoiceRefunded  = "refunded"
)

// NF-e statuses.
const (
	NFeAuthorized = "authorized"
	NFeRejected   = "rejected"
	NFePending    = "pending"
	NFeCancelled  = "cancelled"
)

// Subscription statuses.
const (
	SubscriptionActive    = "active"
	SubscriptionCancelled = "cancelled"
)

// Address is a Brazilian postal address.
type Address struct {
	Street       string `json:"street,omitempty" jsonschema:"street name (logradouro)" maxLength:"200"`
	Number       string `json:"number,omitempty" jsonschema:"street number, or S/N" maxLength:"20"`
	Complement   string `json:"complement,omitempty" jsonschema:"apartment, suite, floor" maxLength:"200"`
	Neighborhood string `json:"neighborhood,omitempty" jsonschema:"neighborhood (bairro)" maxLength:"100"`
	City         string `json:"city,omitempty" jsonschema:"city (município)" maxLength:"100"`
	CityCode     string `json:"city_code,omitempty" jsonschema:"IBGE code of the city, 7 digits" pattern:"^[0-9]{7}$"`
	State        string `json:"state,omitempty" jsonschema:"two-letter state (UF), e.g. SP" pattern:"^[A-Za-z]{2}$"`
	ZIP          string `json:"zip,omitempty" jsonschema:"CEP, 8 digits (01310-100 also accepted)" pattern:"^[0-9]{5}-?[0-9]{3}$"`
}

// complete reports whether the address has what an NF-e needs.
func (a Address) complete() bool {
	return a.Street != "" && a.Number != "" && a.City != "" && len(a.CityCode) == 7 && len(a.State) == 2 && len(a.ZIP) == 8
}

// Organization is the billing profile of the caller's organization: who
// issues the invoices and NF-e.
type Organization struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	LegalName string    `json:"legal_name"`
	CNPJ      string    `json:"cnpj"`
	StateReg  string    `json:"state_registration"`
	Email     string    `json:"email"`
	Address   Address   `json:"address"`
	Currency  string    `json:"currency"`
	NFeSeries int       `json:"nfe_series"`
	CreatedAt time.Time `json:"created_at"`
	// FiscalProfileComplete is false when NF-e cannot be issued yet
	// (missing CNPJ or address).
	FiscalProfileComplete bool `json:"fiscal_profile_complete"`
}

// Customer is someone the organization bills.
type Customer struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	// Document is the CPF (11 digits, a person) or CNPJ (14 digits, a
	// company), digits only.
	Document     string    `json:"document,omitempty"`
	DocumentType string    `json:"document_type,omitempty"`
	Phone        string    `json:"phone,omitempty"`
	Address      Address   `json:"address"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// Subscription bills a customer a fixed amount every interval.
type Subscription struct {
	ID              string    `json:"id"`
	CustomerID      string    `json:"customer_id"`
	Description     string    `json:"description"`
	AmountCents     int64     `json:"amount_cents"`
	Currency        string    `json:"currency"`
	Interval        string    `json:"interval"`
	Status          string    `json:"status"`
	StartDate       string    `json:"start_date"`
	NextBillingDate string    `json:"next_billing_date,omitempty"`
	CancelledAt     time.Time `json:"cancelled_at,omitzero"`
	CancelReason    string    `json:"cancel_reason,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// InvoiceItem is one line of an invoice.
type InvoiceItem struct {
	Description    string `json:"description" jsonschema:"what is charged" minLength:"1" maxLength:"500"`
	Quantity       int64  `json:"quantity" jsonschema:"how many units, at least 1" minimum:"1" maximum:"1000000"`
	UnitPriceCents int64  `json:"unit_price_cents" jsonschema:"price of one unit in cents of BRL (R$ 10,00 = 1000)" minimum:"1" maximum:"100000000000"`
	AmountCents    int64  `json:"amount_cents,omitempty" jsonschema:"quantity × unit price in cents; computed by the server"`
}

// FileInfo describes a document the server renders; tools describe files,
// the matching resource returns them.
type FileInfo struct {
	URI       string `json:"uri"`
	MIMEType  string `json:"mime_type"`
	SizeBytes int    `json:"size_bytes,omitempty"`
}

// Invoice is a charge to a customer.
type Invoice struct {
	ID             string        `json:"id"`
	Number         string        `json:"number"`
	CustomerID     string        `json:"customer_id"`
	CustomerName   string        `json:"customer_name"`
	SubscriptionID string        `json:"subscription_id,omitempty"`
	Description    string        `json:"description"`
	Items          []InvoiceItem `json:"items"`
	AmountCents    int64         `json:"amount_cents"`
	Currency       string        `json:"currency"`
	IssueDate      string        `json:"issue_date"`
	DueDate        string        `json:"due_date"`
	// Status is open, paid, overdue (open past its due date), cancelled or
	// refunded.
	Status          string    `json:"status"`
	DaysOverdue     int       `json:"days_overdue,omitempty"`
	PaidAt          time.Time `json:"paid_at,omitzero"`
	PaidAmountCents int64     `json:"paid_amount_cents,omitempty"`
	PaymentMethod   string    `json:"payment_method,omitempty"`
	CancelledAt     time.Time `json:"cancelled_at,omitzero"`
	CancelReason    string    `json:"cancel_reason,omitempty"`
	RefundedAt      time.Time `json:"refunded_at,omitzero"`
	RefundReason    string    `json:"refund_reason,omitempty"`
	RemindersSent   int       `json:"reminders_sent"`
	LastReminderAt  time.Time `json:"last_reminder_at,omitzero"`
	NFeID           string    `json:"nfe_id,omitempty"`
	// NFeStatus is the status of the NF-e NFeID names, kept with the
	// invoice so that listings can filter on it.
	NFeStatus string    `json:"nfe_status,omitempty"`
	PDF       *FileInfo `json:"pdf,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Rejection is why SEFAZ refused an NF-e.
type Rejection struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Party is the issuer (emitente) or recipient (destinatário) of an NF-e.
type Party struct {
	Name         string  `json:"name"`
	Document     string  `json:"document"`
	DocumentType string  `json:"document_type"`
	StateReg     string  `json:"state_registration,omitempty"`
	Email        string  `json:"email,omitempty"`
	Address      Address `json:"address"`
}

// NFe is an electronic invoice (modelo 55) issued for an invoice.
type NFe struct {
	ID          string     `json:"id"`
	InvoiceID   string     `json:"invoice_id"`
	CustomerID  string     `json:"customer_id"`
	Number      int        `json:"number"`
	Series      int        `json:"series"`
	AccessKey   string     `json:"access_key"`
	Status      string     `json:"status"`
	Rejection   *Rejection `json:"rejection,omitempty"`
	Protocol    string     `json:"protocol,omitempty"`
	AmountCents int64      `json:"amount_cents"`
	// Issuer and Recipient are as they were when the NF-e was issued.
	Issuer       Party     `json:"issuer"`
	Recipient    Party     `json:"recipient"`
	IssuedAt     time.Time `json:"issued_at"`
	AuthorizedAt time.Time `json:"authorized_at,omitzero"`
	CancelledAt  time.Time `json:"cancelled_at,omitzero"`
	CancelReason string    `json:"cancel_reason,omitempty"`
	// CancelProtocol is SEFAZ's protocol for the cancellation event.
	CancelProtocol string    `json:"cancel_protocol,omitempty"`
	PDF            *FileInfo `json:"pdf,omitempty"`
	XML            *FileInfo `json:"xml,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Reminder is a payment reminder e-mail queued for a customer.
type Reminder struct {
	ID         string    `json:"id"`
	InvoiceID  string    `json:"invoice_id"`
	CustomerID string    `json:"customer_id"`
	To         string    `json:"to"`
	Subject    string    `json:"subject"`
	Body       string    `json:"body"`
	SentBy     string    `json:"sent_by"`
	CreatedAt  time.Time `json:"created_at"`
}
