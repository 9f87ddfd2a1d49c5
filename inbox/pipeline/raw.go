package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/inbox/mailstore"
	"github.com/kobana/workflow/store"
)

// RawMessages is where the raw messages (.eml) are kept, as the stages use
// them: opened for the agent and the workflow (inbox.Messages), listed and
// purged for retention. Files and LargeObjects are the two kinds of
// storage the intake writes to.
type RawMessages interface {
	inbox.Messages
	// Stored calls fn for every stored message kept before a time.
	Stored(ctx context.Context, before time.Time, fn func(mailstore.Stored) error) error
	// PurgeTx deletes a stored message as part of tx, or returns the
	// deletion to run once tx has committed (storage outside the database).
	// Deleting a message that is not there is not an error.
	PurgeTx(ctx context.Context, tx store.Tx, workspace, id string) (after func(context.Context) error, err error)
}

// Files are raw messages kept as files under the data directory
// (mailstore.Dir), the embedded default.
type Files struct{ Dir *mailstore.Dir }

// OpenMessage implements inbox.Messages: a snapshot that stays readable
// until closed, even if the message is purged meanwhile.
func (f Files) OpenMessage(ctx context.Context, workspace, id string) (inbox.Message, error) {
	return f.Dir.OpenMessage(ctx, workspace, id)
}

// DeleteMessage implements inbox.Messages (emails_delete): an open snapshot
// keeps reading the file.
func (f Files) DeleteMessage(ctx context.Context, workspace, id string) error {
	return f.Dir.DeleteMessage(ctx, workspace, id)
}

// Stored implements RawMessages. A file's modification time is when it was
// kept (a stored message is never rewritten).
func (f Files) Stored(ctx context.Context, before time.Time, fn func(mailstore.Stored) error) error {
	return f.Dir.Walk(ctx, func(s mailstore.Stored) error {
		if !s.Modified.Before(before) {
			return nil
		}
		return fn(s)
	})
}

// PurgeTx implements RawMessages: the file is deleted after tx commits, so
// a crash in between leaves a file whose record says purged, which the next
// retention run deletes — never a record that names a missing file as kept.
func (f Files) PurgeTx(_ context.Context, _ store.Tx, workspace, id string) (func(context.Context) error, error) {
	return func(ctx context.Context) error { return f.Dir.Delete(ctx, workspace, id) }, nil
}

// LargeObjects are raw messages kept as PostgreSQL large objects
// (mailstore.LargeObjects), which every replica reads.
type LargeObjects struct{ Objects *mailstore.LargeObjects }

// OpenMessage implements inbox.Messages: each read fetches its range, in
// one snapshot (which holds a pooled connection until closed).
func (l LargeObjects) OpenMessage(ctx context.Context, workspace, id string) (inbox.Message, error) {
	return l.Objects.OpenMessage(ctx, workspace, id)
}

// DeleteMessage implements inbox.Messages (emails_delete): the object and
// its row, in a transaction of their own.
func (l LargeObjects) DeleteMessage(ctx context.Context, workspace, id string) error {
	return l.Objects.DeleteMessage(ctx, workspace, id)
}

// Stored implements RawMessages.
func (l LargeObjects) Stored(ctx context.Context, before time.Time, fn func(mailstore.Stored) error) error {
	return l.Objects.ListStored(ctx, before, fn)
}

// PurgeTx implements RawMessages: the object and its row are deleted in tx,
// a store/pg transaction, with the e-mail's record.
func (l LargeObjects) PurgeTx(ctx context.Context, tx store.Tx, workspace, id string) (func(context.Context) error, error) {
	ptx, ok := tx.(interface{ PgxTx() pgx.Tx })
	if !ok {
		return nil, fmt.Errorf("pipeline: large objects are purged in a PostgreSQL transaction, not %T", tx)
	}
	return nil, l.Objects.DeleteTx(ctx, ptx.PgxTx(), workspace, id)
}

// WithBlobs serves, besides raw, the messages kept whole in a store's blobs
// (the demo's seeded e-mails): a message raw does not have is looked up
// there, and deleting deletes from both. Listing and purging are raw's
// alone.
func WithBlobs(raw RawMessages, blobs store.Blobs) RawMessages {
	return withBlobs{RawMessages: raw, blobs: inbox.BlobMessages{Blobs: blobs}}
}

type withBlobs struct {
	RawMessages
	blobs inbox.BlobMessages
}

func (w withBlobs) OpenMessage(ctx context.Context, workspace, id string) (inbox.Message, error) {
	m, err := w.RawMessages.OpenMessage(ctx, workspace, id)
	if errors.Is(err, inbox.ErrPurged) {
		return w.blobs.OpenMessage(ctx, workspace, id)
	}
	return m, err
}

func (w withBlobs) DeleteMessage(ctx context.Context, workspace, id string) error {
	if err := w.RawMessages.DeleteMessage(ctx, workspace, id); err != nil {
		return err
	}
	return w.blobs.DeleteMessage(ctx, workspace, id)
}
