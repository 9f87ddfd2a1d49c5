package inboxmcp

import (
	"context"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// InboxListArg filters inboxes_list.
type InboxListArg struct {
	Page
	Status string `json:"status,omitempty" jsonschema:"only inboxes in this status" enum:"active,paused"`
}

// InboxList is a page of inboxes.
type InboxList struct {
	Inboxes    []inbox.Inbox `json:"inboxes"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// InboxCreateArg creates an inbox.
type InboxCreateArg struct {
	Name            string                 `json:"name" jsonschema:"a human name, e.g. Supplier invoices" minLength:"1" maxLength:"200"`
	LocalPart       string                 `json:"local_part" jsonschema:"the part before @ of the inbox address: lower-case letters, digits, dot, dash, underscore" pattern:"^[a-z0-9][a-z0-9._-]{0,62}$"`
	AgentID         string                 `json:"agent_id,omitempty" jsonschema:"the agent that analyses each e-mail (see agents_list)" pattern:"^agt_[A-Za-z0-9_-]{1,64}$"`
	Recipients      []string               `json:"recipients,omitempty" jsonschema:"senders allowed to write (addresses or @domain); empty allows anyone" maxItems:"100" pattern:"^[^@\\s]*@[^@\\s]+\\.[^@\\s]+$" maxLength:"254"`
	Filters         *inbox.Filters         `json:"filters,omitempty"`
	AttachmentRules *inbox.AttachmentRules `json:"attachment_rules,omitempty"`
}

// InboxUpdateArg changes an inbox; absent fields are left as they are.
type InboxUpdateArg struct {
	ID              string                 `json:"id" jsonschema:"the inbox id" pattern:"^ibx_[A-Za-z0-9_-]{1,64}$"`
	Name            *string                `json:"name,omitempty" minLength:"1" maxLength:"200"`
	AgentID         *string                `json:"agent_id,omitempty" jsonschema:"the agent id, or empty to detach the agent" pattern:"^(agt_[A-Za-z0-9_-]{1,64})?$"`
	Status          *string                `json:"status,omitempty" jsonschema:"active or paused" enum:"active,paused"`
	Filters         *inbox.Filters         `json:"filters,omitempty"`
	AttachmentRules *inbox.AttachmentRules `json:"attachment_rules,omitempty"`
}

// RecipientArg adds or removes an allowed sender.
type RecipientArg struct {
	ID        string `json:"id" jsonschema:"the inbox id" pattern:"^ibx_[A-Za-z0-9_-]{1,64}$"`
	Recipient string `json:"recipient" jsonschema:"a sender address (ana@example.com) or a whole domain (@example.com)" pattern:"^[^@\\s]*@[^@\\s]+\\.[^@\\s]+$" maxLength:"254"`
}

// Deleted is the output of delete tools.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

var localPartRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

func (p *Product) inboxesList(ctx context.Context, c *mcpserver.Caller, in InboxListArg) (InboxList, error) {
	q, err := in.Query()
	if err != nil {
		return InboxList{}, err
	}
	if err := checkEnum("status", in.Status, inbox.StatusActive, inbox.StatusPaused); err != nil {
		return InboxList{}, err
	}
	q.Status = in.Status
	items, next, err := listPage(ctx, p.repo.Inboxes, c.Workspace, q)
	return InboxList{Inboxes: items, NextCursor: next}, err
}

func (p *Product) inboxesGet(ctx context.Context, c *mcpserver.Caller, in InboxIDArg) (inbox.Inbox, error) {
	return p.getInbox(ctx, c.Workspace, in.ID)
}

func (p *Product) inboxesCreate(ctx context.Context, c *mcpserver.Caller, in InboxCreateArg) (inbox.Inbox, error) {
	if err := required("name", in.Name); err != nil {
		return inbox.Inbox{}, err
	}
	if !localPartRe.MatchString(in.LocalPart) {
		return inbox.Inbox{}, mcpserver.Errorf("invalid_arguments", "local_part must be 1-63 lower-case letters, digits, '.', '-' or '_', starting with a letter or digit")
	}
	if err := p.checkAgentRef(ctx, c.Workspace, in.AgentID); err != nil {
		return inbox.Inbox{}, err
	}
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return inbox.Inbox{}, err
	}
	addr := inbox.InboxAddress(in.LocalPart, w, p.opts.MailDomain)
	n := 0
	err = p.repo.Inboxes.Each(ctx, c.Workspace, store.Query{}, func(e inbox.Inbox) error {
		n++
		if e.Address == addr {
			return mcpserver.Errorf("conflict", "inbox %s already uses %s", e.ID, addr)
		}
		return nil
	})
	if err != nil {
		return inbox.Inbox{}, err
	}
	if w.Limits.Inboxes > 0 && n >= w.Limits.Inboxes {
		return inbox.Inbox{}, mcpserver.Errorf("limit_reached", "the plan allows %d inboxes and the workspace has %d", w.Limits.Inboxes, n)
	}
	now := p.now().UTC()
	ib := inbox.Inbox{ID: inbox.NewID("ibx"), Name: in.Name, Address: addr, AgentID: in.AgentID, Recipients: []string{}, Status: inbox.StatusActive, CreatedAt: now, UpdatedAt: now}
	for _, r := range in.Recipients {
		n, err := normalizeRecipient(r)
		if err != nil {
			return inbox.Inbox{}, err
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
	if err := checkRules(ib.Filters, ib.AttachmentRules); err != nil {
		return inbox.Inbox{}, err
	}
	if err := p.repo.Inboxes.Put(ctx, c.Workspace, ib); err != nil {
		return inbox.Inbox{}, err
	}
	return ib, p.event(ctx, c, inbox.EventInboxCreated, ib.ID, map[string]string{"inbox_id": ib.ID, "address": ib.Address})
}

func (p *Product) inboxesUpdate(ctx context.Context, c *mcpserver.Caller, in InboxUpdateArg) (inbox.Inbox, error) {
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
		if err := p.checkAgentRef(ctx, c.Workspace, *in.AgentID); err != nil {
			return ib, err
		}
		ib.AgentID = *in.AgentID
		changed = append(changed, "agent_id")
	}
	if in.Status != nil {
		if err := checkEnum("status", *in.Status, inbox.StatusActive, inbox.StatusPaused); err != nil {
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
	if err := checkRules(ib.Filters, ib.AttachmentRules); err != nil {
		return ib, err
	}
	ib.UpdatedAt = p.now().UTC()
	if err := p.repo.Inboxes.Put(ctx, c.Workspace, ib); err != nil {
		return ib, err
	}
	return ib, p.event(ctx, c, inbox.EventInboxUpdated, ib.ID, map[string]any{"inbox_id": ib.ID, "changed": changed})
}

// checkInbox is the check of destructive tools on one inbox.
func (p *Product) checkInbox(ctx context.Context, c *mcpserver.Caller, in InboxIDArg) error {
	_, err := p.getInbox(ctx, c.Workspace, in.ID)
	return err
}

func (p *Product) inboxesDelete(ctx context.Context, c *mcpserver.Caller, in InboxIDArg) (Deleted, error) {
	if err := p.checkInbox(ctx, c, in); err != nil {
		return Deleted{}, err
	}
	if err := p.repo.Inboxes.Delete(ctx, c.Workspace, in.ID); err != nil {
		return Deleted{}, err
	}
	return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, inbox.EventInboxDeleted, in.ID, map[string]string{"inbox_id": in.ID})
}

// checkRecipientChange is the check of inboxes_add_recipient and
// inboxes_remove_recipient: the inbox exists and the recipient is one.
func (p *Product) checkRecipientChange(ctx context.Context, c *mcpserver.Caller, in RecipientArg) error {
	if _, err := p.getInbox(ctx, c.Workspace, in.ID); err != nil {
		return err
	}
	_, err := normalizeRecipient(in.Recipient)
	return err
}

func (p *Product) inboxesAddRecipient(ctx context.Context, c *mcpserver.Caller, in RecipientArg) (inbox.Inbox, error) {
	return p.changeRecipients(ctx, c, in, true)
}

func (p *Product) inboxesRemoveRecipient(ctx context.Context, c *mcpserver.Caller, in RecipientArg) (inbox.Inbox, error) {
	return p.changeRecipients(ctx, c, in, false)
}

func (p *Product) getInbox(ctx context.Context, ws, id string) (inbox.Inbox, error) {
	if err := required("id", id); err != nil {
		return inbox.Inbox{}, err
	}
	return p.repo.Inboxes.Get(ctx, ws, id)
}

// normalizeRecipient checks an allowed-sender rule, an address or @domain
// written exactly (no surrounding spaces), and lower-cases it.
func normalizeRecipient(r string) (string, error) {
	bad := mcpserver.Errorf("invalid_arguments", "recipient %q is not an address (ana@example.com) or a domain (@example.com)", r)
	r = strings.ToLower(r)
	if d, ok := strings.CutPrefix(r, "@"); ok {
		if d == "" || strings.ContainsAny(d, "@ \t\r\n") || !strings.Contains(d, ".") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
			return "", bad
		}
		return r, nil
	}
	a, err := mail.ParseAddress(r)
	if err != nil || a.Address != r {
		return "", bad
	}
	return a.Address, nil
}

// checkAgentRef checks that an agent an inbox names exists ("" names none).
func (p *Product) checkAgentRef(ctx context.Context, ws, id string) error {
	if id == "" {
		return nil
	}
	if _, err := p.repo.Agents.Get(ctx, ws, id); err != nil {
		return mcpserver.Errorf("invalid_arguments", "agent %q does not exist in this workspace (see agents_list)", id)
	}
	return nil
}

// checkEnum accepts "" or one of the values, exactly.
func checkEnum(field, v string, values ...string) error {
	if v == "" || slices.Contains(values, v) {
		return nil
	}
	return mcpserver.Errorf("invalid_arguments", "%s must be one of %s, got %q", field, strings.Join(values, ", "), v)
}

// checkRules refuses filters and attachment rules that would never match
// or say nothing: empty subject filters, negative sizes, malformed types.
func checkRules(f inbox.Filters, r inbox.AttachmentRules) error {
	for _, s := range f.SubjectContains {
		if strings.TrimSpace(s) == "" {
			return mcpserver.Errorf("invalid_arguments", "filters.subject_contains holds an empty text, which would match every subject; remove it")
		}
	}
	if r.MaxBytes < 0 {
		return mcpserver.Errorf("invalid_arguments", "attachment_rules.max_bytes must be 0 (no limit) or more, got %d", r.MaxBytes)
	}
	for _, t := range r.AllowedTypes {
		if !mediaTypeRe.MatchString(t) {
			return mcpserver.Errorf("invalid_arguments", "attachment_rules.allowed_types: %q is not a media type such as application/pdf or image/*", t)
		}
	}
	return nil
}

var mediaTypeRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/(\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})$`)

func (p *Product) changeRecipients(ctx context.Context, c *mcpserver.Caller, in RecipientArg, add bool) (inbox.Inbox, error) {
	ib, err := p.getInbox(ctx, c.Workspace, in.ID)
	if err != nil {
		return ib, err
	}
	r, err := normalizeRecipient(in.Recipient)
	if err != nil {
		return ib, err
	}
	has := slices.Contains(ib.Recipients, r)
	typ := inbox.EventInboxRecipientAdded
	switch {
	case add && has, !add && !has:
		// Idempotent: nothing to change.
		return ib, nil
	case add:
		ib.Recipients = append(ib.Recipients, r)
	default:
		ib.Recipients = slices.DeleteFunc(ib.Recipients, func(x string) bool { return x == r })
		typ = inbox.EventInboxRecipientRemoved
	}
	ib.UpdatedAt = p.now().UTC()
	if err := p.repo.Inboxes.Put(ctx, c.Workspace, ib); err != nil {
		return ib, fmt.Errorf("saving inbox: %w", err)
	}
	return ib, p.event(ctx, c, typ, ib.ID, map[string]string{"inbox_id": ib.ID, "recipient": r})
}
