package mailstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
)

// spoolOf writes content into a new spool of s.
func spoolOf(t *testing.T, newSpool func(int64) (*mailstore.Spool, error), content []byte) *mailstore.Spool {
	t.Helper()
	sp, err := newSpool(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Remove() })
	if _, err := sp.ReadFrom(bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	return sp
}

// incoming is content in a new spool of s, kept without trace fields.
func incoming(t *testing.T, newSpool func(int64) (*mailstore.Spool, error), content []byte) *mailstore.Incoming {
	t.Helper()
	return &mailstore.Incoming{Body: spoolOf(t, newSpool, content)}
}

// readAll reads a message through ReadAt in chunks of n bytes.
func readAll(t *testing.T, m io.ReaderAt, n int) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, n)
	for off := int64(0); ; {
		k, err := m.ReadAt(buf, off)
		out = append(out, buf[:k]...)
		off += int64(k)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("ReadAt(%d): %v", off, err)
		}
	}
}

func message(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

func TestDirKeepOpenDelete(t *testing.T) {
	ctx := context.Background()
	d, err := mailstore.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	content := message(300_001)
	sp := spoolOf(t, d.NewSpool, content)
	if got, err := sp.SHA256(); err != nil || got != sha256.Sum256(content) {
		t.Fatalf("spool digest %x (%v), want %x", got, err, sha256.Sum256(content))
	}
	if err := d.Keep(ctx, &mailstore.Incoming{Body: sp}, "ws_1", "eml_1"); err != nil {
		t.Fatal(err)
	}
	if err := sp.Remove(); err != nil {
		t.Fatalf("Remove after Keep: %v", err)
	}
	m, err := d.Open(ctx, "ws_1", "eml_1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Size() != int64(len(content)) {
		t.Fatalf("Size = %d, want %d", m.Size(), len(content))
	}
	if got := readAll(t, m, 7919); !bytes.Equal(got, content) {
		t.Fatalf("read back %d bytes, differing from the %d stored", len(got), len(content))
	}
	// A range in the middle.
	mid := make([]byte, 100)
	if _, err := m.ReadAt(mid, 150_000); err != nil || !bytes.Equal(mid, content[150_000:150_100]) {
		t.Fatalf("ranged read: %v", err)
	}
	// Purging while a reader holds the snapshot: the reader keeps its bytes,
	// a new Open finds nothing.
	if err := d.Delete(ctx, "ws_1", "eml_1"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m, 65536); !bytes.Equal(got, content) {
		t.Fatal("an open snapshot changed after Delete")
	}
	m.Close()
	if _, err := d.Open(ctx, "ws_1", "eml_1"); !errors.Is(err, mailstore.ErrNotFound) {
		t.Fatalf("Open after Delete: %v, want ErrNotFound", err)
	}
	if err := d.Delete(ctx, "ws_1", "eml_1"); err != nil {
		t.Fatalf("second Delete: %v, want nil", err)
	}
}

func TestDirKeepLeavesNoSpoolAndNeverReplaces(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, _ := mailstore.OpenDir(root)
	first := incoming(t, d.NewSpool, []byte("first"))
	if err := d.Keep(ctx, first, "ws", "e1"); err != nil {
		t.Fatal(err)
	}
	// One message for two inboxes: kept under a second name too.
	if err := d.Keep(ctx, first, "ws2", "e9"); err != nil {
		t.Fatal(err)
	}
	first.Body.Remove()
	if entries, _ := os.ReadDir(filepath.Join(root, "spool")); len(entries) != 0 {
		t.Fatalf("spool area after Keep and Remove holds %d files, want none", len(entries))
	}
	m2, err := d.Open(ctx, "ws2", "e9")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m2, 64); string(got) != "first" {
		t.Fatalf("second name holds %q", got)
	}
	m2.Close()
	err = d.Keep(ctx, incoming(t, d.NewSpool, []byte("second")), "ws", "e1")
	if err == nil || !strings.Contains(err.Error(), "already stored") {
		t.Fatalf("second Keep under the same name: %v, want already stored", err)
	}
	m, err := d.Open(ctx, "ws", "e1")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := readAll(t, m, 64); string(got) != "first" {
		t.Fatalf("stored message = %q, want the first", got)
	}
}

func TestDirRejectsNamesOutsideTheAlphabet(t *testing.T) {
	ctx := context.Background()
	d, _ := mailstore.OpenDir(t.TempDir())
	for _, bad := range [][2]string{{"", "x"}, {"ws", ""}, {"..", "x"}, {"ws", "../../etc/passwd"}, {"ws/x", "y"}, {"ws", "a.b"}, {"ws", strings.Repeat("a", 129)}} {
		_, err := d.Open(ctx, bad[0], bad[1])
		var ne *mailstore.NameError
		if !errors.As(err, &ne) {
			t.Errorf("Open(%q, %q) = %v, want *NameError", bad[0], bad[1], err)
		}
	}
}

func TestSpoolLimit(t *testing.T) {
	for _, size := range []int64{10, mailstore.SpoolMemoryBytes + 10} {
		sp, err := mailstore.NewSpool(t.TempDir(), size)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sp.ReadFrom(bytes.NewReader(message(int(size)))); err != nil {
			t.Fatalf("reading up to the limit of %d: %v", size, err)
		}
		if _, err := sp.Write([]byte("x")); !errors.Is(err, mailstore.ErrTooLarge) {
			t.Fatalf("writing past the limit of %d: %v, want ErrTooLarge", size, err)
		}
		if sp.Size() != size {
			t.Fatalf("Size = %d after a refused write, want %d", sp.Size(), size)
		}
		if got, want := sp.InMemory(), size <= mailstore.SpoolMemoryBytes; got != want {
			t.Errorf("a spool of %d bytes: in memory %v, want %v", size, got, want)
		}
		if err := sp.Remove(); err != nil {
			t.Fatal(err)
		}
		sp2, _ := mailstore.NewSpool(t.TempDir(), size)
		if _, err := sp2.ReadFrom(bytes.NewReader(message(int(size) + 1))); !errors.Is(err, mailstore.ErrTooLarge) {
			t.Fatalf("reading one byte past the limit of %d: %v, want ErrTooLarge", size, err)
		}
		sp2.Remove()
	}
}

// A spool past SpoolMemoryBytes moves to a file in its directory, which
// Remove deletes; smaller ones never touch the disk.
func TestSpoolMovesToAFileWhenLarge(t *testing.T) {
	dir := t.TempDir()
	small, _ := mailstore.NewSpool(dir, 0)
	small.Write(message(1000))
	big, _ := mailstore.NewSpool(dir, 0)
	content := message(mailstore.SpoolMemoryBytes + 12345)
	if _, err := big.ReadFrom(bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || big.InMemory() || !small.InMemory() {
		t.Fatalf("spool directory holds %d files (big in memory %v, small %v); want the big spool's one file", len(entries), big.InMemory(), small.InMemory())
	}
	got := make([]byte, len(content))
	if n, err := big.ReadAt(got, 0); n != len(content) || !bytes.Equal(got, content) {
		t.Fatalf("read back %d bytes (%v), differing from the %d written", n, err, len(content))
	}
	big.Remove()
	small.Remove()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("%d spool files left after Remove", len(entries))
	}
}

func TestDirSweepSpoolAndWalk(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, _ := mailstore.OpenDir(root)
	spoolDir := filepath.Join(root, "spool")
	stale, _ := d.NewSpool(0)
	stale.ReadFrom(bytes.NewReader(message(mailstore.SpoolMemoryBytes + 1)))
	staleFile := onlyFile(t, spoolDir)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(staleFile, old, old)
	fresh, _ := d.NewSpool(0)
	defer fresh.Remove()
	fresh.ReadFrom(bytes.NewReader(message(mailstore.SpoolMemoryBytes + 1)))
	n, err := d.SweepSpool(time.Now().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("SweepSpool = %d, %v; want 1 removed", n, err)
	}
	if _, err := os.Stat(staleFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the stale spool survived the sweep")
	}
	if entries, _ := os.ReadDir(spoolDir); len(entries) != 1 {
		t.Fatal("the fresh spool was swept")
	}
	d.Keep(ctx, incoming(t, d.NewSpool, []byte("a")), "ws1", "e1")
	d.Keep(ctx, incoming(t, d.NewSpool, []byte("bb")), "ws2", "e2")
	got := map[string]int64{}
	if err := d.Walk(ctx, func(s mailstore.Stored) error { got[s.Workspace+"/"+s.ID] = s.Size; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["ws1/e1"] != 1 || got["ws2/e2"] != 2 {
		t.Fatalf("Walk found %v", got)
	}
}

// onlyFile is the path of the one file in dir.
func onlyFile(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s holds %d entries (%v), want one", dir, len(entries), err)
	}
	return filepath.Join(dir, entries[0].Name())
}

// The trace fields are stored before the message, and what is stored reads
// back as one message: the trace, then the bytes as received.
func TestDirKeepsTheTraceFieldsFirst(t *testing.T) {
	ctx := context.Background()
	d, _ := mailstore.OpenDir(t.TempDir())
	for _, size := range []int{300, mailstore.SpoolMemoryBytes + 300} {
		body := message(size)
		in := &mailstore.Incoming{Trace: []byte("Return-Path: <a@b.test>\r\n"), Body: spoolOf(t, d.NewSpool, body)}
		want := append(append([]byte{}, in.Trace...), body...)
		if in.Size() != int64(len(want)) {
			t.Fatalf("Size = %d, want %d", in.Size(), len(want))
		}
		if got := readAll(t, in, 4093); !bytes.Equal(got, want) {
			t.Fatalf("Incoming reads %d bytes differing from trace + body", len(got))
		}
		id := fmt.Sprintf("e%d", size)
		if err := d.Keep(ctx, in, "ws", id); err != nil {
			t.Fatal(err)
		}
		m, err := d.Open(ctx, "ws", id)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, m, 65536); !bytes.Equal(got, want) {
			t.Fatalf("stored %d bytes, differing from trace + body (%d)", len(got), len(want))
		}
		m.Close()
	}
}

// The stores are the domain's Messages; a missing message is inbox.ErrPurged.
var (
	_ inbox.Messages  = (*mailstore.Dir)(nil)
	_ inbox.Messages  = (*mailstore.LargeObjects)(nil)
	_ mailstore.Store = (*mailstore.Dir)(nil)
	_ mailstore.Store = (*mailstore.LargeObjects)(nil)
)

func TestOpenMessageOfAPurgedMessage(t *testing.T) {
	d, _ := mailstore.OpenDir(t.TempDir())
	_, err := d.OpenMessage(context.Background(), "ws", "eml_gone")
	if !errors.Is(err, inbox.ErrPurged) || !errors.Is(err, mailstore.ErrNotFound) {
		t.Fatalf("OpenMessage of a missing message: %v, want inbox.ErrPurged and mailstore.ErrNotFound", err)
	}
}
