package eml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Safety limits. A message beyond MaxParts or MaxHeaderBytes is ErrMalformed:
// they bound the memory and work a hostile .eml can cause, and no real mail
// comes near them. A multipart nested deeper than MaxDepth is read as one
// leaf (DefectNestingTooDeep).
const (
	// MaxHeaderBytes bounds each header block (the message's and each
	// part's).
	MaxHeaderBytes = 1 << 20
	// MaxParts bounds the number of MIME parts in a message.
	MaxParts = 10000
	// MaxDepth bounds how deeply multiparts are descended into.
	MaxDepth = 32
	// maxBoundary bounds a multipart boundary (RFC 2046 allows 70 bytes;
	// lines are at most 998).
	maxBoundary = 998
	// maxBoundaryLine bounds a line tested as a boundary: the boundary, its
	// dashes and any trailing blanks.
	maxBoundaryLine = 2 + maxBoundary + 2 + 1024 + 2
	// windowSize is the scanner's read size.
	windowSize = 256 << 10
	// lookbehind is how many bytes before the current position the window
	// keeps when it moves, for the line break that precedes a boundary.
	lookbehind = 16
)

// scanner reads a message through a window over an io.ReaderAt, by
// absolute offsets, never holding more than a window of it.
type scanner struct {
	r    io.ReaderAt
	size int64
	buf  []byte
	off  int64 // absolute offset of buf[0]
	n    int   // bytes of buf holding data
}

// windows are the scanners' windows of windowSize bytes, used again from
// one message to the next (a window is most of what reading a message
// allocates).
var windows = sync.Pool{New: func() any { b := make([]byte, windowSize); return &b }}

// release gives the scanner's window back; the scanner must not be used
// after.
func (s *scanner) release() {
	if cap(s.buf) == windowSize {
		b := s.buf[:windowSize]
		windows.Put(&b)
	}
	s.buf, s.n = nil, 0
}

// errShort is wrapped when the source ends before its announced size.
var errShort = errors.New("the source ends before its size")

// window returns the bytes in memory from pos on, reading so that at least
// atLeast of them (or all up to the end) are there. It returns nil at the end.
func (s *scanner) window(pos int64, atLeast int) ([]byte, error) {
	if pos >= s.size {
		return nil, nil
	}
	want := int64(atLeast)
	if left := s.size - pos; left < want {
		want = left
	}
	if pos >= s.off && pos+want <= s.off+int64(s.n) {
		return s.buf[pos-s.off : s.n], nil
	}
	start := max(0, pos-lookbehind)
	need := int(pos-start) + int(want)
	size := max(min(windowSize, int(s.size-start)), need)
	if len(s.buf) < size {
		var nb []byte
		if s.buf == nil && size <= windowSize {
			nb = (*windows.Get().(*[]byte))[:windowSize]
		} else {
			nb = make([]byte, size)
		}
		if start >= s.off && start < s.off+int64(s.n) {
			s.n = copy(nb, s.buf[start-s.off:s.n])
		} else {
			s.n = 0
		}
		s.buf = nb
	} else if start >= s.off && start < s.off+int64(s.n) {
		s.n = copy(s.buf, s.buf[start-s.off:s.n])
	} else {
		s.n = 0
	}
	s.off = start
	for s.n < need {
		end := min(int64(len(s.buf)), s.size-s.off)
		k, err := s.r.ReadAt(s.buf[s.n:end], s.off+int64(s.n))
		s.n += k
		if err != nil && s.n < need {
			if err == io.EOF {
				return nil, fmt.Errorf("%w: %w at byte %d of %d", ErrUnreadable, errShort, s.off+int64(s.n), s.size)
			}
			return nil, fmt.Errorf("%w: reading byte %d: %w", ErrUnreadable, s.off+int64(s.n), err)
		}
		if k == 0 && err == nil {
			return nil, fmt.Errorf("%w: the source returned no bytes at %d", ErrUnreadable, s.off+int64(s.n))
		}
	}
	return s.buf[pos-s.off : s.n], nil
}

// lineAt returns the line at pos with its line ending (LF, CRLF or a lone
// CR, as Python reads lines), looking at most limit bytes ahead. complete
// is false when no line ending (nor the end of data) is within limit.
func (s *scanner) lineAt(pos int64, limit int) (line []byte, complete bool, err error) {
	// Look in a small window first; grow it only for a long line.
	for want := min(limit+2, 4<<10); ; want = limit + 2 {
		w, err := s.window(pos, want)
		if err != nil {
			return nil, false, err
		}
		look := w[:min(len(w), limit+1)]
		i := bytes.IndexAny(look, "\r\n")
		atEnd := pos+int64(len(w)) == s.size
		switch {
		case i < 0 && (atEnd || want == limit+2):
			return look, atEnd && len(w) <= limit, nil
		case i < 0:
			continue
		case look[i] == '\r' && i+1 < len(w) && w[i+1] == '\n':
			return w[:i+2], true, nil
		case look[i] == '\r' && i+1 == len(w) && !atEnd:
			continue // the LF may follow
		}
		return w[:i+1], true, nil
	}
}

// eolLen returns the length of the line ending at the end of line.
func eolLen(line []byte) int {
	n := len(line)
	switch {
	case n >= 2 && line[n-2] == '\r' && line[n-1] == '\n':
		return 2
	case n >= 1 && (line[n-1] == '\n' || line[n-1] == '\r'):
		return 1
	}
	return 0
}

// matchBoundary reports which of bounds (innermost last) the line is a
// delimiter of, and whether it is the closing one: "--", the boundary, an
// optional "--", optional blanks, then the line ending. Enclosing
// boundaries are tried first: a multipart whose parts reuse its parent's
// boundary ends at the parent's delimiter, as in Python's reading.
func matchBoundary(line []byte, bounds []string) (int, bool) {
	if len(line) < 2 || line[0] != '-' || line[1] != '-' {
		return -1, false
	}
	for k := range bounds {
		rest, ok := bytes.CutPrefix(line[2:], []byte(bounds[k]))
		if !ok {
			continue
		}
		closing := false
		if r, ok := bytes.CutPrefix(rest, []byte("--")); ok {
			rest, closing = r, true
		}
		rest = bytes.TrimLeft(rest, " \t")
		if len(rest) == eolLen(rest) {
			return k, closing
		}
	}
	return -1, false
}

// boundaryAt tests the line at pos against bounds.
func (s *scanner) boundaryAt(pos int64, bounds []string) (int, bool, int64, error) {
	if len(bounds) == 0 {
		return -1, false, 0, nil
	}
	line, complete, err := s.lineAt(pos, maxBoundaryLine)
	if err != nil || !complete {
		return -1, false, 0, err
	}
	k, closing := matchBoundary(line, bounds)
	return k, closing, pos + int64(len(line)), nil
}

// stop is where a scan of a body ended.
type stop struct {
	end     int64 // the body ends here (before the boundary's line ending)
	next    int64 // the boundary line starts here; the data's size at the end
	which   int   // the bound matched, -1 at the end of the data
	closing bool  // the boundary is a closing one
}

// body scans from pos (a line start) to the first line that is a boundary
// of one of bounds, feeding every byte of the body to sink (which may be
// nil) exactly once, in order. The line ending before a boundary belongs to
// the boundary (RFC 2046); at the end of the data it is dropped too when
// strip is set (a part inside a multipart, as Python reads it). Boundaries
// can only start lines, and lines of base64 never hold "--", so the search
// jumps from one "--" to the next.
func (s *scanner) body(pos int64, bounds []string, strip bool, sink func([]byte)) (stop, error) {
	fed := pos
	feed := func(to int64) {
		if to > fed {
			if sink != nil {
				sink(s.buf[fed-s.off : to-s.off])
			}
			fed = to
		}
	}
	search := pos
	for {
		w, err := s.window(search, 3)
		if err != nil {
			return stop{}, err
		}
		if len(w) == 0 {
			end := s.size
			if strip && end > pos {
				tail := s.buf[max(fed, end-2)-s.off : end-s.off]
				end -= int64(eolLen(tail))
			}
			feed(end)
			return stop{end: end, next: s.size, which: -1}, nil
		}
		i := -1
		if len(bounds) > 0 {
			i = bytes.Index(w, []byte("--"))
		}
		if i < 0 {
			adv := len(w) - 1 // the last byte may start a "--"
			if search+int64(len(w)) == s.size || adv < 1 {
				adv = len(w)
			}
			search += int64(adv)
			feed(search - 2)
			continue
		}
		p := search + int64(i)
		if p != pos {
			if c := s.buf[p-1-s.off]; c != '\n' && c != '\r' {
				search = p + 1
				feed(search - 2)
				continue
			}
		}
		feed(p - 2)
		k, closing, _, err := s.boundaryAt(p, bounds)
		if err != nil {
			return stop{}, err
		}
		if k >= 0 {
			end := p
			if p > pos {
				end -= int64(eolLen(s.buf[max(fed, p-2)-s.off : p-s.off]))
			}
			feed(end)
			return stop{end: end, next: p, which: k, closing: closing}, nil
		}
		search = p + 2
		feed(search - 2)
	}
}

// headerBlock is a header as read: its lines (without line endings) and
// where the body starts.
type headerBlock struct {
	lines     [][]byte
	bodyStart int64
	defects   []Defect
}

// header reads the header block at pos. It ends at a blank line (which is
// consumed), at a line that cannot be a header line (which starts the body,
// DefectMissingHeaderSeparator), at a boundary of bounds, or at the end of
// the data.
func (s *scanner) header(pos int64, bounds []string) (headerBlock, error) {
	var hb headerBlock
	var arena []byte
	var ends []int
	used := 0
	for {
		if pos >= s.size {
			break
		}
		if k, _, _, err := s.boundaryAt(pos, bounds); err != nil {
			return hb, err
		} else if k >= 0 {
			break
		}
		line, complete, err := s.lineAt(pos, MaxHeaderBytes-used)
		if err != nil {
			return hb, err
		}
		if !complete {
			return hb, fmt.Errorf("%w: a header block larger than %d KiB", ErrMalformed, MaxHeaderBytes>>10)
		}
		content := line[:len(line)-eolLen(line)]
		if len(content) == 0 {
			pos += int64(len(line))
			break
		}
		if !isHeaderLine(content) {
			hb.defects = append(hb.defects, defect(DefectMissingHeaderSeparator, "the header is not followed by a blank line; the body starts at the first line that is not a header field"))
			break
		}
		used += len(line)
		arena = append(arena, content...)
		ends = append(ends, len(arena))
		pos += int64(len(line))
	}
	start := 0
	for _, e := range ends {
		hb.lines = append(hb.lines, arena[start:e])
		start = e
	}
	hb.bodyStart = pos
	return hb, nil
}

// feedRange feeds the bytes [from, to) to sink.
func (s *scanner) feedRange(from, to int64, sink func([]byte)) error {
	for from < to {
		w, err := s.window(from, 1)
		if err != nil {
			return err
		}
		k := min(int64(len(w)), to-from)
		sink(w[:k])
		from += k
	}
	return nil
}
