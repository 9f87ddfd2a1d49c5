package eml

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestOpenIndexedMatchesOpen: a file opened with the index stored when it
// arrived lists the same attachments as Open (and the digests the index
// holds, which Open does not compute) and streams the same bytes.
func TestOpenIndexedMatchesOpen(t *testing.T) {
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
			indexed, err := OpenIndexed(path, mustIndex(t, raw))
			if err != nil {
				t.Fatal(err)
			}
			defer indexed.Close()
			if plain.Len() != indexed.Len() {
				t.Fatalf("OpenIndexed lists %d attachments, Open %d", indexed.Len(), plain.Len())
			}
			for i := range plain.Len() {
				a, _ := plain.Attachment(i)
				b, err := indexed.Attachment(i)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(a, b, cmpopts.IgnoreFields(Attachment{}, "SHA256")); d != "" {
					t.Errorf("attachment %d differs (-Open +OpenIndexed):\n%s", i, d)
				}
				got, want := readAll(t, indexed, i), readAll(t, plain, i)
				if got != want {
					t.Errorf("attachment %d: OpenIndexed streams %d bytes that differ from Open's %d", i, len(got), len(want))
				}
				if sum := fmt.Sprintf("%x", sha256.Sum256([]byte(got))); b.SHA256 != sum {
					t.Errorf("attachment %d: the index's digest is %q, the bytes' %q", i, b.SHA256, sum)
				}
			}
		})
	}
}

// TestOpenIndexedErrors: a missing file is unreadable, and an index of
// other bytes is refused; both errors name the path.
func TestOpenIndexedErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "forwarded.eml")
	other, err := os.ReadFile(filepath.Join("testdata", "single-pdf.eml"))
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "gone.eml")
	for _, tc := range []struct {
		path string
		ix   *Index
		want error
	}{
		{missing, mustIndex(t, other), ErrUnreadable},
		{path, mustIndex(t, other), ErrBadIndex},
	} {
		m, err := OpenIndexed(tc.path, tc.ix)
		if err == nil {
			m.Close()
			t.Errorf("OpenIndexed(%s) succeeded, want %v", tc.path, tc.want)
			continue
		}
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("OpenIndexed(%s) = %v, want %v naming the path", tc.path, err, tc.want)
		}
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
