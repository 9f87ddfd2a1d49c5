package console

import (
	"net/http"
	"slices"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

// chosen are the ids a bulk form names: those ticked (scope "selected"),
// in the order of the page, without repeats.
func chosen(r *http.Request) []string {
	var out []string
	for _, id := range r.PostForm["id"] {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// bulkEmails asks the person to confirm reprocessing the e-mails they
// ticked, or every e-mail the list's filters keep (scope "filter"): the
// filter is resolved into e-mails now, through emails_list, so what is
// confirmed is what runs.
func (c *Console) bulkEmails(w http.ResponseWriter, r *http.Request, s *session) {
	f := emailFilterOf(r.PostForm)
	var ids []string
	if r.PostFormValue("scope") == "filter" {
		arg := f.arg(mcpserver.MaxPageSize, "")
		for len(ids) <= MaxBulk {
			var list inboxmcp.EmailList
			if err := c.call(r, s, inboxmcp.ToolEmailsList, arg, &list); err != nil {
				c.fail(w, r, s, err)
				return
			}
			for _, e := range list.Emails {
				ids = append(ids, e.ID)
			}
			if list.NextCursor == "" {
				break
			}
			arg.Cursor = list.NextCursor
		}
	} else {
		ids = chosen(r)
	}
	args, _ := jsonArgs(bulkArgs{IDs: ids})
	c.ask(w, r, s, "bulk-reprocess", args, f.url(""), len(ids))
}

// bulkDeliveries asks the person to confirm replaying the deliveries they
// ticked, or every delivery of the list's status (scope "filter"),
// resolved now through webhooks_deliveries_list.
func (c *Console) bulkDeliveries(w http.ResponseWriter, r *http.Request, s *session) {
	status := r.PostFormValue("status")
	if status != "" && !slices.Contains(DeliveryStatuses, status) {
		c.message(w, r, s, http.StatusBadRequest, "Unknown status; choose one of the facets.")
		return
	}
	var ids []string
	if r.PostFormValue("scope") == "filter" {
		arg := inboxmcp.DeliveryListArg{Page: mcpserver.Page{Limit: mcpserver.MaxPageSize}, Status: status}
		for len(ids) <= MaxBulk {
			var list inboxmcp.DeliveryList
			if err := c.call(r, s, inboxmcp.ToolWebhooksDeliveriesList, arg, &list); err != nil {
				c.fail(w, r, s, err)
				return
			}
			for _, d := range list.Deliveries {
				ids = append(ids, d.ID)
			}
			if list.NextCursor == "" {
				break
			}
			arg.Cursor = list.NextCursor
		}
	} else {
		ids = chosen(r)
	}
	args, _ := jsonArgs(bulkArgs{IDs: ids})
	c.ask(w, r, s, "bulk-replay", args, deliveriesURL(status, ""), len(ids))
}
