package billing

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
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

// customerSorts are the sortable fields of customers; text sorts bytewise.
var customerSorts = sortable{
	"name":       {field: store.TextField("name")},
	"email":      {field: store.TextField("email")},
	"created_at": {field: store.CreatedField},
	"updated_at": {field: store.TimeField("updated_at")},
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
	if err := required("id", id); err != nil {
		return Customer{}, err
	}
	return p.repo.customers.Get(ctx, org, id)
}

func (p *Product) putCustomer(ctx context.Context, org string, cu Customer) error {
	return p.repo.customers.Put(ctx, org, cu)
}

func (p *Product) customersList(ctx context.Context, c *mcpserver.Caller, in CustomerListArg) (CustomerList, error) {
	var where []store.Filter
	if s := strings.TrimSpace(in.Search); s != "" {
		match := []store.Filter{store.Contains(store.TextField("name"), s), store.Contains(store.TextField("email"), s)}
		if d := digitsOnly(s); d != "" {
			match = append(match, store.Contains(store.TextField("document"), d))
		}
		where = append(where, store.Any(match...))
	}
	q, err := in.query(customerSorts, where...)
	if err != nil {
		return CustomerList{}, err
	}
	items, next, err := listPage(ctx, p.repo.customers, c.Organization, q)
	return CustomerList{Customers: items, NextCursor: next}, err
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
	subs, err := p.repo.subscriptions.List(ctx, c.Organization, store.Query{Parent: cu.ID, Status: SubscriptionActive, Limit: 1})
	if err != nil {
		return cu, err
	}
	if len(subs.Items) > 0 {
		return cu, mcpserver.Errorf("customer_has_subscriptions",
			"customer %s has active subscriptions (%s, …); cancel them with billing_subscriptions_cancel before deleting the customer", cu.ID, subs.Items[0].ID)
	}
	open, err := p.repo.invoices.List(ctx, c.Organization, store.Query{Parent: cu.ID, Status: InvoiceOpen, Limit: 1})
	if err != nil {
		return cu, err
	}
	if len(open.Items) > 0 {
		return cu, mcpserver.Errorf("customer_has_open_invoices",
			"customer %s has open or overdue invoices (%s, …); wait for payment or cancel them with billing_invoices_cancel before deleting the customer", cu.ID, open.Items[0].ID)
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
	if err := p.repo.customers.Delete(ctx, c.Organization, cu.ID); err != nil {
		return Deleted{}, err
	}
	return Deleted{ID: cu.ID, Deleted: true}, nil
}

func isNotFound(err error) bool {
	return err != nil && (errors.Is(err, mcpserver.ErrNotFound) || errors.Is(err, store.ErrNotFound))
}
