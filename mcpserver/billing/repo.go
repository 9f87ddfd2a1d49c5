package billing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// newID returns a fresh id with a kind prefix.
func newID(prefix string) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("billing: reading random bytes: %v", err))
	}
	return prefix + "_" + hex.EncodeToString(b)
}

// legacyCounter is how earlier versions kept a counter (KindCounter).
type legacyCounter struct {
	Value int64 `json:"value"`
}

// repos are Billing's typed repositories (store.Repo) over one store. The
// organization id is the partition key of store.Records.
type repos struct {
	orgs          store.Repo[Organization]
	customers     store.Repo[Customer]
	subscriptions store.Repo[Subscription]
	invoices      store.Repo[Invoice]
	nfes          store.Repo[NFe]
	reminders     store.Repo[Reminder]
	counters      store.Repo[legacyCounter]
}

func newRepos(records store.Records) repos {
	return repos{
		orgs: store.Repo[Organization]{Records: records, Kind: KindOrganization, Name: "organization", Meta: func(o *Organization) store.Meta {
			return store.Meta{ID: o.ID, Created: o.CreatedAt}
		}},
		customers: store.Repo[Customer]{Records: records, Kind: KindCustomer, Name: "customer", Meta: func(c *Customer) store.Meta {
			return store.Meta{ID: c.ID, Created: c.CreatedAt}
		}},
		subscriptions: store.Repo[Subscription]{Records: records, Kind: KindSubscription, Name: "subscription", Meta: func(s *Subscription) store.Meta {
			return store.Meta{ID: s.ID, Parent: s.CustomerID, Status: s.Status, Created: s.CreatedAt}
		}},
		invoices: store.Repo[Invoice]{Records: records, Kind: KindInvoice, Name: "invoice", Meta: func(i *Invoice) store.Meta {
			// What the API computes is not stored: overdue is open, and the
			// days overdue and the PDF are the view's.
			i.Status, i.DaysOverdue, i.PDF = storedStatus(i.Status), 0, nil
			return store.Meta{ID: i.ID, Parent: i.CustomerID, Status: i.Status, Created: i.CreatedAt}
		}},
		nfes: store.Repo[NFe]{Records: records, Kind: KindNFe, Name: "NF-e", Meta: func(n *NFe) store.Meta {
			n.PDF, n.XML = nil, nil
			return store.Meta{ID: n.ID, Parent: n.InvoiceID, Status: n.Status, Created: n.CreatedAt}
		}},
		reminders: store.Repo[Reminder]{Records: records, Kind: KindReminder, Name: "reminder", Meta: func(r *Reminder) store.Meta {
			return store.Meta{ID: r.ID, Parent: r.InvoiceID, Status: "queued", Created: r.CreatedAt}
		}},
		counters: store.Repo[legacyCounter]{Records: records, Kind: KindCounter, Name: "counter", Meta: func(*legacyCounter) store.Meta {
			return store.Meta{}
		}},
	}
}

// in returns the repositories over a transaction's records.
func (r repos) in(tx store.Records) repos { return newRepos(tx) }

// listPage is one page of a listing, its cursor errors answered as the
// caller's.
func listPage[T any](ctx context.Context, r store.Repo[T], org string, q store.Query) ([]T, string, error) {
	page, err := r.List(ctx, org, q)
	if err != nil {
		return nil, "", mcpserver.PageError(err)
	}
	return page.Items, page.Next, nil
}
