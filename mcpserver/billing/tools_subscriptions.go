package billing

import (
	"context"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// SubscriptionListArg filters billing_subscriptions_list.
type SubscriptionListArg struct {
	Page
	CustomerID string `json:"customer_id,omitempty" jsonschema:"only subscriptions of this customer" pattern:"^cus_[A-Za-z0-9_-]{1,64}$"`
	Status     string `json:"status,omitempty" jsonschema:"active or cancelled" enum:"active,cancelled"`
}

// SubscriptionList is a page of subscriptions.
type SubscriptionList struct {
	Subscriptions []Subscription `json:"subscriptions"`
	NextCursor    string         `json:"next_cursor,omitempty"`
}

// SubscriptionCreateArg creates a subscription.
type SubscriptionCreateArg struct {
	CustomerID  string `json:"customer_id" jsonschema:"the customer to bill" pattern:"^cus_[A-Za-z0-9_-]{1,64}$"`
	Description string `json:"description" jsonschema:"plan or service, printed on each invoice" minLength:"1" maxLength:"500"`
	AmountCents int64  `json:"amount_cents" jsonschema:"amount per interval in cents of BRL (R$ 99,90 = 9990)" minimum:"1" maximum:"100000000000"`
	Interval    string `json:"interval,omitempty" jsonschema:"monthly (default) or yearly" enum:"monthly,yearly"`
	StartDate   string `json:"start_date,omitempty" jsonschema:"first billing day, YYYY-MM-DD, today or later (default today)" format:"date" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"`
}

// SubscriptionCancelArg cancels a subscription.
type SubscriptionCancelArg struct {
	ID     string `json:"id" jsonschema:"the subscription id" pattern:"^sub_[A-Za-z0-9_-]{1,64}$"`
	Reason string `json:"reason,omitempty" jsonschema:"why it is cancelled, kept on the subscription" maxLength:"500"`
}

// subscriptionSorts are the sortable fields of subscriptions.
var subscriptionSorts = sortable{
	"amount_cents":      {field: store.NumberField("amount_cents")},
	"start_date":        {field: store.TextField("start_date")},
	"next_billing_date": {field: store.TextField("next_billing_date")},
	"created_at":        {field: store.CreatedField},
}

// maxAmountCents bounds an amount (R$ 1 billion).
const maxAmountCents = 100_000_000_000

func checkAmount(name string, cents int64) error {
	if cents <= 0 || cents > maxAmountCents {
		return mcpserver.Errorf("invalid_arguments", "%s must be a positive amount in cents of BRL, at most %d (R$ 1 bilhão); R$ 10,50 is 1050", name, int64(maxAmountCents))
	}
	return nil
}

func (p *Product) getSubscription(ctx context.Context, org, id string) (Subscription, error) {
	if err := required("id", id); err != nil {
		return Subscription{}, err
	}
	return p.repo.subscriptions.Get(ctx, org, id)
}

func (p *Product) putSubscription(ctx context.Context, org string, s Subscription) error {
	return p.repo.subscriptions.Put(ctx, org, s)
}

// nextBilling is the first billing day on or after today.
func nextBilling(start time.Time, interval, today string) string {
	d := start
	for i := 0; d.Format(dateLayout) < today && i < 1200; i++ {
		if interval == "yearly" {
			d = d.AddDate(1, 0, 0)
		} else {
			d = d.AddDate(0, 1, 0)
		}
	}
	return d.Format(dateLayout)
}

func (p *Product) subscriptionsList(ctx context.Context, c *mcpserver.Caller, in SubscriptionListArg) (SubscriptionList, error) {
	if in.Status != "" && in.Status != SubscriptionActive && in.Status != SubscriptionCancelled {
		return SubscriptionList{}, mcpserver.Errorf("invalid_arguments", "status must be active or cancelled")
	}
	q, err := in.query(subscriptionSorts)
	if err != nil {
		return SubscriptionList{}, err
	}
	q.Parent, q.Status = in.CustomerID, in.Status
	items, next, err := listPage(ctx, p.repo.subscriptions, c.Organization, q)
	return SubscriptionList{Subscriptions: items, NextCursor: next}, err
}

func (p *Product) subscriptionsGet(ctx context.Context, c *mcpserver.Caller, in SubscriptionIDArg) (Subscription, error) {
	return p.getSubscription(ctx, c.Organization, in.ID)
}

func (p *Product) subscriptionsCreate(ctx context.Context, c *mcpserver.Caller, in SubscriptionCreateArg) (Subscription, error) {
	if err := required("customer_id", in.CustomerID); err != nil {
		return Subscription{}, err
	}
	if err := required("description", in.Description); err != nil {
		return Subscription{}, err
	}
	if err := checkAmount("amount_cents", in.AmountCents); err != nil {
		return Subscription{}, err
	}
	switch in.Interval {
	case "":
		in.Interval = "monthly"
	case "monthly", "yearly":
	default:
		return Subscription{}, mcpserver.Errorf("invalid_arguments", "interval must be monthly or yearly, got %q", in.Interval)
	}
	today := p.today()
	if in.StartDate == "" {
		in.StartDate = today
	}
	start, err := parseDate("start_date", in.StartDate)
	if err != nil {
		return Subscription{}, err
	}
	if in.StartDate < today {
		return Subscription{}, mcpserver.Errorf("invalid_arguments", "start_date %s is in the past; use today (%s) or later", in.StartDate, today)
	}
	cu, err := p.getCustomer(ctx, c.Organization, in.CustomerID)
	if err != nil {
		return Subscription{}, err
	}
	now := p.now().UTC()
	s := Subscription{ID: newID("sub"), CustomerID: cu.ID, Description: strings.TrimSpace(in.Description), AmountCents: in.AmountCents,
		Currency: Currency, Interval: in.Interval, Status: SubscriptionActive, StartDate: in.StartDate,
		NextBillingDate: nextBilling(start, in.Interval, today), CreatedAt: now, UpdatedAt: now}
	return s, p.putSubscription(ctx, c.Organization, s)
}

// cancellableSubscription is the subscription a cancel acts on, when it can.
func (p *Product) cancellableSubscription(ctx context.Context, c *mcpserver.Caller, in SubscriptionCancelArg) (Subscription, error) {
	s, err := p.getSubscription(ctx, c.Organization, in.ID)
	if err != nil {
		return s, err
	}
	if s.Status != SubscriptionActive {
		return s, mcpserver.Errorf("invalid_state", "subscription %s is already %s (since %s); nothing to cancel", s.ID, s.Status, s.CancelledAt.Format(time.RFC3339))
	}
	return s, nil
}

// checkSubscriptionCancel is billing_subscriptions_cancel's check.
func (p *Product) checkSubscriptionCancel(ctx context.Context, c *mcpserver.Caller, in SubscriptionCancelArg) error {
	_, err := p.cancellableSubscription(ctx, c, in)
	return err
}

func (p *Product) subscriptionsCancel(ctx context.Context, c *mcpserver.Caller, in SubscriptionCancelArg) (Subscription, error) {
	s, err := p.cancellableSubscription(ctx, c, in)
	if err != nil {
		return s, err
	}
	now := p.now().UTC()
	s.Status, s.CancelledAt, s.CancelReason, s.NextBillingDate, s.UpdatedAt = SubscriptionCancelled, now, strings.TrimSpace(in.Reason), "", now
	return s, p.putSubscription(ctx, c.Organization, s)
}
