package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// DefaultMailDomain is the domain inboxes receive under when the server
// names no other: LOCAL@WORKSPACE.in.kobana.email.
const DefaultMailDomain = "in.kobana.email"

// Where the routes of workspaces' own mail domains are kept: one record
// per domain, in a workspace of their own (no real workspace has this id),
// so that the intake finds a domain's workspace with one read and two
// workspaces can never claim one domain.
const (
	MailDomainsWorkspace = "_mail_domains"
	KindMailDomain       = "mail_domain"
)

// ErrMailDomainTaken reports a mail domain another workspace receives
// under.
var ErrMailDomainTaken = errors.New("the mail domain is another workspace's")

// mailDomainRoute is the record of one workspace's own mail domain.
type mailDomainRoute struct {
	Domain    string    `json:"domain"`
	Workspace string    `json:"workspace_id"`
	CreatedAt time.Time `json:"created_at"`
}

// NormalizeMailDomain checks a mail domain (a DNS name of at least two
// labels, letters, digits and hyphens, no label starting or ending with a
// hyphen) and returns it lower-cased, without a trailing dot.
func NormalizeMailDomain(d string) (string, error) {
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	labels := strings.Split(d, ".")
	if len(d) > 253 || len(labels) < 2 {
		return "", fmt.Errorf("mail domain %q: a domain name of two labels or more, such as mail.example.com", d)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("mail domain %q: label %q must be 1-63 letters, digits or hyphens, not starting or ending with a hyphen", d, l)
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", fmt.Errorf("mail domain %q: label %q holds %q; only letters, digits and hyphens", d, l, c)
			}
		}
	}
	return d, nil
}

// InboxAddress is the address an inbox with local part local receives at
// in workspace w: under the workspace's own mail domain when it has one
// (LOCAL@MAILDOMAIN), else under the server's (LOCAL@LABEL.DOMAIN, LABEL
// the workspace's slug, or its id without one; domain "" is
// DefaultMailDomain).
func InboxAddress(local string, w Workspace, domain string) string {
	if w.MailDomain != "" {
		return local + "@" + w.MailDomain
	}
	if domain == "" {
		domain = DefaultMailDomain
	}
	label := w.Slug
	if label == "" {
		label = w.ID
	}
	return local + "@" + label + "." + domain
}

// ClaimMailDomain makes domain (normalized) the mail domain of workspace
// ws: its route is recorded, and the workspace's record names it. A domain
// claimed by another workspace is ErrMailDomainTaken; claiming again the
// workspace's own is nothing. The workspace's earlier domain, if any, is
// released.
func ClaimMailDomain(ctx context.Context, st store.Transactor, ws, domain string, now time.Time) error {
	d, err := NormalizeMailDomain(domain)
	if err != nil {
		return err
	}
	return st.WithTx(ctx, func(tx store.Tx) error {
		repo := NewRepo(tx)
		w, err := repo.Workspaces.Get(ctx, ws, ws)
		if err != nil {
			return fmt.Errorf("claiming mail domain %s: %w", d, err)
		}
		owner, err := WorkspaceOfMailDomain(ctx, tx, d)
		switch {
		case err == nil && owner != ws:
			return fmt.Errorf("%w: %s receives under %s", ErrMailDomainTaken, owner, d)
		case errors.Is(err, store.ErrNotFound):
			data, _ := json.Marshal(mailDomainRoute{Domain: d, Workspace: ws, CreatedAt: now.UTC()})
			if err := tx.CreateRecord(ctx, store.Record{Workspace: MailDomainsWorkspace, Kind: KindMailDomain, ID: d, Created: now.UTC(), Data: data}); err != nil {
				return fmt.Errorf("claiming mail domain %s: %w", d, err)
			}
		case err != nil:
			return err
		}
		if w.MailDomain != "" && w.MailDomain != d {
			if err := tx.DeleteRecord(ctx, MailDomainsWorkspace, KindMailDomain, w.MailDomain); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("releasing mail domain %s: %w", w.MailDomain, err)
			}
		}
		w.MailDomain = d
		return repo.Workspaces.Put(ctx, ws, w)
	})
}

// WorkspaceOfMailDomain returns the workspace that receives under its own
// mail domain d (normalized); store.ErrNotFound when none does.
func WorkspaceOfMailDomain(ctx context.Context, records store.Records, d string) (string, error) {
	r, err := records.GetRecord(ctx, MailDomainsWorkspace, KindMailDomain, strings.ToLower(d))
	if err != nil {
		return "", err
	}
	var route mailDomainRoute
	if err := json.Unmarshal(r.Data, &route); err != nil {
		return "", fmt.Errorf("the route of mail domain %s: %w", d, err)
	}
	return route.Workspace, nil
}
