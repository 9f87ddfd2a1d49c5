package inboxmcp

import (
	"context"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// EmailListArg filters emails_list.
type EmailListArg struct {
	Page
	InboxID string `json:"inbox_id,omitempty" jsonschema:"only e-mails received by this inbox" pattern:"^ibx_[A-Za-z0-9_-]{1,64}$"`
	Status  string `json:"status,omitempty" jsonschema:"only e-mails in this processing status: pending, processed, failed, rejected, or duplicate (another copy of an e-mail the inbox had received, not processed)" enum:"pending,processed,failed,rejected,duplicate"`
	From    string `json:"from,omitempty" jsonschema:"only e-mails whose sender (From) contains this text, ignoring case: an address, a domain or a name" maxLength:"320"`
	Search  string `json:"search,omitempty" jsonschema:"only e-mails whose subject, sender or Message-ID contains this text, ignoring case" maxLength:"500"`
	Since   string `json:"since,omitempty" jsonschema:"only e-mails received on or after this day (UTC), YYYY-MM-DD" format:"date" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"`
	Until   string `json:"until,omitempty" jsonschema:"only e-mails received on or before this day (UTC), YYYY-MM-DD" format:"date" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"`
	Counts  bool   `json:"counts,omitempty" jsonschema:"also return status_counts: how many e-mails the other filters keep in each status (the status filter aside), for facets"`
}

// EmailSummary is an e-mail without its body, for listings.
type EmailSummary struct {
	ID          string    `json:"id"`
	InboxID     string    `json:"inbox_id"`
	From        string    `json:"from"`
	Subject     string    `json:"subject"`
	Attachments int       `json:"attachments"`
	Status      string    `json:"status"`
	DuplicateOf string    `json:"duplicate_of,omitempty"`
	AgentRunID  string    `json:"agent_run_id,omitempty"`
	ReceivedAt  time.Time `json:"received_at"`
}

// EmailList is a page of e-mails.
type EmailList struct {
	Emails     []EmailSummary `json:"emails"`
	NextCursor string         `json:"next_cursor,omitempty"`
	// StatusCounts, when asked for (counts), are how many e-mails the
	// filters other than status keep, by status (a status none has is
	// absent).
	StatusCounts map[string]int `json:"status_counts,omitempty"`
}

// EMLLink is a short-lived download link to a raw .eml.
type EMLLink struct {
	EmailID   string    `json:"email_id"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	SizeBytes int       `json:"size_bytes"`
}

func summarize(e inbox.Email) EmailSummary {
	return EmailSummary{ID: e.ID, InboxID: e.InboxID, From: e.From, Subject: e.Subject, Attachments: len(e.Attachments), Status: e.Status, DuplicateOf: e.DuplicateOf, AgentRunID: e.AgentRunID, ReceivedAt: e.ReceivedAt}
}

func (p *Product) emailsList(ctx context.Context, c *mcpserver.Caller, in EmailListArg) (EmailList, error) {
	q, err := in.Query()
	if err != nil {
		return EmailList{}, err
	}
	if err := checkEnum("status", in.Status, inbox.EmailPending, inbox.EmailProcessed, inbox.EmailFailed, inbox.EmailRejected, inbox.EmailDuplicate); err != nil {
		return EmailList{}, err
	}
	where, err := emailFilters(in)
	if err != nil {
		return EmailList{}, err
	}
	q.Parent, q.Where = in.InboxID, where
	var counts map[string]int
	if in.Counts {
		if counts, err = p.opts.Store.CountByStatus(ctx, c.Workspace, inbox.KindEmail, q); err != nil {
			return EmailList{}, err
		}
	}
	q.Status = in.Status
	items, next, err := listPage(ctx, p.repo.Emails, c.Workspace, q)
	out := EmailList{Emails: make([]EmailSummary, 0, len(items)), NextCursor: next, StatusCounts: counts}
	for _, e := range items {
		out.Emails = append(out.Emails, summarize(e))
	}
	return out, err
}

// emailFilters are the store filters of emails_list's sender, text and
// date filters.
func emailFilters(in EmailListArg) ([]store.Filter, error) {
	var where []store.Filter
	if s := strings.TrimSpace(in.From); s != "" {
		where = append(where, store.Contains(store.TextField("from"), s))
	}
	if s := strings.TrimSpace(in.Search); s != "" {
		where = append(where, store.Any(store.Contains(store.TextField("subject"), s),
			store.Contains(store.TextField("from"), s), store.Contains(store.TextField("message_id"), s)))
	}
	var since time.Time
	if in.Since != "" {
		t, err := checkDate(in.Since)
		if err != nil {
			return nil, mcpserver.Errorf("invalid_arguments", "since: %v", err)
		}
		since = t
		where = append(where, store.GreaterOrEqual(store.CreatedField, t))
	}
	if in.Until != "" {
		t, err := checkDate(in.Until)
		if err != nil {
			return nil, mcpserver.Errorf("invalid_arguments", "until: %v", err)
		}
		if !since.IsZero() && t.Before(since) {
			return nil, mcpserver.Errorf("invalid_arguments", "until (%s) is before since (%s)", in.Until, in.Since)
		}
		where = append(where, store.Less(store.CreatedField, t.AddDate(0, 0, 1)))
	}
	return where, nil
}

func (p *Product) emailsGet(ctx context.Context, c *mcpserver.Caller, in EmailIDArg) (inbox.Email, error) {
	return p.getEmail(ctx, c.Workspace, in.ID)
}

func (p *Product) emailsEML(ctx context.Context, c *mcpserver.Caller, in EmailIDArg) (EMLLink, error) {
	return p.emlLink(ctx, c, in.ID)
}

// emlLink is emails_eml's answer, also served as the emails/{id}/eml resource.
func (p *Product) emlLink(ctx context.Context, c *mcpserver.Caller, id string) (EMLLink, error) {
	e, err := p.getEmail(ctx, c.Workspace, id)
	if err != nil {
		return EMLLink{}, err
	}
	u, exp, err := p.signedEMLURL(ctx, c.Workspace, e.ID)
	return EMLLink{EmailID: e.ID, URL: u, ExpiresAt: exp, SizeBytes: e.SizeBytes}, err
}

// checkEmail is emails_delete's check.
func (p *Product) checkEmail(ctx context.Context, c *mcpserver.Caller, in EmailIDArg) error {
	_, err := p.getEmail(ctx, c.Workspace, in.ID)
	return err
}

func (p *Product) emailsDelete(ctx context.Context, c *mcpserver.Caller, in EmailIDArg) (Deleted, error) {
	if err := p.checkEmail(ctx, c, in); err != nil {
		return Deleted{}, err
	}
	if err := p.repo.Emails.Delete(ctx, c.Workspace, in.ID); err != nil {
		return Deleted{}, err
	}
	if err := p.opts.Messages.DeleteMessage(ctx, c.Workspace, in.ID); err != nil {
		return Deleted{}, err
	}
	return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, inbox.EventEmailDeleted, in.ID, map[string]string{"email_id": in.ID})
}

// ReprocessArg is the input of emails_reprocess.
type ReprocessArg struct {
	ID   string `json:"id" jsonschema:"the e-mail id, e.g. eml_inv_00 (see emails_list)" pattern:"^eml_[A-Za-z0-9_-]{1,64}$"`
	Mode string `json:"mode,omitempty" jsonschema:"restart (the default): run the agent and its whole workflow again, every step sent again; resume: take up the e-mail's interrupted workflow run, sending again only the step whose outcome is unknown (with the same Idempotency-Key) and the steps after it" enum:"restart,resume"`
}

// checkReprocess is emails_reprocess's check: the e-mail exists and the
// processor would start (for a restart its inbox and agent exist, for a
// resume its latest workflow run was interrupted).
func (p *Product) checkReprocess(ctx context.Context, c *mcpserver.Caller, in ReprocessArg) error {
	if err := checkReprocessArg(in); err != nil {
		return err
	}
	return toolError(p.opts.Processor.Check(ctx, p.reprocessRequest(c, in)))
}

func checkReprocessArg(in ReprocessArg) error {
	if err := required("id", in.ID); err != nil {
		return err
	}
	return checkEnum("mode", in.Mode, inbox.ReprocessRestart, inbox.ReprocessResume)
}

func (p *Product) emailsReprocess(ctx context.Context, c *mcpserver.Caller, in ReprocessArg) (inbox.Reprocessed, error) {
	if err := checkReprocessArg(in); err != nil {
		return inbox.Reprocessed{}, err
	}
	out, err := p.opts.Processor.Reprocess(ctx, p.reprocessRequest(c, in))
	return out, toolError(err)
}

func (p *Product) reprocessRequest(c *mcpserver.Caller, in ReprocessArg) inbox.ReprocessRequest {
	return inbox.ReprocessRequest{Workspace: c.Workspace, EmailID: in.ID, Mode: in.Mode, Actor: inbox.PersonActor(c.Person)}
}

func (p *Product) getEmail(ctx context.Context, ws, id string) (inbox.Email, error) {
	if err := required("id", id); err != nil {
		return inbox.Email{}, err
	}
	return p.repo.Emails.Get(ctx, ws, id)
}
