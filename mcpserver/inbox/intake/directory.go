package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// DefaultMailDomain is the domain under which inboxes receive:
// LOCAL@WORKSPACE.in.kobana.email.
const DefaultMailDomain = inbox.DefaultMailDomain

// Workspaces finds a workspace by the label its inboxes' addresses carry:
// its slug, or its id when it has none.
type Workspaces interface {
	GetWorkspace(ctx context.Context, id string) (store.Workspace, error)
}

// WorkspacesBySlug is implemented by identity stores that can find a
// workspace by its slug (store/sqlite and store/pg do); without it only
// id-labelled addresses resolve.
type WorkspacesBySlug interface {
	WorkspaceBySlug(ctx context.Context, slug string) (store.Workspace, error)
}

// StoreDirectory finds inboxes in the store. An inbox's address is
// LOCAL@LABEL.DOMAIN (as inboxes_create makes it), LABEL being its
// workspace's slug or id, or LOCAL@MAILDOMAIN for a workspace that receives
// under its own mail domain (inbox.ClaimMailDomain); the inbox is the one
// of that workspace whose address is the whole address.
type StoreDirectory struct {
	Records    store.Records
	Workspaces Workspaces
	// Domain is the mail domain (default DefaultMailDomain).
	Domain string
}

// ByAddress implements Directory.
func (d StoreDirectory) ByAddress(ctx context.Context, address string) (Recipient, error) {
	addr := strings.ToLower(strings.TrimSpace(address))
	_, host, ok := strings.Cut(addr, "@")
	domain := d.Domain
	if domain == "" {
		domain = DefaultMailDomain
	}
	if !ok || host == "" {
		return Recipient{}, ErrUnknownAddress
	}
	var ws string
	label, under := strings.CutSuffix(host, "."+strings.ToLower(domain))
	switch {
	case under && label != "" && !strings.Contains(label, "."):
		w, err := d.workspace(ctx, label)
		if err != nil {
			return Recipient{}, err
		}
		ws = w
	default:
		// A workspace receiving under its own mail domain.
		w, err := inbox.WorkspaceOfMailDomain(ctx, d.Records, host)
		if errors.Is(err, store.ErrNotFound) {
			return Recipient{}, ErrUnknownAddress
		}
		if err != nil {
			return Recipient{}, fmt.Errorf("intake: finding the workspace of mail domain %s: %w", host, err)
		}
		ws = w
	}
	list, err := inbox.NewRepo(d.Records).Inboxes.All(ctx, ws, store.Query{})
	if err != nil {
		return Recipient{}, fmt.Errorf("intake: listing the inboxes of %s: %w", ws, err)
	}
	for _, ib := range list {
		if strings.EqualFold(ib.Address, addr) {
			return Recipient{Workspace: ws, InboxID: ib.ID, Address: ib.Address}, nil
		}
	}
	return Recipient{}, ErrUnknownAddress
}

// workspace resolves an address label to a workspace id.
func (d StoreDirectory) workspace(ctx context.Context, label string) (string, error) {
	if bs, ok := d.Workspaces.(WorkspacesBySlug); ok {
		w, err := bs.WorkspaceBySlug(ctx, label)
		if err == nil {
			return w.ID, nil
		}
		if errors.Is(err, store.ErrConflict) {
			// Two workspaces share the slug: mail cannot be routed to either.
			return "", ErrUnknownAddress
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", fmt.Errorf("intake: finding workspace %q: %w", label, err)
		}
	}
	w, err := d.Workspaces.GetWorkspace(ctx, label)
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrUnknownAddress
	}
	if err != nil {
		return "", fmt.Errorf("intake: finding workspace %q: %w", label, err)
	}
	if w.Slug != "" && !strings.EqualFold(w.Slug, label) {
		// A workspace with a slug receives at its slug only.
		return "", ErrUnknownAddress
	}
	return w.ID, nil
}

// ByID implements Directory.
func (d StoreDirectory) ByID(ctx context.Context, workspace, inboxID string) (Recipient, error) {
	ib, err := inbox.NewRepo(d.Records).Inboxes.Get(ctx, workspace, inboxID)
	if errors.Is(err, store.ErrNotFound) {
		return Recipient{}, ErrUnknownAddress
	}
	if err != nil {
		return Recipient{}, fmt.Errorf("intake: reading inbox %s: %w", inboxID, err)
	}
	return Recipient{Workspace: workspace, InboxID: ib.ID, Address: ib.Address}, nil
}

// IdentityTokens adapts the store's token lookup to Tokens.
type IdentityTokens struct {
	Identity interface {
		Authenticate(ctx context.Context, token string) (store.Principal, error)
	}
}

// Authenticate implements Tokens.
func (t IdentityTokens) Authenticate(ctx context.Context, token string) (Principal, error) {
	p, err := t.Identity.Authenticate(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, ErrUnknownToken
	}
	if err != nil {
		return Principal{}, err
	}
	return Principal{TokenID: p.TokenID, Workspace: p.Workspace, Role: string(p.Role), Scopes: p.Scopes}, nil
}

// cachedDirectory remembers the inboxes found by address for a short time,
// so that a busy server does not look an inbox up for every RCPT. Only
// finds are remembered: an inbox created meanwhile is found at once, one
// deleted or moved is still accepted for up to ttl, and its delivery then
// fails in the records' transaction, which reads the inbox again (451: the
// sender retries, and is refused at RCPT once the entry expires).
type cachedDirectory struct {
	Directory
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cachedRecipient
}

type cachedRecipient struct {
	r       Recipient
	expires time.Time
}

// maxCachedRecipients bounds the cache; past it, it starts over.
const maxCachedRecipients = 10000

func (c *cachedDirectory) ByAddress(ctx context.Context, address string) (Recipient, error) {
	key := strings.ToLower(address)
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.r, nil
	}
	r, err := c.Directory.ByAddress(ctx, address)
	if err != nil {
		return r, err
	}
	c.mu.Lock()
	if len(c.entries) >= maxCachedRecipients {
		c.entries = map[string]cachedRecipient{}
	}
	c.entries[key] = cachedRecipient{r: r, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return r, nil
}
