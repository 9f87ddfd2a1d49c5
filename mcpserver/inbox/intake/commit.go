package intake

import (
	"context"
	"fmt"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// txCache remembers, within one transaction, the inboxes and workspaces
// its deliveries read (deliveries to the same inbox read it once).
type txCache struct {
	repo       inbox.Repo
	inboxes    map[[2]string]inbox.Inbox
	workspaces map[string]inbox.Limits
}

func newTxCache(tx store.Tx) *txCache {
	return &txCache{repo: inbox.NewRepo(tx), inboxes: map[[2]string]inbox.Inbox{}, workspaces: map[string]inbox.Limits{}}
}

func (c *txCache) inbox(ctx context.Context, workspace, id string) (inbox.Inbox, error) {
	k := [2]string{workspace, id}
	if ib, ok := c.inboxes[k]; ok {
		return ib, nil
	}
	ib, err := c.repo.Inboxes.Get(ctx, workspace, id)
	if err != nil {
		return ib, fmt.Errorf("intake: reading inbox %s: %w", id, err)
	}
	c.inboxes[k] = ib
	return ib, nil
}

// limits are a workspace's plan limits (none for a workspace without an
// Inbox record).
func (c *txCache) limits(ctx context.Context, workspace string) (inbox.Limits, error) {
	if l, ok := c.workspaces[workspace]; ok {
		return l, nil
	}
	ws, err := c.repo.Workspaces.Get(ctx, workspace, workspace)
	if err != nil && !isNotFound(err) {
		return inbox.Limits{}, fmt.Errorf("intake: reading workspace %s: %w", workspace, err)
	}
	c.workspaces[workspace] = ws.Limits
	return ws.Limits, nil
}
