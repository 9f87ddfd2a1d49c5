package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/inbox/mailstore"
	"github.com/kobana/workflow/inbox/queue"
	"github.com/kobana/workflow/store"
)

// retentionWorker purges the raw messages kept longer than their
// workspace's retention (Limits.RetentionDays; zero keeps them).
type retentionWorker struct {
	river.WorkerDefaults[queue.RetentionArgs]
	p *Pipeline
}

// Timeout bounds one purge run.
func (w *retentionWorker) Timeout(*river.Job[queue.RetentionArgs]) time.Duration { return time.Hour }

// Work purges every raw message past its workspace's retention (of one
// workspace, or of all when RetentionArgs.Workspace is empty). Each message
// is purged in a transaction that marks its e-mail purged (the record stays,
// with its metadata; its attachments can no longer be read) and records
// email.purged. A run that stops half-way is finished by the next.
func (w *retentionWorker) Work(ctx context.Context, job *river.Job[queue.RetentionArgs]) error {
	p := w.p
	now := p.now()
	days := map[string]int{}
	var due []mailstore.Stored
	// A retention is a whole number of days: nothing kept within the last
	// day can be due.
	err := p.cfg.Raw.Stored(ctx, now.Add(-24*time.Hour), func(s mailstore.Stored) error {
		if job.Args.Workspace != "" && s.Workspace != job.Args.Workspace {
			return nil
		}
		d, ok := days[s.Workspace]
		if !ok {
			ws, err := p.repo.Workspaces.Get(ctx, s.Workspace, s.Workspace)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			d = ws.Limits.RetentionDays
			days[s.Workspace] = d
		}
		if d > 0 && s.Modified.Before(now.Add(-time.Duration(d)*24*time.Hour)) {
			due = append(due, s)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing the raw messages past retention: %w", err)
	}
	for _, s := range due {
		if err := w.purge(ctx, s, days[s.Workspace], now); err != nil {
			return err
		}
	}
	if len(due) > 0 {
		p.log.Info("pipeline: purged raw messages past their workspace's retention", "messages", len(due))
	}
	return nil
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
