package minipdf

import (
	"bytes"
	"fmt"
)

// Write returns a PDF file: header (its first line "%PDF-1.4" or another
// version, then any comment lines), objects numbered from 1 (object 1 is
// the document catalog), their cross-reference table, and a trailer whose
// dictionary holds /Size, /Root 1 0 R and then trailer (e.g. " /Info 6 0 R",
// or "").
func Write(header string, objects []string, trailer string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, trailer, xref)
	return b.Bytes()
}
