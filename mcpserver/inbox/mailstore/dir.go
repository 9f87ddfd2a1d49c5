package mailstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// Dir stores raw messages as files under a directory:
// ROOT/messages/WORKSPACE/ID.eml, with the spools of large incoming
// messages in ROOT/spool (the same file system, so the kernel copies a
// spool into its message file without the bytes passing through the
// process).
type Dir struct {
	root string
}

// OpenDir prepares the directory layout under root (creating it if needed).
func OpenDir(root string) (*Dir, error) {
	if root == "" {
		return nil, errors.New("mailstore: empty data directory")
	}
	for _, d := range []string{root, filepath.Join(root, "messages"), filepath.Join(root, "spool")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("mailstore: creating %s: %w", d, err)
		}
	}
	return &Dir{root: root}, nil
}

// NewSpool creates a spool in the directory's spool area.
func (d *Dir) NewSpool(limit int64) (*Spool, error) {
	return NewSpool(filepath.Join(d.root, "spool"), limit)
}

// path returns the file of a stored message.
func (d *Dir) path(workspace, id string) (string, error) {
	if err := checkName("workspace", workspace); err != nil {
		return "", err
	}
	if err := checkName("message id", id); err != nil {
		return "", err
	}
	return filepath.Join(d.root, "messages", workspace, id+".eml"), nil
}

// Keep makes a message durable as (workspace, id): the file is created
// under its name, written (the trace fields, then the message) and synced
// together with the directory that names it, so once Keep returns the
// message survives a crash. A crash during Keep can leave a partly written
// file; nothing refers to it yet (its records commit after Keep), and Sweep
// removes such files. A message can be kept under several names (one
// message for several inboxes): the later names are links to the first
// file. An existing message with the same name is an error: stored messages
// are never rewritten.
func (d *Dir) Keep(ctx context.Context, m *Incoming, workspace, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dst, err := d.path(workspace, id)
	if err != nil {
		return err
	}
	wsDir := filepath.Dir(dst)
	if _, err := os.Stat(wsDir); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(wsDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("mailstore: creating %s: %w", wsDir, err)
		}
		if err := syncDir(filepath.Dir(wsDir)); err != nil {
			return err
		}
	}
	if m.kept != "" {
		// Link, not copy: the names share the file, already synced.
		if err := os.Link(m.kept, dst); err != nil {
			return keepError(workspace, id, err)
		}
		if err := syncDir(wsDir); err != nil {
			os.Remove(dst)
			return err
		}
		return nil
	}
	// O_EXCL: a message is never replaced.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return keepError(workspace, id, err)
	}
	// The directory's flush runs beside the file's, so a journaling file
	// system commits both at once instead of one after the other.
	dirSynced := make(chan error, 1)
	err = m.writeTo(f)
	if err == nil {
		go func() { dirSynced <- syncDir(wsDir) }()
		err = syncData(f)
		if derr := <-dirSynced; err == nil {
			err = derr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return fmt.Errorf("mailstore: storing %s/%s: %w", workspace, id, err)
	}
	m.kept = dst
	return nil
}

// keepError says why a name could not be created.
func keepError(workspace, id string, err error) error {
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("mailstore: message %s/%s already stored", workspace, id)
	}
	return fmt.Errorf("mailstore: storing %s/%s: %w", workspace, id, err)
}

// Prepare implements Store: the message is kept durably before the
// records' transaction, and deleted again if that does not commit.
func (d *Dir) Prepare(ctx context.Context, m *Incoming, workspace, id string) (func(context.Context) error, error) {
	if err := d.Keep(ctx, m, workspace, id); err != nil {
		return nil, err
	}
	kept := m.kept
	return func(ctx context.Context) error {
		if m.kept == kept {
			m.kept = "" // another name would link to a deleted file
		}
		return d.Delete(ctx, workspace, id)
	}, nil
}

// KeepTx implements Store: the file is already durable.
func (*Dir) KeepTx(context.Context, store.Tx, *Incoming, string, string) error { return nil }

// Stored implements Store. A file's modification time is when it was kept
// (a stored message is never rewritten).
func (d *Dir) Stored(ctx context.Context, before time.Time, fn func(Stored) error) error {
	return d.Walk(ctx, func(s Stored) error {
		if !s.Modified.Before(before) {
			return nil
		}
		return fn(s)
	})
}

// PurgeTx implements Store: the file is deleted after tx commits.
func (d *Dir) PurgeTx(_ context.Context, _ store.Tx, workspace, id string) (func(context.Context) error, error) {
	return func(ctx context.Context) error { return d.Delete(ctx, workspace, id) }, nil
}

// Sweep implements Store: spool files of cut-off receipts, and message
// files no record names.
func (d *Dir) Sweep(ctx context.Context, named func(ctx context.Context, workspace, id string) (bool, error), after, before time.Time) (int, error) {
	n, err := d.SweepSpool(before)
	if err != nil {
		return n, err
	}
	var orphans []Stored
	err = d.Walk(ctx, func(s Stored) error {
		if !s.Modified.Before(before) || s.Modified.Before(after) {
			return nil
		}
		ok, err := named(ctx, s.Workspace, s.ID)
		if err != nil {
			return err
		}
		if !ok {
			orphans = append(orphans, s)
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("mailstore: looking for orphan messages: %w", err)
	}
	for _, s := range orphans {
		if err := d.Delete(ctx, s.Workspace, s.ID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Open returns a snapshot of a stored message. The snapshot stays readable
// even if the message is deleted meanwhile (the open file keeps its bytes).
func (d *Dir) Open(ctx context.Context, workspace, id string) (Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := d.path(workspace, id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, gone(workspace + "/" + id)
	}
	if err != nil {
		return nil, fmt.Errorf("mailstore: opening message %s/%s: %w", workspace, id, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mailstore: reading message %s/%s: %w", workspace, id, err)
	}
	return &fileMessage{f: f, size: st.Size()}, nil
}

// OpenMessage implements inbox.Messages: the raw message of an e-mail.
func (d *Dir) OpenMessage(ctx context.Context, workspace, emailID string) (inbox.Message, error) {
	return d.Open(ctx, workspace, emailID)
}

// DeleteMessage implements inbox.Messages (Delete).
func (d *Dir) DeleteMessage(ctx context.Context, workspace, emailID string) error {
	return d.Delete(ctx, workspace, emailID)
}

// Delete removes a stored message (retention purge, or undoing a Keep whose
// records did not commit). Deleting a message that is not there is not an
// error.
func (d *Dir) Delete(ctx context.Context, workspace, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := d.path(workspace, id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("mailstore: deleting message %s/%s: %w", workspace, id, err)
	}
	return syncDir(filepath.Dir(p))
}

// Walk calls fn for every stored message (in no particular order), for
// finding messages no record refers to after a crash between Keep and the
// commit of their records.
func (d *Dir) Walk(ctx context.Context, fn func(Stored) error) error {
	base := filepath.Join(d.root, "messages")
	return filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".eml") {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		return fn(Stored{Workspace: filepath.Base(filepath.Dir(p)), ID: strings.TrimSuffix(e.Name(), ".eml"), Size: info.Size(), Modified: info.ModTime()})
	})
}

// SweepSpool removes spool files last written before the given time: the
// remains of messages whose receipt was cut off (a crash, a dropped
// connection). Their senders were never told 250 and retry. It returns how
// many it removed.
func (d *Dir) SweepSpool(before time.Time) (int, error) {
	return sweepSpools(filepath.Join(d.root, "spool"), before)
}

// removeOld removes the files of dir whose name starts with prefix, last
// written before a time.
func removeOld(dir, prefix string, before time.Time) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // no spool has needed a file yet
	}
	if err != nil {
		return 0, fmt.Errorf("mailstore: reading %s: %w", dir, err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(before) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}

// syncDir makes a directory's entries (a new or removed name) durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("mailstore: opening directory %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("mailstore: syncing directory %s: %w", dir, err)
	}
	return nil
}

// fileMessage is a stored message read from its open file.
type fileMessage struct {
	f    *os.File
	size int64
}

func (m *fileMessage) ReadAt(p []byte, off int64) (int, error) { return m.f.ReadAt(p, off) }
func (m *fileMessage) Size() int64                             { return m.size }
func (m *fileMessage) Close() error                            { return m.f.Close() }
