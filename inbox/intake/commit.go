package intake

import (
	"context"
	"fmt"
	"sync"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/store"
)

// maxBatch caps the deliveries one transaction commits.
const maxBatch = 64

// committer commits the records of deliveries arriving at the same time in
// shared transactions (group commit): a delivery that finds no commit
// running leads one with every delivery queued behind it, and hands the
// lead to the first that queues meanwhile. One commit (one fsync of the
// database's log, one round of its locks) then serves many messages, as a
// busy server receives them; a delivery alone commits alone, at once. At
// most lanes transactions run at a time (1 for SQLite, whose one writer
// would serialize them anyway).
//
// A transaction whose deliveries all succeed commits them together. When
// one fails (a DNS failure for an inbox that restricts senders, a message
// that could not be made durable), the transaction is rolled back and each
// delivery of it runs in a transaction of its own, so one delivery's
// failure is never another's.
type committer struct {
	mu      sync.Mutex
	queue   []*commit
	leaders int
}

// commit is one delivery's records: apply writes them in tx (it may run
// more than once, in a shared transaction and then alone), ready waits
// until the delivery's raw message is durable, which the transaction's
// commit waits for.
type commit struct {
	apply func(ctx context.Context, tx store.Tx, c *txCache) error
	ready func() error
	ctx   context.Context
	done  chan error
	// lead is closed to make the commit's goroutine lead the next
	// transaction; handed says it was (under committer.mu).
	lead   chan struct{}
	handed bool
}

// do commits c, alone or with others.
func (m *committer) do(ctx context.Context, st store.Transactor, lanes int, c *commit) error {
	c.ctx, c.done, c.lead = ctx, make(chan error, 1), make(chan struct{})
	m.mu.Lock()
	m.queue = append(m.queue, c)
	if m.leaders < max(lanes, 1) && len(m.queue) == 1 {
		m.leaders++
		m.mu.Unlock()
		m.run(st)
		return <-c.done
	}
	m.mu.Unlock()
	select {
	case err := <-c.done:
		return err
	case <-c.lead:
		m.run(st)
		return <-c.done
	}
}

// run commits what is queued, then hands the lead on (or gives it up).
func (m *committer) run(st store.Transactor) {
	m.mu.Lock()
	n := min(len(m.queue), maxBatch)
	batch := append([]*commit(nil), m.queue[:n]...)
	m.queue = append(m.queue[:0], m.queue[n:]...)
	m.mu.Unlock()

	m.commitBatch(st, batch)

	m.mu.Lock()
	defer m.mu.Unlock()
	for _, next := range m.queue {
		if !next.handed {
			// The lead (and the leader count) passes to the first commit no
			// other leader has handed it to.
			next.handed = true
			close(next.lead)
			return
		}
	}
	m.leaders--
}

func (m *committer) commitBatch(st store.Transactor, batch []*commit) {
	if len(batch) > 1 {
		// The batch runs under the first delivery's context less its
		// cancellation: a sender that hangs up does not undo the others.
		ctx := context.WithoutCancel(batch[0].ctx)
		err := st.WithTx(ctx, func(tx store.Tx) error {
			c := newTxCache(tx)
			for _, b := range batch {
				if err := b.apply(ctx, tx, c); err != nil {
					return err
				}
			}
			for _, b := range batch {
				if err := b.ready(); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			for _, b := range batch {
				b.done <- nil
			}
			return
		}
	}
	for _, b := range batch {
		b.done <- st.WithTx(b.ctx, func(tx store.Tx) error {
			if err := b.apply(b.ctx, tx, newTxCache(tx)); err != nil {
				return err
			}
			return b.ready()
		})
	}
}

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
