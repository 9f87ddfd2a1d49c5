package console

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

type inboxesData struct {
	Inboxes []inbox.Inbox
	// Agents names each agent by id.
	Agents map[string]string
	More   bool
}

// agentNames are the workspace's agents' names by id, through agents_list.
func (c *Console) agentNames(r *http.Request, s *session) (map[string]string, []inbox.Agent, bool, error) {
	var list inboxmcp.AgentList
	if err := c.call(r, s, inboxmcp.ToolAgentsList, inboxmcp.AgentListArg{Page: mcpserver.Page{Limit: mcpserver.MaxPageSize}}, &list); err != nil {
		return nil, nil, false, err
	}
	names := map[string]string{}
	for _, a := range list.Agents {
		names[a.ID] = a.Name
	}
	return names, list.Agents, list.NextCursor != "", nil
}

// inboxes shows each inbox's configuration: address, agent, allowed
// senders, filters and attachment rules (inboxes_list, agents_list).
func (c *Console) inboxes(w http.ResponseWriter, r *http.Request, s *session) {
	var list inboxmcp.InboxList
	if err := c.call(r, s, inboxmcp.ToolInboxesList, inboxmcp.InboxListArg{Page: mcpserver.Page{Limit: mcpserver.MaxPageSize}}, &list); err != nil {
		c.fail(w, r, s, err)
		return
	}
	names, _, _, err := c.agentNames(r, s)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, http.StatusOK, "inboxes", inboxesData{Inboxes: list.Inboxes, Agents: names, More: list.NextCursor != ""})
}

type agentsData struct {
	Agents []agentView
	More   bool
}

// agentView is an agent as its page shows it.
type agentView struct {
	inbox.Agent
	// NoEgress says its egress list is empty: its workflows may send to no
	// host (nil allows any the SSRF guard does).
	NoEgress bool
}

// agents shows each agent's configuration: model, status, system
// message, skills, settings and egress (agents_list).
func (c *Console) agents(w http.ResponseWriter, r *http.Request, s *session) {
	_, agents, more, err := c.agentNames(r, s)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := agentsData{More: more}
	for _, a := range agents {
		d.Agents = append(d.Agents, agentView{Agent: a, NoEgress: a.Settings.Egress != nil && len(a.Settings.Egress) == 0})
	}
	c.render(w, r, s, http.StatusOK, "agents", d)
}

// secrets shows the workspace's secrets by name with where each may be
// sent (secrets_list): the tool never returns a value, so neither can the
// page.
func (c *Console) secrets(w http.ResponseWriter, r *http.Request, s *session) {
	var list inboxmcp.SecretList
	if err := c.call(r, s, inboxmcp.ToolSecretsList, struct{}{}, &list); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, http.StatusOK, "secrets", list)
}

// chartMonths is how many months the usage chart shows.
const chartMonths = 6

// bar is one bar of a chart, laid out on the server.
type bar struct {
	Label, Value, URL string
	X, Y, W, H        int
	Current           bool
}

// chart is a bar chart drawn as SVG by the server, with its numbers in a
// table beside it for who cannot see it.
type chart struct {
	Title          string
	Width, Height  int
	Bars           []bar
	BaseY, LabelsY int
}

// barChart lays out values as bars of a chart of the given size.
func barChart(title string, labels, shown, urls []string, values []float64, current int) chart {
	const width, height, top, bottom, gap = 480, 180, 20, 24, 12
	ch := chart{Title: title, Width: width, Height: height, BaseY: height - bottom, LabelsY: height - 6}
	maxV := 0.0
	for _, v := range values {
		maxV = max(maxV, v)
	}
	n := len(values)
	bw := (width - gap*(n+1)) / max(n, 1)
	for i, v := range values {
		h := 0
		if maxV > 0 {
			h = int(v / maxV * float64(height-top-bottom))
		}
		if v > 0 && h < 1 {
			h = 1
		}
		ch.Bars = append(ch.Bars, bar{Label: labels[i], Value: shown[i], URL: urls[i], X: gap + i*(bw+gap), W: bw, Y: height - bottom - h, H: h, Current: i == current})
	}
	return ch
}

type usageData struct {
	Month string
	Usage inbox.Usage
	Chart chart
	// Months are the chart's months with their usage, oldest first.
	Months []monthUsage
	// Inboxes names each inbox by id.
	Inboxes map[string]string
}

type monthUsage struct {
	Month string
	Usage inbox.Usage
}

// usage shows what the workspace processed and spent: a chart of the cost
// of the last months, and a month's split by model and by inbox
// (usage_get, one call a month).
func (c *Console) usage(w http.ResponseWriter, r *http.Request, s *session) {
	month := r.URL.Query().Get("month")
	if month == "" {
		month = c.now().UTC().Format("2006-01")
	}
	end, err := time.Parse("2006-01", month)
	if err != nil || len(month) != 7 {
		c.message(w, r, s, http.StatusBadRequest, "A month is written YYYY-MM.")
		return
	}
	d := usageData{Month: month}
	var labels, shown, urls []string
	var values []float64
	for i := chartMonths - 1; i >= 0; i-- {
		m := end.AddDate(0, -i, 0).Format("2006-01")
		var u inbox.Usage
		if err := c.call(r, s, inboxmcp.ToolUsageGet, inboxmcp.UsageArg{Month: m}, &u); err != nil {
			c.fail(w, r, s, err)
			return
		}
		d.Months = append(d.Months, monthUsage{Month: m, Usage: u})
		labels = append(labels, m)
		shown = append(shown, usd(u.CostUSD))
		urls = append(urls, Prefix+"usage?"+url.Values{"month": {m}}.Encode())
		values = append(values, u.CostUSD)
	}
	d.Usage = d.Months[len(d.Months)-1].Usage
	d.Chart = barChart("Cost per month, USD", labels, shown, urls, values, len(values)-1)
	var ibs inboxmcp.InboxList
	if err := c.call(r, s, inboxmcp.ToolInboxesList, inboxmcp.InboxListArg{Page: mcpserver.Page{Limit: mcpserver.MaxPageSize}}, &ibs); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Inboxes = map[string]string{}
	for _, ib := range ibs.Inboxes {
		d.Inboxes[ib.ID] = ib.Name
	}
	c.render(w, r, s, http.StatusOK, "usage", d)
}

// usd writes an amount of dollars as the product rounds it.
func usd(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

type eventsData struct {
	Type        string
	Events      []inbox.SystemEvent
	Next, First string
}

func eventsURL(typ, cursor string) string {
	q := url.Values{}
	if typ != "" {
		q.Set("type", typ)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if len(q) == 0 {
		return Prefix + "events"
	}
	return Prefix + "events?" + q.Encode()
}

// events is the workspace's system event log, newest first, by type
// (system_events_list).
func (c *Console) events(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := eventsData{Type: q.Get("type")}
	var list inboxmcp.EventList
	if err := c.call(r, s, inboxmcp.ToolSystemEventsList, inboxmcp.EventListArg{Page: mcpserver.Page{Limit: pageSize, Cursor: q.Get("cursor")}, Type: d.Type}, &list); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Events = list.Events
	if list.NextCursor != "" {
		d.Next = eventsURL(d.Type, list.NextCursor)
	}
	if q.Get("cursor") != "" {
		d.First = eventsURL(d.Type, "")
	}
	c.render(w, r, s, http.StatusOK, "events", d)
}
