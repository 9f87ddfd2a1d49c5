package inboxmcp

import (
	"context"
	"errors"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// EmailListArg filters emails_list.
type EmailListArg struct {
	Page
	InboxID string `json:"inbox_id,omitempty" jsonschema:"only e-mails received by this inbox"`
	Status  string `json:"status,omitempty" jsonschema:"only e-mails in this processing status: pending, processed, failed or rejected"`
}

// EmailSummary is an e-mail without its body, for listings.
type EmailSummary struct {
	ID          string    `json:"id"`
	InboxID     string    `json:"inbox_id"`
	From        string    `json:"from"`
	Subject     string    `json:"subject"`
	Attachments int       `json:"attachments"`
	Status      string    `json:"status"`
	AgentRunID  string    `json:"agent_run_id,omitempty"`
	ReceivedAt  time.Time `json:"received_at"`
}

// EmailList is a page of e-mails.
type EmailList struct {
	Emails     []EmailSummary `json:"emails"`
	NextBefore string         `json:"next_before,omitempty"`
}

// EMLLink is a short-lived download link to a raw .eml.
type EMLLink struct {
	EmailID   string    `json:"email_id"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	SizeBytes int       `json:"size_bytes"`
}

func summarize(e inbox.Email) EmailSummary {
	return EmailSummary{ID: e.ID, InboxID: e.InboxID, From: e.From, Subject: e.Subject, Attachments: len(e.Attachments), Status: e.Status, AgentRunID: e.AgentRunID, ReceivedAt: e.ReceivedAt}
}

func (p *Product) emailTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_list", Title: "List e-mails",
			Description: "Lists received e-mails, most recent first, optionally of one inbox or in one status (pending, processed, failed, rejected). Each item has the sender, subject, number of attachments and the agent run that processed it. Use emails_get for the body.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in EmailListArg) (EmailList, error) {
				q, err := in.query()
				if err != nil {
					return EmailList{}, err
				}
				q.Parent, q.Status = in.InboxID, in.Status
				items, next, err := inbox.List[inbox.Email](ctx, p.repo, c.Workspace, q)
				out := EmailList{Emails: make([]EmailSummary, 0, len(items))}
				for _, e := range items {
					out.Emails = append(out.Emails, summarize(e))
				}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_get", Title: "Get e-mail",
			Description: "Returns one received e-mail: headers, text body, attachments (index, filename, type, size — the N of ${{email.attachments.N}}) and processing status with its agent and workflow runs.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (inbox.Email, error) {
				return p.getEmail(ctx, c.Workspace, in.ID)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_eml", Title: "Download raw e-mail",
			Description: "Returns a signed URL to download the raw .eml of an e-mail, valid for 5 minutes. Hand it to the user or fetch it; the URL is the credential, so do not post it anywhere public.",
			Access:      mcpserver.Read},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (EMLLink, error) {
				e, err := p.getEmail(ctx, c.Workspace, in.ID)
				if err != nil {
					return EMLLink{}, err
				}
				u, exp, err := p.signedEMLURL(ctx, c.Workspace, e.ID)
				return EMLLink{EmailID: e.ID, URL: u, ExpiresAt: exp, SizeBytes: e.SizeBytes}, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_delete", Title: "Delete e-mail",
			Description: "Deletes an e-mail and its raw .eml. Its agent and workflow runs are kept, but workflows can no longer read its attachments. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Deleted, error) {
				if _, err := p.getEmail(ctx, c.Workspace, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := inbox.Delete[inbox.Email](ctx, p.repo, c.Workspace, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.opts.Store.DeleteBlob(ctx, c.Workspace, in.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
					return Deleted{}, err
				}
				return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, inbox.EventEmailDeleted, in.ID, map[string]string{"email_id": in.ID})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_reprocess", Title: "Reprocess e-mail",
			Description: "Runs the inbox's agent on the e-mail again and executes the workflow it answers with: outgoing requests are really sent and the agent may reply or act. Records a new agent run and workflow run and returns them. The user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (inbox.Reprocessed, error) {
				return p.reprocess(ctx, c, in.ID)
			}),
	}
}

func (p *Product) getEmail(ctx context.Context, ws, id string) (inbox.Email, error) {
	var e inbox.Email
	if err := required("id", id); err != nil {
		return e, err
	}
	err := load(ctx, p.repo, ws, id, &e)
	return e, err
}

func (p *Product) reprocess(ctx context.Context, c *mcpserver.Caller, id string) (inbox.Reprocessed, error) {
	if err := required("id", id); err != nil {
		return inbox.Reprocessed{}, err
	}
	out, err := p.opts.Processor.Reprocess(ctx, inbox.ReprocessRequest{Workspace: c.Workspace, EmailID: id, Actor: inbox.PersonActor(c.Person)})
	return out, toolError(err)
}
