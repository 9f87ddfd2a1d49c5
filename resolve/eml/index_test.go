package eml

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIndexRoundTrip: an index made when a message arrives survives JSON,
// and a Message made from it lists the same attachments as one that reads
// the message, streams the same bytes, and reads nothing until then.
func TestIndexRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"nested.eml", "forwarded.eml", "encodings.eml", "filenames.eml"} {
		t.Run(name, func(t *testing.T) {
			data := mustRead(t, name)
			ix, err := ReadIndex(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			saved, err := json.Marshal(ix)
			if err != nil {
				t.Fatal(err)
			}
			var loaded Index
			if err := json.Unmarshal(saved, &loaded); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ix, &loaded); diff != "" {
				t.Fatalf("JSON round trip (-want +got):\n%s", diff)
			}
			counting := &countingAt{r: bytes.NewReader(data)}
			m, err := NewIndexed(counting, int64(len(data)), &loaded)
			if err != nil {
				t.Fatal(err)
			}
			if counting.reads != 0 {
				t.Fatalf("NewIndexed read the message %d times", counting.reads)
			}
			read, err := newBytes(data)
			if err != nil {
				t.Fatal(err)
			}
			want := read.Attachments()
			got := m.Attachments()
			for i := range want {
				want[i].SHA256 = got[i].SHA256
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("attachments (-read +indexed):\n%s", diff)
			}
			for _, a := range got {
				h := sha256.New()
				if _, err := io.Copy(h, mustOpen(t, m, a.Index)); err != nil {
					t.Fatal(err)
				}
				if a.SHA256 == "" || hex.EncodeToString(h.Sum(nil)) != a.SHA256 {
					t.Fatalf("attachment %d: streamed bytes differ from the digest %q", a.Index, a.SHA256)
				}
			}
			if light := read.Index(); light.Digests || light.Parts[0].SHA256 != "" {
				t.Fatal("New's index has digests")
			}
		})
	}
}

type countingAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestBadIndex: an index that cannot describe the message is refused.
func TestBadIndex(t *testing.T) {
	t.Parallel()
	data := mustRead(t, "nested.eml")
	good, err := ReadIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(ix *Index)
	}{
		{"another version", func(ix *Index) { ix.Version = 2 }},
		{"another size", func(ix *Index) { ix.Size++ }},
		{"a part past the end", func(ix *Index) { ix.Parts[1].Length = ix.Size }},
		{"an unknown decoding", func(ix *Index) { ix.Parts[1].Decoding = "x-uuencode" }},
		{"attachments out of order", func(ix *Index) { ix.Parts[len(ix.Parts)-1].Attachment.Index = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := good.clone()
			tc.change(ix)
			if _, err := NewIndexed(bytes.NewReader(data), int64(len(data)), ix); !errors.Is(err, ErrBadIndex) {
				t.Fatalf("NewIndexed: %v, want ErrBadIndex", err)
			}
		})
	}
	if _, err := NewIndexed(bytes.NewReader(data), int64(len(data)), nil); !errors.Is(err, ErrBadIndex) {
		t.Fatalf("NewIndexed without an index: %v", err)
	}
}
