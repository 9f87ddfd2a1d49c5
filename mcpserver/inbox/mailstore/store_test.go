package mailstore_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// stores are the two implementations of mailstore.Store over the database
// each goes with: files beside SQLite, large objects in PostgreSQL (skipped
// without KOBANA_TEST_POSTGRES).
func stores(t *testing.T) map[string]func(t *testing.T) (mailstore.Store, store.Transactor) {
	return map[string]func(t *testing.T) (mailstore.Store, store.Transactor){
		"files": func(t *testing.T) (mailstore.Store, store.Transactor) {
			root := t.TempDir()
			st, err := sqlite.Open(context.Background(), filepath.Join(root, "kobana.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			d, err := mailstore.OpenDir(root)
			if err != nil {
				t.Fatal(err)
			}
			return d, st
		},
		"large objects": func(t *testing.T) (mailstore.Store, store.Transactor) {
			ctx := context.Background()
			dsn, _ := pgtest.SchemaDSN(t, "mailstore", "kobana-mailstore-test")
			st, err := pg.Open(ctx, dsn, pg.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				st.PgxPool().Exec(ctx, "SELECT lo_unlink(object) FROM inbox_messages")
				st.Close()
			})
			lo := mailstore.NewLargeObjects(st.PgxPool(), t.TempDir())
			if err := lo.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			return lo, st
		},
	}
}

// keep stores in as (workspace, id) the way the intake does: Prepare
// before the records' transaction, KeepTx inside it, undo when it fails.
func keep(ctx context.Context, s mailstore.Store, tx store.Transactor, in *mailstore.Incoming, workspace, id string, fail error) error {
	undo, err := s.Prepare(ctx, in, workspace, id)
	if err != nil {
		return err
	}
	err = tx.WithTx(ctx, func(tx store.Tx) error {
		if err := s.KeepTx(ctx, tx, in, workspace, id); err != nil {
			return err
		}
		return fail
	})
	if err != nil && undo != nil {
		undo(ctx)
	}
	return err
}

// Every operation of the interface, the same way on both implementations.
func TestStoreImplementations(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, db := open(t)
			body := message(200_000)
			sp := spoolOf(t, s.NewSpool, body)
			in := &mailstore.Incoming{Trace: []byte("Received: by mx.test; Tue, 1 Dec 2026 10:00:00 +0000\r\n"), Body: sp}
			want := append(append([]byte{}, in.Trace...), body...)

			failed := errors.New("the records did not commit")
			if err := keep(ctx, s, db, in, "ws", "e0", failed); !errors.Is(err, failed) {
				t.Fatalf("keep with a failing transaction: %v", err)
			}
			if _, err := s.OpenMessage(ctx, "ws", "e0"); !errors.Is(err, inbox.ErrPurged) {
				t.Fatalf("a message whose records did not commit: %v, want it gone", err)
			}
			// One message for two e-mails.
			for _, id := range []string{"e1", "e2"} {
				if err := keep(ctx, s, db, in, "ws", id, nil); err != nil {
					t.Fatal(err)
				}
			}
			sp.Remove()
			if err := keep(ctx, s, db, incoming(t, s.NewSpool, []byte("other")), "ws", "e1", nil); err == nil {
				t.Fatal("a second message under a kept name was stored")
			}
			for _, id := range []string{"e1", "e2"} {
				m, err := s.OpenMessage(ctx, "ws", id)
				if err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, m, 50_000); !bytes.Equal(got, want) {
					t.Fatalf("%s reads %d bytes, differing from trace and message (%d)", id, len(got), len(want))
				}
				m.Close()
			}
			var listed []string
			if err := s.Stored(ctx, time.Now().Add(time.Minute), func(st mailstore.Stored) error {
				listed = append(listed, st.ID)
				if st.Size != int64(len(want)) {
					t.Errorf("Stored lists %s with %d bytes, want %d", st.ID, st.Size, len(want))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(listed) != 2 {
				t.Fatalf("Stored lists %v, want e1 and e2", listed)
			}
			err := db.WithTx(ctx, func(tx store.Tx) error {
				after, err := s.PurgeTx(ctx, tx, "ws", "e1")
				if after != nil {
					defer func() { err = after(ctx) }()
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.OpenMessage(ctx, "ws", "e1"); !errors.Is(err, mailstore.ErrNotFound) {
				t.Fatalf("after PurgeTx: %v, want ErrNotFound", err)
			}
			// Nothing names e2: Sweep takes it for a crash's leftover (files)
			// or has nothing to do (large objects commit with their records).
			named := func(_ context.Context, _, id string) (bool, error) { return id != "e2", nil }
			if _, err := s.Sweep(ctx, named, time.Time{}, time.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			m, err := s.OpenMessage(ctx, "ws", "e2")
			if err == nil {
				m.Close()
			}
			if _, files := s.(*mailstore.Dir); files != errors.Is(err, mailstore.ErrNotFound) {
				t.Fatalf("after Sweep, e2: %v", err)
			}
		})
	}
}

// A spool that moved to a file is swept once stale, by either store.
func TestStoresSweepStaleSpools(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s, _ := open(t)
			spoolOf(t, s.NewSpool, message(mailstore.SpoolMemoryBytes+1))
			named := func(context.Context, string, string) (bool, error) { return true, nil }
			n, err := s.Sweep(context.Background(), named, time.Time{}, time.Now().Add(-time.Hour))
			if err != nil || n != 0 {
				t.Fatalf("Sweep of fresh spools: %d, %v; want none removed", n, err)
			}
			later := time.Now().Add(2 * time.Hour)
			n, err = s.Sweep(context.Background(), named, time.Time{}, later)
			if err != nil || n != 1 {
				t.Fatalf("Sweep of a stale spool: %d, %v; want 1 removed", n, err)
			}
		})
	}
}

// WithBlobs serves the store's messages and, after them, the blobs of
// records seeded whole (the demo's); deleting deletes from both.
func TestWithBlobsFallsBackToBlobs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(root, "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, _ := mailstore.OpenDir(root)
	kept := []byte("Subject: kept\r\n\r\nhello")
	if err := d.Keep(ctx, incoming(t, d.NewSpool, kept), "ws", "eml_kept"); err != nil {
		t.Fatal(err)
	}
	seeded := []byte("Subject: seeded\r\n\r\nhello")
	if err := st.PutBlob(ctx, "ws", "eml_seeded", seeded); err != nil {
		t.Fatal(err)
	}
	raw := mailstore.WithBlobs(d, st)
	for id, want := range map[string][]byte{"eml_kept": kept, "eml_seeded": seeded} {
		m, err := raw.OpenMessage(ctx, "ws", id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got := readAll(t, m, 7); !bytes.Equal(got, want) {
			t.Errorf("%s: read %q, want %q", id, got, want)
		}
		m.Close()
	}
	for _, id := range []string{"eml_kept", "eml_seeded", "eml_never"} {
		if err := raw.DeleteMessage(ctx, "ws", id); err != nil {
			t.Fatalf("deleting %s: %v", id, err)
		}
		if _, err := raw.OpenMessage(ctx, "ws", id); !errors.Is(err, inbox.ErrPurged) {
			t.Errorf("%s after deleting: %v, want ErrPurged", id, err)
		}
	}
}
