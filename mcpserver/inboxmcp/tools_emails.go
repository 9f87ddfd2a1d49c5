package inboxmcp

import (
	"context"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// EmailListArg filters emails_list.
type EmailListArg struct {
	Page
	InboxID string `json:"inbox_id,omitempty" jsonschema:"only e-mails received by this inbox" pattern:"^ibx_[A-Za-z0-9_-]{1,64}$"`
	Status  string `json:"status,omitempty" jsonschema:"only e-mails in this processing status: pending, processed, failed, rejected, or duplicate (another copy of an e-mail the inbox had received, not processed)" enum:"pending,processed,failed,rejected,duplicate"`
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
	q.Parent, q.Status = in.InboxID, in.Status
	items, next, err := listPage(ctx, p.repo.Emails, c.Workspace, q)
	out := EmailList{Emails: make([]EmailSummary, 0, len(items)), NextCursor: next}
	for _, e := range items {
		out.Emails = append(out.Emails, summarize(e))
	}
	return out, err
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
