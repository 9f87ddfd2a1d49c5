package eml

import (
	"bytes"
	"encoding/base64"
	"io"
)

// base64Reader decodes a MIME base64 body as it is read. Line breaks, and
// the spaces and tabs some mailers leave in lines, are skipped; any other
// character outside the alphabet is an error, as are data after the padding
// and data that stop in the middle of a 4-character group.
//
// encoding/base64.NewDecoder does the same job, but it strips line breaks a
// byte at a time and decodes at most 1 KiB per call; stripping whole lines
// with memmove and decoding straight into the caller's buffer with
// Encoding.Decode streams an attachment markedly faster.
type base64Reader struct {
	r      io.Reader
	buf    []byte // buf[start:end] holds encoded characters not yet decoded
	start  int
	end    int
	pos    int64 // characters decoded so far, for error offsets
	padded bool  // the last group decoded ended with padding
	small  [3]byte
	out    []byte // decoded bytes not yet returned (reads under 3 bytes)
	rerr   error  // error from r
	err    error  // sticky error
}

const base64Chunk = 32 << 10

func newBase64Reader(r io.Reader) *base64Reader {
	return &base64Reader{r: r, buf: make([]byte, base64Chunk)}
}

func (d *base64Reader) Read(p []byte) (int, error) {
	if len(d.out) > 0 {
		n := copy(p, d.out)
		d.out = d.out[n:]
		return n, nil
	}
	if d.err != nil {
		return 0, d.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for d.end-d.start < 4 && d.rerr == nil {
		d.fill()
	}
	switch n := d.end - d.start; {
	case n > 0 && d.padded:
		d.err = base64.CorruptInputError(d.pos)
		return 0, d.err
	case n >= 4:
	case n > 0:
		d.err = io.ErrUnexpectedEOF
		return 0, d.err
	default:
		d.err = d.rerr
		return 0, d.err
	}
	if len(p) < 3 {
		n, err := d.decode(d.small[:], 4)
		d.out = d.small[:n]
		k := copy(p, d.out)
		d.out = d.out[k:]
		return k, err
	}
	return d.decode(p, min((d.end-d.start)/4*4, len(p)/3*4))
}

// decode decodes the first q pending characters into p and drops them.
func (d *base64Reader) decode(p []byte, q int) (int, error) {
	group := d.buf[d.start : d.start+q]
	n, err := base64.StdEncoding.Decode(p, group)
	if e, ok := err.(base64.CorruptInputError); ok {
		d.err = base64.CorruptInputError(d.pos + int64(e))
		return n, d.err
	}
	d.padded = group[q-1] == '='
	d.pos += int64(q)
	d.start += q
	return n, nil
}

// fill reads more encoded characters into buf, dropping blanks.
func (d *base64Reader) fill() {
	if d.start > 0 {
		d.end = copy(d.buf, d.buf[d.start:d.end])
		d.start = 0
	}
	n, err := d.r.Read(d.buf[d.end:])
	d.end += stripBlanks(d.buf[d.end : d.end+n])
	if err != nil {
		d.rerr = err
	}
}

// stripBlanks removes CR, LF, space and tab from b in place and returns the
// length of what remains. Lines are moved whole; only a line that holds a
// space, a tab or a stray CR is filtered byte by byte.
func stripBlanks(b []byte) int {
	w := 0
	for rest := b; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if k := len(line); k > 0 && line[k-1] == '\r' {
			line = line[:k-1]
		}
		if bytes.IndexByte(line, ' ') < 0 && bytes.IndexByte(line, '\t') < 0 && bytes.IndexByte(line, '\r') < 0 {
			w += copy(b[w:], line)
			continue
		}
		for _, c := range line {
			if c != ' ' && c != '\t' && c != '\r' {
				b[w] = c
				w++
			}
		}
	}
	return w
}
