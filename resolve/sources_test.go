package resolve_test

import (
	"bytes"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r    io.ReaderAt
	read atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.read.Add(int64(n))
	return n, err
}

// TestEMLIndexed: a stored message with its arrival index lists the same
// attachments as the file, reads nothing until an attachment is opened,
// then only about that attachment's bytes.
func TestEMLIndexed(t *testing.T) {
	t.Parallel()
	const path = "../examples/emails/acme-invoice.eml"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := eml.ReadIndex(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	file, err := resolve.EMLFile(path)()
	if err != nil {
		t.Fatal(err)
	}
	defer file.(io.Closer).Close()
	cr := &countingReader{r: bytes.NewReader(raw)}
	stored, err := resolve.EMLIndexed(cr, int64(len(raw)), ix)()
	if err != nil {
		t.Fatal(err)
	}
	if n := cr.read.Load(); n != 0 {
		t.Fatalf("EMLIndexed read %d bytes before any attachment was opened", n)
	}
	if file.Len() != stored.Len() || stored.Len() < 2 {
		t.Fatalf("EMLIndexed lists %d attachments, EMLFile %d (want the sample's two)", stored.Len(), file.Len())
	}
	for i := range file.Len() {
		a, _ := file.Attachment(i)
		b, err := stored.Attachment(i)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(a, b, cmpopts.IgnoreFields(eml.Attachment{}, "SHA256")); d != "" {
			t.Errorf("attachment %d differs (-EMLFile +EMLIndexed):\n%s", i, d)
		}
	}
	before := cr.read.Load()
	r, err := stored.Open(1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	fr, err := file.Open(1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(fr)
	fr.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("attachment 1: EMLIndexed streams %d bytes that differ from EMLFile's %d", len(got), len(want))
	}
	// Reading the second attachment takes its own encoded bytes, not the
	// whole message's (the PDF before it is skipped).
	if n := cr.read.Load() - before; n >= int64(len(raw))/2 {
		t.Errorf("opening attachment 1 (%d bytes) read %d of the message's %d bytes", len(got), n, len(raw))
	}
}
