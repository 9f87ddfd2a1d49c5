package inbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kobana/workflow/mcpserver/store"
)

// Message is one consistent snapshot of an e-mail's stored raw message (the
// .eml): every read sees the same bytes, for as long as it is open, even if
// the stored message is purged or replaced meanwhile. Reads may happen at
// any offset and from several goroutines at once (io.ReaderAt's contract),
// so a run can stream one attachment while it measures another without
// holding the message in memory. Close releases it.
type Message interface {
	io.ReaderAt
	// Size is the message's length in bytes.
	Size() int64
	Close() error
}

// Messages opens and deletes stored raw messages.
type Messages interface {
	// OpenMessage opens a snapshot of an e-mail's raw message. An error
	// matching ErrPurged says the message is no longer stored (retention,
	// or the e-mail was deleted); any other error is a storage failure
	// worth retrying.
	OpenMessage(ctx context.Context, workspace, emailID string) (Message, error)
	// DeleteMessage deletes an e-mail's raw message (emails_delete,
	// retention); snapshots already open keep reading it. Deleting a message
	// that is not stored is not an error.
	DeleteMessage(ctx context.Context, workspace, emailID string) error
}

// ErrPurged reports that an e-mail's raw message is no longer stored.
var ErrPurged = errors.New("the raw message is no longer stored")

// MessageReader returns a reader of a whole message from its first byte;
// each call starts again, independent of the others.
func MessageReader(m Message) io.Reader { return io.NewSectionReader(m, 0, m.Size()) }

// BlobMessages are messages kept whole in a store's blobs (store.Blobs), as
// `kobana serve` keeps them today: a snapshot is the blob read into memory
// when opened. Stores that keep messages as files or large objects provide
// their own Messages that stream.
type BlobMessages struct {
	Blobs store.Blobs
}

// OpenMessage implements Messages.
func (b BlobMessages) OpenMessage(ctx context.Context, workspace, emailID string) (Message, error) {
	raw, err := b.Blobs.GetBlob(ctx, workspace, emailID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("e-mail %s: %w", emailID, ErrPurged)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the raw message of e-mail %s: %w", emailID, err)
	}
	return BytesMessage(raw), nil
}

// DeleteMessage implements Messages.
func (b BlobMessages) DeleteMessage(ctx context.Context, workspace, emailID string) error {
	if err := b.Blobs.DeleteBlob(ctx, workspace, emailID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("deleting the raw message of e-mail %s: %w", emailID, err)
	}
	return nil
}

// BytesMessage is a Message over bytes held in memory.
func BytesMessage(raw []byte) Message { return bytesMessage{bytes.NewReader(raw)} }

type bytesMessage struct{ *bytes.Reader }

func (bytesMessage) Close() error { return nil }
