package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// staticHandler serves the embedded CSS and ES modules.
func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	return http.FileServerFS(sub)
}

// pages are the parsed page templates, by name.
type pages map[string]*template.Template

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"size": func(n int64) string {
		switch {
		case n >= 1<<20:
			return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
		case n >= 1<<10:
			return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
		}
		return fmt.Sprintf("%d B", n)
	},
	"int64": func(n int) int64 { return int64(n) },
	"usd":   usd,
}

func parsePages() pages {
	p := pages{}
	for _, name := range []string{"signin", "message", "emails", "email", "workflowrun", "agentrun", "confirm", "done", "deliveries", "webhooks", "webhook", "inboxes", "agents", "secrets", "usage", "events", "try"} {
		p[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return p
}

// view is what the layout renders around a page.
type view struct {
	Nonce   string
	Title   string
	Session *sessionView
	Data    any
	// Live says the page refreshes itself (live.js), Version is a
	// placeholder for its content's version.
	Live    bool
	Version string
}

// sessionView is the signed-in person as the pages show them.
type sessionView struct {
	Person, Workspace, Role, CSRF string
	// Workspaces are the person's memberships, when there are several to
	// switch between.
	Workspaces []store.Membership
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, s *session, code int, page string, data any) {
	v := view{Nonce: nonceOf(r), Data: data, Live: s != nil && isLive(page, data), Version: versionMarker}
	if s != nil {
		v.Session = &sessionView{Person: s.principal.PersonName, Workspace: s.principal.Workspace, Role: string(s.principal.Role), CSRF: s.csrf}
		if ms, err := c.store.Memberships(r.Context(), s.principal.Person); err == nil && len(ms) > 1 {
			v.Session.Workspaces = ms
		}
	}
	var b bytes.Buffer
	if err := c.pages[page].ExecuteTemplate(&b, "layout", v); err != nil {
		c.log.ErrorContext(r.Context(), "console: rendering", "page", page, "error", err)
		http.Error(w, "The page could not be shown.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(stamp(b.Bytes()))
}

// message renders a page that says one thing.
func (c *Console) message(w http.ResponseWriter, r *http.Request, s *session, code int, text string) {
	c.render(w, r, s, code, "message", text)
}

// call runs a tool for the session's person and decodes its result into
// out.
func (c *Console) call(r *http.Request, s *session, tool string, args any, out any) error {
	in, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("console: arguments of %s: %w", tool, err)
	}
	res, err := c.tools.Call(r.Context(), s.principal, tool, in)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("console: result of %s: %w", tool, err)
	}
	return nil
}

// fail answers a tool's failure: a missing record as 404, bad arguments
// (a filter or cursor edited by hand) as 400, a refusal as 403.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var te *mcpserver.ToolError
	if errors.As(err, &te) {
		switch te.Code {
		case "not_found":
			c.message(w, r, s, http.StatusNotFound, "Nothing by that id in this workspace.")
			return
		case "invalid_arguments":
			c.message(w, r, s, http.StatusBadRequest, "The page's filters are not valid: "+te.Message)
			return
		case "permission_denied":
			c.message(w, r, s, http.StatusForbidden, "Your role does not allow this.")
			return
		case "internal_error":
		default:
			// The product's refusal, meant for the person: say it.
			c.message(w, r, s, http.StatusConflict, "Nothing was done: "+te.Message+" ("+te.Code+")")
			return
		}
	}
	c.log.ErrorContext(r.Context(), "console: tool call", "error", err)
	c.message(w, r, s, http.StatusInternalServerError, "The console could not read this right now; try again.")
}

// Statuses are the e-mail status facets, in the order shown.
var Statuses = []string{inbox.EmailPending, inbox.EmailProcessed, inbox.EmailFailed, inbox.EmailRejected, inbox.EmailDuplicate}

// pageSize is how many e-mails a list page shows.
const pageSize = 50

type facet struct {
	Label, URL string
	Current    bool
	// Count is how many records the facet holds under the other filters
	// (the e-mails' facets).
	Count int
}

// emailFilter is the e-mail list's filters, as its URL carries them.
type emailFilter struct {
	Status, Inbox, From, Search, Since, Until string
}

func emailFilterOf(q url.Values) emailFilter {
	return emailFilter{Status: q.Get("status"), Inbox: q.Get("inbox"), From: strings.TrimSpace(q.Get("from")), Search: strings.TrimSpace(q.Get("q")),
		Since: q.Get("since"), Until: q.Get("until")}
}

// values are the filters as URL query parameters (the empty ones left out).
func (f emailFilter) values() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "inbox": f.Inbox, "from": f.From, "q": f.Search, "since": f.Since, "until": f.Until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// url is the list's URL for the filters and a cursor.
func (f emailFilter) url(cursor string) string {
	q := f.values()
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if len(q) == 0 {
		return Prefix + "emails"
	}
	return Prefix + "emails?" + q.Encode()
}

// arg is emails_list's arguments for the filters.
func (f emailFilter) arg(limit int, cursor string) inboxmcp.EmailListArg {
	return inboxmcp.EmailListArg{Page: mcpserver.Page{Limit: limit, Cursor: cursor}, InboxID: f.Inbox, Status: f.Status,
		From: f.From, Search: f.Search, Since: f.Since, Until: f.Until}
}

// filtered says whether any filter but the status narrows the list.
func (f emailFilter) filtered() bool {
	f.Status = ""
	return f != emailFilter{}
}

type emailsData struct {
	emailFilter
	Facets      []facet
	Inboxes     []inbox.Inbox
	Emails      []inboxmcp.EmailSummary
	Next, First string
	// Clear is the list without its filters but the status, when some
	// narrow it.
	Clear string
	// Total is how many e-mails the filters keep.
	Total int
	// MayReprocess says the person may reprocess, so the list offers
	// bulk selection.
	MayReprocess bool
	// Hidden are the filters as the bulk form carries them.
	Hidden []header
}

func (c *Console) emails(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	f := emailFilterOf(q)
	for _, v := range q {
		if len(v) != 1 || strings.TrimSpace(v[0]) == "" {
			// The filter form sends its empty fields: the list's URL
			// keeps only the filters in use, so a link reads as it filters.
			http.Redirect(w, r, f.url(q.Get("cursor")), http.StatusSeeOther)
			return
		}
	}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		c.message(w, r, s, http.StatusBadRequest, "Unknown status; choose one of the facets.")
		return
	}
	var list inboxmcp.EmailList
	args := f.arg(pageSize, q.Get("cursor"))
	args.Counts = true
	if err := c.call(r, s, inboxmcp.ToolEmailsList, args, &list); err != nil {
		c.fail(w, r, s, err)
		return
	}
	var inboxes inboxmcp.InboxList
	if err := c.call(r, s, inboxmcp.ToolInboxesList, inboxmcp.InboxListArg{Page: mcpserver.Page{Limit: 100}}, &inboxes); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := emailsData{emailFilter: f, Emails: list.Emails, Inboxes: inboxes.Inboxes, MayReprocess: c.tools.May(s.principal, inboxmcp.ToolEmailsReprocess)}
	for k, v := range f.values() {
		d.Hidden = append(d.Hidden, header{k, v[0]})
	}
	slices.SortFunc(d.Hidden, func(a, b header) int { return strings.Compare(a.Name, b.Name) })
	all := 0
	for _, n := range list.StatusCounts {
		all += n
	}
	at := f
	at.Status = ""
	d.Facets = append(d.Facets, facet{Label: "all", URL: at.url(""), Current: f.Status == "", Count: all})
	for _, st := range Statuses {
		at.Status = st
		d.Facets = append(d.Facets, facet{Label: st, URL: at.url(""), Current: f.Status == st, Count: list.StatusCounts[st]})
	}
	d.Total = all
	if f.Status != "" {
		d.Total = list.StatusCounts[f.Status]
	}
	if list.NextCursor != "" {
		d.Next = f.url(list.NextCursor)
	}
	if q.Get("cursor") != "" {
		d.First = f.url("")
	}
	if f.filtered() {
		d.Clear = emailFilter{Status: f.Status}.url("")
	}
	c.render(w, r, s, http.StatusOK, "emails", d)
}

type emailData struct {
	Email   inbox.Email
	Headers []header
	// HTML says the e-mail has an HTML body, shown in a sandboxed frame;
	// RemoteImages that the person asked for its remote images.
	HTML, RemoteImages bool
	// MayReprocess says the person may run emails_reprocess.
	MayReprocess bool
	Timeline     []moment
}

// live: an e-mail's page refreshes itself while the e-mail is pending.
func (d emailData) live() bool { return d.Email.Status == inbox.EmailPending }

type header struct{ Name, Value string }

func (c *Console) email(w http.ResponseWriter, r *http.Request, s *session) {
	var e inbox.Email
	if err := c.call(r, s, inboxmcp.ToolEmailsGet, inboxmcp.EmailIDArg{ID: r.PathValue("id")}, &e); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := emailData{Email: e, RemoteImages: r.URL.Query().Get("images") == "remote", MayReprocess: c.tools.May(s.principal, inboxmcp.ToolEmailsReprocess)}
	tl, err := c.timeline(r, s, e)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Timeline = tl
	if !e.Purged {
		ok, err := c.hasHTML(r.Context(), s.principal.Workspace, e.ID)
		if err != nil {
			c.log.ErrorContext(r.Context(), "console: html body", "email", e.ID, "error", err)
		}
		d.HTML = ok
	}
	for name, v := range e.Headers {
		d.Headers = append(d.Headers, header{name, v})
	}
	slices.SortFunc(d.Headers, func(a, b header) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	c.render(w, r, s, http.StatusOK, "email", d)
}

// eml sends the browser to the raw message's short-lived signed download
// link, which emails_eml makes as it does for an MCP client.
func (c *Console) eml(w http.ResponseWriter, r *http.Request, s *session) {
	var link inboxmcp.EMLLink
	if err := c.call(r, s, inboxmcp.ToolEmailsEML, inboxmcp.EmailIDArg{ID: r.PathValue("id")}, &link); err != nil {
		c.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, link.URL, http.StatusSeeOther)
}
