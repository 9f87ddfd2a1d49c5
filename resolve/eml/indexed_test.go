package eml

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestNewIndexedMatchesOpen: a stored message read with the index made when
// it arrived lists the same attachments as Open (and the digests the index
// holds, which Open does not compute) and streams the same bytes.
func TestNewIndexedMatchesOpen(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"forwarded.eml", "encodings.eml", "no-attachments.eml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", name)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			indexed, err := NewIndexed(bytes.NewReader(raw), int64(len(raw)), mustIndex(t, raw))
			if err != nil {
				t.Fatal(err)
			}
			if plain.Len() != indexed.Len() {
				t.Fatalf("NewIndexed lists %d attachments, Open %d", indexed.Len(), plain.Len())
			}
			for i := range plain.Len() {
				a, _ := plain.Attachment(i)
				b, err := indexed.Attachment(i)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(a, b, cmpopts.IgnoreFields(Attachment{}, "SHA256")); d != "" {
					t.Errorf("attachment %d differs (-Open +NewIndexed):\n%s", i, d)
				}
				got, want := readAll(t, indexed, i), readAll(t, plain, i)
				if got != want {
					t.Errorf("attachment %d: NewIndexed streams %d bytes that differ from Open's %d", i, len(got), len(want))
				}
				if sum := fmt.Sprintf("%x", sha256.Sum256([]byte(got))); b.SHA256 != sum {
					t.Errorf("attachment %d: the index's digest is %q, the bytes' %q", i, b.SHA256, sum)
				}
			}
		})
	}
}

// TestNewIndexedRefusesAnIndexOfOtherBytes: an index of another message
// is ErrBadIndex (resolve.EMLIndexed then reads the message's structure).
func TestNewIndexedRefusesAnIndexOfOtherBytes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "forwarded.eml"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join("testdata", "single-pdf.eml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewIndexed(bytes.NewReader(raw), int64(len(raw)), mustIndex(t, other)); !errors.Is(err, ErrBadIndex) {
		t.Fatalf("NewIndexed with another message's index: %v, want ErrBadIndex", err)
	}
}

func readAll(t *testing.T, m *Message, i int) string {
	t.Helper()
	r, err := m.Open(i)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
