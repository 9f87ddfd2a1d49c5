package mailstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// Store is where the raw messages are kept, as everything that handles
// them uses it: the intake spools and keeps them, the pipeline and the MCP
// product open them (inbox.Messages), retention lists and purges them, and a
// start sweeps what a crash left. Dir (files) and LargeObjects (PostgreSQL)
// are its two implementations; a message is kept either before the records'
// transaction (Prepare: files, made durable before the records that name
// them commit) or inside it (KeepTx: large objects, committed with them).
type Store interface {
	inbox.Messages
	// NewSpool returns a spool for an incoming message (limit: see
	// NewSpool).
	NewSpool(limit int64) (*Spool, error)
	// Prepare runs before the records' transaction: it may store the
	// message durably as (workspace, id), and returns how to undo that if
	// the transaction does not commit (nil: nothing to undo).
	Prepare(ctx context.Context, m *Incoming, workspace, id string) (undo func(context.Context) error, err error)
	// KeepTx runs inside the records' transaction: it may store the message
	// as part of it.
	KeepTx(ctx context.Context, tx store.Tx, m *Incoming, workspace, id string) error
	// Stored calls fn for every message kept before a time.
	Stored(ctx context.Context, before time.Time, fn func(Stored) error) error
	// PurgeTx deletes a stored message as part of tx, or returns the
	// deletion to run once tx has committed (storage outside the database:
	// a crash in between leaves a message whose record says purged, which
	// the next purge deletes, never a record naming a missing message as
	// kept). Deleting a message that is not there is not an error.
	PurgeTx(ctx context.Context, tx store.Tx, workspace, id string) (after func(context.Context) error, err error)
	// Sweep removes what a crash can leave behind, last touched between two
	// times (before: a margin, since a message being received now is kept
	// before its records commit; after bounds the walk to recent leftovers,
	// zero means no bound): spools of receipts that were cut off, and stored
	// messages for which named reports no record (the crash came between
	// keeping the message and committing its records; the sender was never
	// told 250 and retries). It returns how many it removed.
	Sweep(ctx context.Context, named func(ctx context.Context, workspace, id string) (bool, error), after, before time.Time) (int, error)
}

// Stored is one stored message (Store.Stored).
type Stored struct {
	Workspace, ID string
	Size          int64
	// Modified is when the message was kept.
	Modified time.Time
}

// Incoming is a message as it is kept: the trace fields the receiving
// server prepends (Return-Path, Received, Authentication-Results), then the
// message byte for byte as it arrived. It reads as one message (ReadAt,
// Size), which is what the stores write and what the part index describes.
type Incoming struct {
	// Trace is the header fields prepended, each line ending as the
	// message's lines do; nil for none.
	Trace []byte
	// Body is the message as received.
	Body *Spool
	// kept is the file Dir wrote it to first: another name for the same
	// message (a message for several inboxes) is a link to it.
	kept string
}

// Size is the length of the kept message.
func (m *Incoming) Size() int64 { return int64(len(m.Trace)) + m.Body.Size() }

// ReadAt reads the kept message: the trace fields, then the body.
func (m *Incoming) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("mailstore: negative offset %d", off)
	}
	n := 0
	if off < int64(len(m.Trace)) {
		n = copy(p, m.Trace[off:])
		if n == len(p) {
			return n, nil
		}
		off += int64(n)
	}
	k, err := m.Body.ReadAt(p[n:], off-int64(len(m.Trace)))
	return n + k, err
}

// writeTo writes the kept message to w.
func (m *Incoming) writeTo(w io.Writer) error {
	if len(m.Trace) > 0 {
		if _, err := w.Write(m.Trace); err != nil {
			return err
		}
	}
	return m.Body.copyTo(w)
}

// WithBlobs serves, besides s, the messages kept whole in a store's blobs
// (the demo's seeded e-mails): a message s does not have is looked up
// there, and deleting deletes from both. Everything else is s's alone.
func WithBlobs(s Store, blobs store.Blobs) Store {
	return withBlobs{Store: s, blobs: inbox.BlobMessages{Blobs: blobs}}
}

type withBlobs struct {
	Store
	blobs inbox.BlobMessages
}

func (w withBlobs) OpenMessage(ctx context.Context, workspace, id string) (inbox.Message, error) {
	m, err := w.Store.OpenMessage(ctx, workspace, id)
	if errors.Is(err, inbox.ErrPurged) {
		return w.blobs.OpenMessage(ctx, workspace, id)
	}
	return m, err
}

func (w withBlobs) DeleteMessage(ctx context.Context, workspace, id string) error {
	if err := w.Store.DeleteMessage(ctx, workspace, id); err != nil {
		return err
	}
	return w.blobs.DeleteMessage(ctx, workspace, id)
}

// sweepSpools removes the spool files in dir last written before a time.
func sweepSpools(dir string, before time.Time) (int, error) {
	return removeOld(dir, "incoming-", before)
}
