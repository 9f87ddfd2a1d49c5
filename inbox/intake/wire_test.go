package intake

import "testing"

// endOfData is go-smtp's DATA terminator state machine, one byte at a
// time (its dataReader, less the unstuffing): where the body ends in b, or
// -1.
func endOfData(b []byte) int {
	const (
		beginLine = iota
		dot
		dotCR
		cr
		data
	)
	state := beginLine
	for i, c := range b {
		switch state {
		case beginLine:
			switch c {
			case '.':
				state = dot
			case '\r':
				state = cr
			default:
				state = data
			}
		case dot:
			if c == '\r' {
				state = dotCR
			} else {
				state = data
			}
		case dotCR:
			if c == '\n' {
				return i + 1
			}
			state = data
		case cr:
			if c == '\n' {
				state = beginLine
			} else {
				state = data
			}
		case data:
			if c == '\r' {
				state = cr
			}
		}
	}
	return -1
}

// FuzzScanData: the wire's terminator search (which skips ahead to the
// next CR) ends a body exactly where go-smtp's does, however the bytes are
// split across reads: a disagreement would let one side read commands as
// message or message as commands.
func FuzzScanData(f *testing.F) {
	for _, s := range []string{"hello\r\n.\r\n", ".\r\n", "a\r\n..\r\n.\r\n", "\r\n.\r\r\n.\r\nNOOP\r\n", "x\n.\r\n\r\n.\r\n", "\r\r\n.\r\n"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, split uint8) {
		want := endOfData(b)
		w := &wire{mode: modeData}
		step := int(split)%7 + 1
		got := -1
		for off := 0; off < len(b); off += step {
			piece := b[off:min(off+step, len(b))]
			if end := w.scanData(piece); end < len(piece) || w.mode == modeCommand {
				got = off + end
				break
			}
		}
		if got != want {
			t.Fatalf("%q split every %d: body ends at %d, go-smtp ends it at %d", b, step, got, want)
		}
	})
}
