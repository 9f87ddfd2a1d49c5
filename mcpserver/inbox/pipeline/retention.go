package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
)

// retentionWorker purges the raw messages of the e-mails received longer
// ago than their workspace's retention (inbox.Workspace.Retention; zero
// keeps them).
type retentionWorker struct {
	river.WorkerDefaults[queue.RetentionArgs]
	p *Pipeline
}

// Timeout bounds one purge run.
func (w *retentionWorker) Timeout(*river.Job[queue.RetentionArgs]) time.Duration { return time.Hour }

// retentionBatch is how many e-mail records one query reads.
const retentionBatch = 200

// Work purges every raw message whose e-mail was received (its recorded
// received_at, not the stored file's age, which a copy or a restore
// resets) longer ago than its workspace's retention, of one workspace or of
// all when RetentionArgs.Workspace is empty. Each message is purged in a
// transaction that marks its e-mail purged (the record stays, with its
// metadata; its attachments can no longer be read) and records
// email.purged; a message whose e-mail already says purged (a run stopped
// between the commit and deleting a file) is deleted. A run that stops
// half-way is finished by the next.
func (w *retentionWorker) Work(ctx context.Context, job *river.Job[queue.RetentionArgs]) error {
	p := w.p
	now := p.now()
	kept := map[string][]mailstore.Stored{}
	// Every message still kept (a message is never kept in the future: the
	// bound only has to be later than now).
	err := p.cfg.Raw.Stored(ctx, now.Add(24*time.Hour), func(s mailstore.Stored) error {
		if job.Args.Workspace == "" || s.Workspace == job.Args.Workspace {
			kept[s.Workspace] = append(kept[s.Workspace], s)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing the raw messages kept: %w", err)
	}
	purged := 0
	for _, ws := range slices.Sorted(maps.Keys(kept)) {
		n, err := w.workspace(ctx, ws, kept[ws], now)
		purged += n
		if err != nil {
			return err
		}
	}
	if purged > 0 {
		p.log.Info("pipeline: purged raw messages past their workspace's retention", "messages", purged)
	}
	return nil
}

// workspace purges the messages of one workspace's e-mails past its
// retention, among those it keeps, and returns how many.
func (w *retentionWorker) workspace(ctx context.Context, ws string, kept []mailstore.Stored, now time.Time) (int, error) {
	p := w.p
	wsp, err := p.repo.Workspaces.Get(ctx, ws, ws)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil // no Inbox settings: nothing says to purge
	}
	if err != nil {
		return 0, fmt.Errorf("reading the retention of workspace %s: %w", ws, err)
	}
	days := wsp.Retention()
	if days == 0 {
		return 0, nil
	}
	cutoff := now.Add(-time.Duration(days) * 24 * time.Hour)
	n := 0
	for batch := range slices.Chunk(kept, retentionBatch) {
		in := make([]any, len(batch))
		byID := make(map[string]mailstore.Stored, len(batch))
		for i, s := range batch {
			in[i], byID[s.ID] = s.ID, s
		}
		emails, err := p.repo.Emails.All(ctx, ws, store.Query{Where: []store.Filter{store.In(store.IDField, in...)}, Limit: len(batch)})
		if err != nil {
			return n, fmt.Errorf("reading the e-mails of workspace %s for retention: %w", ws, err)
		}
		for _, e := range emails {
			// A message no e-mail names is the start sweep's; an e-mail
			// without a receive time has no age to go by.
			if !e.Purged && (e.ReceivedAt.IsZero() || !e.ReceivedAt.Before(cutoff)) {
				continue
			}
			if err := w.purge(ctx, byID[e.ID], days, now); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// purge deletes one raw message and marks its e-mail purged.
func (w *retentionWorker) purge(ctx context.Context, s mailstore.Stored, days int, now time.Time) error {
	p := w.p
	var after func(context.Context) error
	err := p.cfg.Store.WithTx(ctx, func(tx store.Tx) error {
		repo := p.repo.In(tx)
		e, err := repo.Emails.Get(ctx, s.Workspace, s.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err == nil && !e.Purged {
			e.Purged, e.PurgedAt = true, now
			if err := repo.Emails.Put(ctx, s.Workspace, e); err != nil {
				return err
			}
			ev, err := inbox.NewEvent(inbox.EventEmailPurged, inbox.ActorSystem, e.ID, map[string]any{"email_id": e.ID, "inbox_id": e.InboxID,
				"received_at": e.ReceivedAt, "retention_days": days, "size_bytes": s.Size}, now)
			if err != nil {
				return err
			}
			if err := p.record(ctx, tx, s.Workspace, ev); err != nil {
				return err
			}
		}
		after, err = p.cfg.Raw.PurgeTx(ctx, tx, s.Workspace, s.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("purging the raw message of e-mail %s/%s: %w", s.Workspace, s.ID, err)
	}
	hit("retention.marked")
	p.observer().Purged(s.Workspace, s.ID)
	if after != nil {
		if err := after(ctx); err != nil {
			return fmt.Errorf("purging the raw message of e-mail %s/%s: %w", s.Workspace, s.ID, err)
		}
	}
	return nil
}
