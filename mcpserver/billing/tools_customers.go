package billing

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// CustomerListArg filters billing_customers_list.
type CustomerListArg struct {
	Page
	Search string `json:"search,omitempty" jsonschema:"keep customers whose name, e-mail or document contains this text (case-insensitive)" maxLength:"200"`
}

// CustomerList is a page of customers.
type CustomerList struct {
	Customers  []Customer `json:"customers"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// CustomerCreateArg creates a customer.
type CustomerCreateArg struct {
	Name     string  `json:"name" jsonschema:"name of the person or legal name of the company" minLength:"1" maxLength:"200"`
	Email    string  `json:"email,omitempty" jsonschema:"where invoices and reminders are sent" format:"email" maxLength:"254"`
	Document string  `json:"document,omitempty" jsonschema:"CPF (11 digits) or CNPJ (14 digits), punctuation allowed; required to issue NF-e" pattern:"^[0-9./-]{11,18}$"`
	Phone    string  `json:"phone,omitempty" jsonschema:"phone number; digits are kept" maxLength:"30"`
	Address  Address `json:"address,omitempty" jsonschema:"postal address; a complete one is required to issue NF-e"`
}

// CustomerUpdateArg changes a customer; absent fields stay as they are.
type CustomerUpdateArg struct {
	ID       string   `json:"id" jsonschema:"the customer id" pattern:"^cus_[A-Za-z0-9_-]{1,64}$"`
	Name     *string  `json:"name,omitempty" minLength:"1" maxLength:"200"`
	Email    *string  `json:"email,omitempty" jsonschema:"the new e-mail address, or empty to remove it" maxLength:"254"`
	Document *string  `json:"document,omitempty" jsonschema:"CPF or CNPJ; replaces the current one (empty removes it)" pattern:"^([0-9./-]{11,18})?$"`
	Phone    *string  `json:"phone,omitempty" maxLength:"30"`
	Address  *Address `json:"address,omitempty" jsonschema:"replaces the whole address"`
}

// Deleted reports a deletion.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

var customerSorts = sorter[Customer]{
	"name":       func(a, b Customer) int { return byString(strings.ToLower(a.Name), strings.ToLower(b.Name)) },
	"email":      func(a, b Customer) int { return byString(a.Email, b.Email) },
	"created_at": func(a, b Customer) int { return byTime(a.CreatedAt, b.CreatedAt) },
	"updated_at": func(a, b Customer) int { return byTime(a.UpdatedAt, b.UpdatedAt) },
}

func checkEmail(e string) error {
	if e == "" {
		return nil
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e {
		return mcpserver.Errorf("invalid_arguments", "email %q is not a plain e-mail address such as ana@example.com", e)
	}
	return nil
}

func checkAddress(a *Address) error {
	a.State = strings.ToUpper(strings.TrimSpace(a.State))
	a.ZIP = digitsOnly(a.ZIP)
	if a.State != "" {
		if _, ok := ufCodes[a.State]; !ok {
			return mcpserver.Errorf("invalid_arguments", "address.state %q is not a Brazilian state (UF) such as SP or RJ", a.State)
		}
	}
	if a.ZIP != "" && len(a.ZIP) != 8 {
		return mcpserver.Errorf("invalid_arguments", "address.zip must be a CEP of 8 digits")
	}
	if a.CityCode != "" && (len(a.CityCode) != 7 || !allDigits(a.CityCode)) {
		return mcpserver.Errorf("invalid_arguments", "address.city_code must be the 7-digit IBGE code of the city")
	}
	return nil
}

func applyDocument(c *Customer, raw string) error {
	if strings.TrimSpace(raw) == "" {
		c.Document, c.DocumentType = "", ""
		return nil
	}
	doc, typ, err := checkDocument(raw)
	if err != nil {
		return mcpserver.Errorf("invalid_arguments", "%v", err)
	}
	c.Document, c.DocumentType = doc, typ
	return nil
}

func (p *Product) getCustomer(ctx context.Context, org, id string) (Customer, error) {
	var cu Customer
	if err := required("id", id); err != nil {
		return cu, err
	}
	_, err := p.repo.get(ctx, org, KindCustomer, id, &cu)
	return cu, err
}

func (p *Product) putCustomer(ctx context.Context, org string, cu Customer) error {
	return p.repo.put(ctx, org, KindCustomer, cu.ID, "", "", cu.CreatedAt, cu)
}

func (p *Product) customersList(ctx context.Context, c *mcpserver.Caller, in CustomerListArg) (CustomerList, error) {
	items, err := all[Customer](ctx, p.repo, c.Organization, KindCustomer, store.Query{})
	if err != nil {
		return CustomerList{}, err
	}
	if s := strings.ToLower(strings.TrimSpace(in.Search)); s != "" {
		items = filterSlice(items, func(cu Customer) bool {
			return strings.Contains(strings.ToLower(cu.Name), s) || strings.Contains(strings.ToLower(cu.Email), s) ||
				(digitsOnly(s) != "" && strings.Contains(cu.Document, digitsOnly(s)))
		})
	}
	page, next, err := paginate(items, in.Page, customerSorts)
	return CustomerList{Customers: page, NextCursor: next}, err
}

func (p *Product) customersGet(ctx context.Context, c *mcpserver.Caller, in CustomerIDArg) (Customer, error) {
	return p.getCustomer(ctx, c.Organization, in.ID)
}

func (p *Product) customersCreate(ctx context.Context, c *mcpserver.Caller, in CustomerCreateArg) (Customer, error) {
	if err := required("name", in.Name); err != nil {
		return Customer{}, err
	}
	now := p.now().UTC()
	cu := Customer{ID: newID("cus"), Name: strings.TrimSpace(in.Name), Email: in.Email, Phone: digitsOnly(in.Phone),
		Address: in.Address, CreatedAt: now, UpdatedAt: now}
	if err := checkEmail(cu.Email); err != nil {
		return Customer{}, err
	}
	if err := applyDocument(&cu, in.Document); err != nil {
		return Customer{}, err
	}
	if err := checkAddress(&cu.Address); err != nil {
		return Customer{}, err
	}
	return cu, p.putCustomer(ctx, c.Organization, cu)
}

func (p *Product) customersUpdate(ctx context.Context, c *mcpserver.Caller, in CustomerUpdateArg) (Customer, error) {
	cu, err := p.getCustomer(ctx, c.Organization, in.ID)
	if err != nil {
		return cu, err
	}
	if in.Name != nil {
		if err := required("name", *in.Name); err != nil {
			return cu, err
		}
		cu.Name = strings.TrimSpace(*in.Name)
	}
	if in.Email != nil {
		cu.Email = *in.Email
		if err := checkEmail(cu.Email); err != nil {
			return cu, err
		}
	}
	if in.Document != nil {
		if err := applyDocument(&cu, *in.Document); err != nil {
			return cu, err
		}
	}
	if in.Phone != nil {
		cu.Phone = digitsOnly(*in.Phone)
	}
	if in.Address != nil {
		a := *in.Address
		if err := checkAddress(&a); err != nil {
			return cu, err
		}
		cu.Address = a
	}
	cu.UpdatedAt = p.now().UTC()
	return cu, p.putCustomer(ctx, c.Organization, cu)
}

// deletableCustomer is the customer a delete acts on, when it can: no
// active subscription, no open invoice.
func (p *Product) deletableCustomer(ctx context.Context, c *mcpserver.Caller, in CustomerIDArg) (Customer, error) {
	cu, err := p.getCustomer(ctx, c.Organization, in.ID)
	if err != nil {
		return cu, err
	}
	subs, err := all[Subscription](ctx, p.repo, c.Organization, KindSubscription, store.Query{Parent: cu.ID, Status: SubscriptionActive})
	if err != nil {
		return cu, err
	}
	if len(subs) > 0 {
		return cu, mcpserver.Errorf("customer_has_subscriptions",
			"customer %s has %d active subscription(s) (%s); cancel them with billing_subscriptions_cancel before deleting the customer", cu.ID, len(subs), subs[0].ID)
	}
	open, err := all[Invoice](ctx, p.repo, c.Organization, KindInvoice, store.Query{Parent: cu.ID, Status: InvoiceOpen})
	if err != nil {
		return cu, err
	}
	if len(open) > 0 {
		return cu, mcpserver.Errorf("customer_has_open_invoices",
			"customer %s has %d open or overdue invoice(s) (%s); wait for payment or cancel them with billing_invoices_cancel before deleting the customer", cu.ID, len(open), open[0].ID)
	}
	return cu, nil
}

// checkCustomerDelete is billing_customers_delete's check.
func (p *Product) checkCustomerDelete(ctx context.Context, c *mcpserver.Caller, in CustomerIDArg) error {
	_, err := p.deletableCustomer(ctx, c, in)
	return err
}

func (p *Product) customersDelete(ctx context.Context, c *mcpserver.Caller, in CustomerIDArg) (Deleted, error) {
	cu, err := p.deletableCustomer(ctx, c, in)
	if err != nil {
		return Deleted{}, err
	}
	if err := p.repo.delete(ctx, c.Organization, KindCustomer, cu.ID); err != nil {
		return Deleted{}, err
	}
	return Deleted{ID: cu.ID, Deleted: true}, nil
}

func filterSlice[T any](in []T, keep func(T) bool) []T {
	out := in[:0:0]
	for _, x := range in {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func isNotFound(err error) bool {
	return err != nil && (errors.Is(err, mcpserver.ErrNotFound) || errors.Is(err, store.ErrNotFound))
}
