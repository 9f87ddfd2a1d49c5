package console

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

// DeliveryStatuses are the webhook delivery status facets, in the order
// shown.
var DeliveryStatuses = []string{"pending", "delivered", "failed"}

type deliveriesData struct {
	Status      string
	Facets      []facet
	Deliveries  []inbox.Delivery
	Next, First string
	MayReplay   bool
}

func deliveriesURL(status, cursor string) string {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if len(q) == 0 {
		return Prefix + "deliveries"
	}
	return Prefix + "deliveries?" + q.Encode()
}

// deliveries lists the workspace's webhook deliveries, newest first, by
// status, through webhooks_deliveries_list.
func (c *Console) deliveries(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := deliveriesData{Status: q.Get("status"), MayReplay: c.tools.May(s.principal, inboxmcp.ToolWebhooksDeliveriesReplay)}
	if d.Status != "" && !slices.Contains(DeliveryStatuses, d.Status) {
		c.message(w, r, s, http.StatusBadRequest, "Unknown status; choose one of the facets.")
		return
	}
	var list inboxmcp.DeliveryList
	args := inboxmcp.DeliveryListArg{Page: mcpserver.Page{Limit: pageSize, Cursor: q.Get("cursor")}, Status: d.Status}
	if err := c.call(r, s, inboxmcp.ToolWebhooksDeliveriesList, args, &list); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Deliveries = list.Deliveries
	d.Facets = append(d.Facets, facet{Label: "all", URL: deliveriesURL("", ""), Current: d.Status == ""})
	for _, st := range DeliveryStatuses {
		d.Facets = append(d.Facets, facet{Label: st, URL: deliveriesURL(st, ""), Current: d.Status == st})
	}
	if list.NextCursor != "" {
		d.Next = deliveriesURL(d.Status, list.NextCursor)
	}
	if q.Get("cursor") != "" {
		d.First = deliveriesURL(d.Status, "")
	}
	c.render(w, r, s, http.StatusOK, "deliveries", d)
}

// replay asks the person to confirm sending a delivery again.
func (c *Console) replay(w http.ResponseWriter, r *http.Request, s *session) {
	args, _ := jsonArgs(inboxmcp.ReplayArg{DeliveryID: r.PathValue("id")})
	back := r.PostFormValue("back")
	if back == "" || localNext(back) != back {
		back = Prefix + "deliveries"
	}
	c.ask(w, r, s, "replay", args, back, 1)
}
