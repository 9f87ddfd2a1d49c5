package minipdf

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// Each cross-reference entry points at its object's first byte, and
// startxref at the table.
func TestWriteCrossReferences(t *testing.T) {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>", "<< /Title (x) >>"}
	b := Write("%PDF-1.4\n", objs, " /Info 3 0 R")
	if !bytes.HasPrefix(b, []byte("%PDF-1.4\n1 0 obj\n")) || !bytes.HasSuffix(b, []byte("%%EOF\n")) {
		t.Fatalf("not a PDF:\n%s", b)
	}
	if !bytes.Contains(b, []byte("<< /Size 4 /Root 1 0 R /Info 3 0 R >>")) {
		t.Errorf("trailer:\n%s", b)
	}
	entries := regexp.MustCompile(`(?m)^(\d{10}) 00000 n $`).FindAllSubmatch(b, -1)
	if len(entries) != len(objs) {
		t.Fatalf("%d entries for %d objects", len(entries), len(objs))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(b[off:], []byte(want)) {
			t.Errorf("entry %d points at %q", i+1, b[off:min(off+12, len(b))])
		}
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n`).FindSubmatch(b)
	if off, _ := strconv.Atoi(string(m[1])); !bytes.HasPrefix(b[off:], []byte("xref\n")) {
		t.Errorf("startxref %d does not point at the table", off)
	}
}
