package inbox

import (
	"context"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// InboxListArg filters inboxes_list.
type InboxListArg struct {
	Page
}

// InboxList is a page of inboxes.
type InboxList struct {
	Inboxes    []Inbox `json:"inboxes"`
	NextBefore string  `json:"next_before,omitempty"`
}

// InboxCreateArg creates an inbox.
type InboxCreateArg struct {
	Name            string           `json:"name" jsonschema:"a human name, e.g. Supplier invoices"`
	LocalPart       string           `json:"local_part" jsonschema:"the part before @ of the inbox address: lower-case letters, digits, dot, dash, underscore"`
	AgentID         string           `json:"agent_id,omitempty" jsonschema:"the agent that analyses each e-mail (see agents_list)"`
	Recipients      []string         `json:"recipients,omitempty" jsonschema:"senders allowed to write (addresses or @domain); empty allows anyone"`
	Filters         *Filters         `json:"filters,omitempty"`
	AttachmentRules *AttachmentRules `json:"attachment_rules,omitempty"`
}

// InboxUpdateArg changes an inbox; absent fields are left as they are.
type InboxUpdateArg struct {
	ID              string           `json:"id" jsonschema:"the inbox id"`
	Name            *string          `json:"name,omitempty"`
	AgentID         *string          `json:"agent_id,omitempty" jsonschema:"the agent id, or empty to detach the agent"`
	Status          *string          `json:"status,omitempty" jsonschema:"active or paused"`
	Filters         *Filters         `json:"filters,omitempty"`
	AttachmentRules *AttachmentRules `json:"attachment_rules,omitempty"`
}

// RecipientArg adds or removes an allowed sender.
type RecipientArg struct {
	ID        string `json:"id" jsonschema:"the inbox id"`
	Recipient string `json:"recipient" jsonschema:"a sender address (ana@example.com) or a whole domain (@example.com)"`
}

// Deleted is the output of delete tools.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

var localPartRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

func (p *Product) inboxTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "inboxes_list", Title: "List inboxes",
			Description: "Lists the workspace's inboxes, most recent first: address, agent, allowed senders, filters and attachment rules. Page with limit and before.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in InboxListArg) (InboxList, error) {
				q, err := in.query()
				if err != nil {
					return InboxList{}, err
				}
				items, next, err := list[Inbox](ctx, p.repo, c.Workspace, KindInbox, q)
				out := InboxList{Inboxes: items}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "inboxes_get", Title: "Get inbox",
			Description: "Returns one inbox: its address, agent, allowed senders (recipients), filters and attachment rules.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Inbox, error) {
				return p.getInbox(ctx, c.Workspace, in.ID)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "inboxes_create", Title: "Create inbox",
			Description: "Creates an inbox with the address <local_part>@<workspace>.in.kobana.email. Attach an agent (agent_id) so each e-mail is analysed; restrict senders with recipients. Returns the new inbox.",
			Access:      mcpserver.Write},
			func(ctx context.Context, c *mcpserver.Caller, in InboxCreateArg) (Inbox, error) {
				return p.createInbox(ctx, c, in)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "inboxes_update", Title: "Update inbox",
			Description: "Changes an inbox's name, agent, status (active/paused), filters or attachment rules; fields left out stay as they are. To change who may send, use inboxes_add_recipient / inboxes_remove_recipient.",
			Access:      mcpserver.Write, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in InboxUpdateArg) (Inbox, error) {
				return p.updateInbox(ctx, c, in)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "inboxes_delete", Title: "Delete inbox",
			Description: "Deletes an inbox: its address stops receiving mail at once. E-mails already received are kept. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Deleted, error) {
				if _, err := p.getInbox(ctx, c.Workspace, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.repo.delete(ctx, c.Workspace, KindInbox, in.ID); err != nil {
					return Deleted{}, err
				}
				return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, "inbox.deleted", in.ID, map[string]string{"inbox_id": in.ID})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "inboxes_add_recipient", Title: "Allow a sender",
			Description: "Allows a sender address (or a whole @domain) to write to an inbox, whose agent will then act on their e-mails. The user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in RecipientArg) (Inbox, error) {
				return p.changeRecipients(ctx, c, in, true)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "inboxes_remove_recipient", Title: "Remove a sender",
			Description: "Stops a sender address (or @domain) from writing to an inbox. When the last one is removed the inbox accepts anyone again. The user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in RecipientArg) (Inbox, error) {
				return p.changeRecipients(ctx, c, in, false)
			}),
	}
}

func (p *Product) getInbox(ctx context.Context, ws, id string) (Inbox, error) {
	var ib Inbox
	if err := required("id", id); err != nil {
		return ib, err
	}
	err := p.repo.get(ctx, ws, KindInbox, id, &ib)
	return ib, err
}

func normalizeRecipient(r string) (string, error) {
	r = strings.ToLower(strings.TrimSpace(r))
	if strings.HasPrefix(r, "@") {
		d := r[1:]
		if d == "" || strings.ContainsAny(d, "@ ") || !strings.Contains(d, ".") {
			return "", mcpserver.Errorf("invalid_arguments", "recipient %q is not an address or @domain", r)
		}
		return r, nil
	}
	a, err := mail.ParseAddress(r)
	if err != nil || a.Address != r {
		return "", mcpserver.Errorf("invalid_arguments", "recipient %q is not an address or @domain", r)
	}
	return a.Address, nil
}

func (p *Product) checkAgent(ctx context.Context, ws, id string) error {
	if id == "" {
		return nil
	}
	var a Agent
	if err := p.repo.get(ctx, ws, KindAgent, id, &a); err != nil {
		return mcpserver.Errorf("invalid_arguments", "agent %q does not exist in this workspace (see agents_list)", id)
	}
	return nil
}

func checkStatus(s string) error {
	if s != "active" && s != "paused" {
		return mcpserver.Errorf("invalid_arguments", "status must be active or paused, got %q", s)
	}
	return nil
}

func (p *Product) createInbox(ctx context.Context, c *mcpserver.Caller, in InboxCreateArg) (Inbox, error) {
	if err := required("name", in.Name); err != nil {
		return Inbox{}, err
	}
	if !localPartRe.MatchString(in.LocalPart) {
		return Inbox{}, mcpserver.Errorf("invalid_arguments", "local_part must be 1-63 lower-case letters, digits, '.', '-' or '_', starting with a letter or digit")
	}
	if err := p.checkAgent(ctx, c.Workspace, in.AgentID); err != nil {
		return Inbox{}, err
	}
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return Inbox{}, err
	}
	existing, _, err := list[Inbox](ctx, p.repo, c.Workspace, KindInbox, store.Query{Limit: 1000})
	if err != nil {
		return Inbox{}, err
	}
	if w.Limits.Inboxes > 0 && len(existing) >= w.Limits.Inboxes {
		return Inbox{}, mcpserver.Errorf("limit_reached", "the plan allows %d inboxes and the workspace has %d", w.Limits.Inboxes, len(existing))
	}
	slug := w.Slug
	if slug == "" {
		slug = w.ID
	}
	addr := in.LocalPart + "@" + slug + ".in.kobana.email"
	for _, e := range existing {
		if e.Address == addr {
			return Inbox{}, mcpserver.Errorf("conflict", "inbox %s already uses %s", e.ID, addr)
		}
	}
	now := p.now().UTC()
	ib := Inbox{ID: newID("ibx"), Name: in.Name, Address: addr, AgentID: in.AgentID, Recipients: []string{}, Status: "active", CreatedAt: now, UpdatedAt: now}
	for _, r := range in.Recipients {
		n, err := normalizeRecipient(r)
		if err != nil {
			return Inbox{}, err
		}
		if !slices.Contains(ib.Recipients, n) {
			ib.Recipients = append(ib.Recipients, n)
		}
	}
	if in.Filters != nil {
		ib.Filters = *in.Filters
	}
	if in.AttachmentRules != nil {
		ib.AttachmentRules = *in.AttachmentRules
	}
	if err := p.repo.put(ctx, c.Workspace, KindInbox, ib.ID, ib.AgentID, ib.Status, now, ib); err != nil {
		return Inbox{}, err
	}
	return ib, p.event(ctx, c, "inbox.created", ib.ID, map[string]string{"inbox_id": ib.ID, "address": ib.Address})
}

func (p *Product) updateInbox(ctx context.Context, c *mcpserver.Caller, in InboxUpdateArg) (Inbox, error) {
	ib, err := p.getInbox(ctx, c.Workspace, in.ID)
	if err != nil {
		return ib, err
	}
	var changed []string
	if in.Name != nil {
		if err := required("name", *in.Name); err != nil {
			return ib, err
		}
		ib.Name = *in.Name
		changed = append(changed, "name")
	}
	if in.AgentID != nil {
		if err := p.checkAgent(ctx, c.Workspace, *in.AgentID); err != nil {
			return ib, err
		}
		ib.AgentID = *in.AgentID
		changed = append(changed, "agent_id")
	}
	if in.Status != nil {
		if err := checkStatus(*in.Status); err != nil {
			return ib, err
		}
		ib.Status = *in.Status
		changed = append(changed, "status")
	}
	if in.Filters != nil {
		ib.Filters = *in.Filters
		changed = append(changed, "filters")
	}
	if in.AttachmentRules != nil {
		ib.AttachmentRules = *in.AttachmentRules
		changed = append(changed, "attachment_rules")
	}
	if len(changed) == 0 {
		return ib, mcpserver.Errorf("invalid_arguments", "nothing to change: pass at least one of name, agent_id, status, filters, attachment_rules")
	}
	ib.UpdatedAt = p.now().UTC()
	if err := p.repo.put(ctx, c.Workspace, KindInbox, ib.ID, ib.AgentID, ib.Status, ib.CreatedAt, ib); err != nil {
		return ib, err
	}
	return ib, p.event(ctx, c, "inbox.updated", ib.ID, map[string]any{"inbox_id": ib.ID, "changed": changed})
}

func (p *Product) changeRecipients(ctx context.Context, c *mcpserver.Caller, in RecipientArg, add bool) (Inbox, error) {
	ib, err := p.getInbox(ctx, c.Workspace, in.ID)
	if err != nil {
		return ib, err
	}
	r, err := normalizeRecipient(in.Recipient)
	if err != nil {
		return ib, err
	}
	has := slices.Contains(ib.Recipients, r)
	typ := "inbox.recipient_added"
	switch {
	case add && has, !add && !has:
		// Idempotent: nothing to change.
		return ib, nil
	case add:
		ib.Recipients = append(ib.Recipients, r)
	default:
		ib.Recipients = slices.DeleteFunc(ib.Recipients, func(x string) bool { return x == r })
		typ = "inbox.recipient_removed"
	}
	ib.UpdatedAt = p.now().UTC()
	if err := p.repo.put(ctx, c.Workspace, KindInbox, ib.ID, ib.AgentID, ib.Status, ib.CreatedAt, ib); err != nil {
		return ib, fmt.Errorf("saving inbox: %w", err)
	}
	return ib, p.event(ctx, c, typ, ib.ID, map[string]string{"inbox_id": ib.ID, "recipient": r})
}
