package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

// healthWindow is how many of an endpoint's latest deliveries its health
// is judged on.
const healthWindow = 20

// health is an endpoint's recent failure rate: of its latest deliveries
// (at most healthWindow), how many failed.
type health struct {
	Failed, Of int
}

// Percent is the failure rate, rounded.
func (h health) Percent() int {
	if h.Of == 0 {
		return 0
	}
	return (200*h.Failed + h.Of) / (2 * h.Of)
}

// Class names the rate for the page's colour: ok, warn or bad.
func (h health) Class() string {
	switch p := h.Percent(); {
	case h.Of == 0 || p == 0:
		return "ok"
	case p < 50:
		return "warn"
	}
	return "bad"
}

// healthOf reads an endpoint's latest deliveries through
// webhooks_deliveries_list.
func (c *Console) healthOf(r *http.Request, s *session, id string) (health, error) {
	var list inboxmcp.DeliveryList
	if err := c.call(r, s, inboxmcp.ToolWebhooksDeliveriesList, inboxmcp.DeliveryListArg{Page: mcpserver.Page{Limit: healthWindow}, WebhookID: id}, &list); err != nil {
		return health{}, err
	}
	h := health{Of: len(list.Deliveries)}
	for _, d := range list.Deliveries {
		if d.Status == inbox.DeliveryFailed {
			h.Failed++
		}
	}
	return h, nil
}

type endpoint struct {
	inbox.Webhook
	Health health
}

type webhooksData struct {
	Endpoints []endpoint
	More      bool
}

// webhooks lists the workspace's endpoints with their health, through
// webhooks_list and webhooks_deliveries_list.
func (c *Console) webhooks(w http.ResponseWriter, r *http.Request, s *session) {
	var list inboxmcp.WebhookList
	if err := c.call(r, s, inboxmcp.ToolWebhooksList, inboxmcp.WebhookListArg{Page: mcpserver.Page{Limit: 100}}, &list); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := webhooksData{More: list.NextCursor != ""}
	for _, wh := range list.Webhooks {
		h, err := c.healthOf(r, s, wh.ID)
		if err != nil {
			c.fail(w, r, s, err)
			return
		}
		d.Endpoints = append(d.Endpoints, endpoint{Webhook: wh, Health: h})
	}
	c.render(w, r, s, http.StatusOK, "webhooks", d)
}

type webhookData struct {
	endpoint
	Status      string
	Facets      []facet
	Deliveries  []inbox.Delivery
	Next, First string
	// Self is this page's URL, where the actions come back to.
	Self string
	// MayReplay, MayTest and MayRecover say which of the tools the person
	// may run.
	MayReplay, MayTest, MayRecover bool
	// RecoverSince is the recovery form's proposed start: a day ago, in
	// UTC, as a datetime-local input takes it.
	RecoverSince string
}

func webhookURL(id, status, cursor string) string {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	u := Prefix + "webhooks/" + url.PathEscape(id)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// webhook shows one endpoint: its configuration and health, and its
// deliveries newest first with every attempt.
func (c *Console) webhook(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	q := r.URL.Query()
	var wh inbox.Webhook
	if err := c.call(r, s, inboxmcp.ToolWebhooksGet, inboxmcp.WebhookIDArg{ID: id}, &wh); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := webhookData{Status: q.Get("status"), Self: webhookURL(wh.ID, q.Get("status"), q.Get("cursor")),
		MayReplay:    c.tools.May(s.principal, inboxmcp.ToolWebhooksDeliveriesReplay),
		MayTest:      c.tools.May(s.principal, inboxmcp.ToolWebhooksTest),
		MayRecover:   c.tools.May(s.principal, inboxmcp.ToolWebhooksDeliveriesRecover),
		RecoverSince: c.now().UTC().Add(-24 * time.Hour).Truncate(time.Hour).Format(localMinute)}
	if d.Status != "" && !slices.Contains(DeliveryStatuses, d.Status) {
		c.message(w, r, s, http.StatusBadRequest, "Unknown status; choose one of the facets.")
		return
	}
	h, err := c.healthOf(r, s, wh.ID)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.endpoint = endpoint{Webhook: wh, Health: h}
	var list inboxmcp.DeliveryList
	if err := c.call(r, s, inboxmcp.ToolWebhooksDeliveriesList, inboxmcp.DeliveryListArg{Page: mcpserver.Page{Limit: pageSize, Cursor: q.Get("cursor")}, WebhookID: wh.ID, Status: d.Status}, &list); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Deliveries = list.Deliveries
	d.Facets = append(d.Facets, facet{Label: "all", URL: webhookURL(wh.ID, "", ""), Current: d.Status == ""})
	for _, st := range DeliveryStatuses {
		d.Facets = append(d.Facets, facet{Label: st, URL: webhookURL(wh.ID, st, ""), Current: d.Status == st})
	}
	if list.NextCursor != "" {
		d.Next = webhookURL(wh.ID, d.Status, list.NextCursor)
	}
	if q.Get("cursor") != "" {
		d.First = webhookURL(wh.ID, d.Status, "")
	}
	c.render(w, r, s, http.StatusOK, "webhook", d)
}

// localMinute is the format of a datetime-local input, to the minute.
const localMinute = "2006-01-02T15:04"

// webhookTest asks the person to confirm sending a test event.
func (c *Console) webhookTest(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	args, _ := jsonArgs(inboxmcp.WebhookIDArg{ID: id})
	c.ask(w, r, s, "webhook-test", args, webhookURL(id, "", ""), 1)
}

// recoverDeliveries asks the person to confirm sending again every failed
// delivery of an endpoint since a time (a datetime-local, read as UTC),
// saying how many there are.
func (c *Console) recoverDeliveries(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	since, err := time.Parse(localMinute, strings.TrimSpace(r.PostFormValue("since")))
	if err != nil {
		c.message(w, r, s, http.StatusBadRequest, "Give the time to recover from as a date and time (UTC).")
		return
	}
	arg := inboxmcp.RecoverArg{WebhookID: id, Since: since.UTC().Format(time.RFC3339)}
	n, more, err := c.countFailed(r, s, arg)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	if more {
		n = inboxmcp.MaxRecover // what this call sends; the page says more are left
	}
	args, _ := jsonArgs(arg)
	c.ask(w, r, s, "recover", args, webhookURL(id, "", ""), n)
}

// countFailed counts, through webhooks_deliveries_list, the failed
// deliveries a recovery would send; more says there are more than one
// recovery sends.
func (c *Console) countFailed(r *http.Request, s *session, a inboxmcp.RecoverArg) (int, bool, error) {
	arg := inboxmcp.DeliveryListArg{Page: mcpserver.Page{Limit: mcpserver.MaxPageSize}, WebhookID: a.WebhookID, Status: inbox.DeliveryFailed, Since: a.Since}
	n := 0
	for {
		var list inboxmcp.DeliveryList
		if err := c.call(r, s, inboxmcp.ToolWebhooksDeliveriesList, arg, &list); err != nil {
			return 0, false, err
		}
		n += len(list.Deliveries)
		if n > inboxmcp.MaxRecover {
			return n, true, nil
		}
		if list.NextCursor == "" {
			return n, false, nil
		}
		arg.Cursor = list.NextCursor
	}
}
