package eml

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/emersion/go-message/textproto"
)

// Safety limits. A message beyond one of them is ErrMalformed: they bound the
// memory and work a hostile .eml can cause, and no real mail comes near them.
const (
	// MaxHeaderBytes bounds each header block (the message's and each
	// part's), together with any preamble before a multipart's first part.
	MaxHeaderBytes = 1 << 20
	// MaxParts bounds the number of MIME parts in a message.
	MaxParts = 10000
	// MaxDepth bounds how deeply multiparts may nest.
	MaxDepth = 32
	// maxBoundary bounds a multipart boundary (RFC 2046 allows 70 bytes).
	maxBoundary = 200
	// readBufferSize is the buffer between the source and the MIME parser.
	readBufferSize = 64 << 10
)

// errHeaderBudget is returned by source while reading a header uses more
// than MaxHeaderBytes.
var errHeaderBudget = errors.New("header too large")

// source wraps the raw .eml: it remembers the first read error (so an I/O
// failure is told apart from malformed MIME) and, while armed, limits how
// many bytes the parser may pull for one header.
type source struct {
	r      io.Reader
	err    error // first read error other than io.EOF
	armed  bool
	budget int64
	over   bool // the budget ran out
}

func (s *source) Read(p []byte) (int, error) {
	if s.armed {
		if s.budget <= 0 {
			s.over = true
			return 0, errHeaderBudget
		}
		if int64(len(p)) > s.budget {
			p = p[:s.budget]
		}
	}
	n, err := s.r.Read(p)
	if s.armed {
		s.budget -= int64(n)
	}
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *source) arm()    { s.armed, s.budget = true, MaxHeaderBytes }
func (s *source) disarm() { s.armed = false }

// frame is a multipart being walked.
type frame struct {
	mr      *textproto.MultipartReader
	body    io.Reader // the multipart's own body, drained after its last part
	sub     string    // subtype: "mixed", "alternative", "related", …
	bodyPos bool      // the multipart is where the message body may be
	n       int       // parts seen so far
	path    string    // IMAP-style part number of the multipart, "" for the root
}

// leaf is one non-multipart part, with its header and raw (still
// transfer-encoded) body.
type leaf struct {
	header  textproto.Header
	body    *rawBody
	bodyPos bool   // in a position where the message body may be
	root    bool   // the message itself is this part (not multipart)
	path    string // IMAP-style part number, e.g. "2.1"
}

// rawBody reads a leaf's raw bytes and remembers the error that ended them,
// so a decoder's error can be told apart from a truncated message.
type rawBody struct {
	r   io.Reader
	err error
}

func (b *rawBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// walker visits the leaves of a MIME tree depth-first, streaming: only the
// headers of the current path are held, never a body.
type walker struct {
	src     *source
	root    *bufio.Reader
	stack   []*frame
	cur     *leaf
	parts   int
	started bool
}

func newWalker(r io.Reader) *walker {
	src := &source{r: r}
	return &walker{src: src, root: bufio.NewReaderSize(src, readBufferSize)}
}

// next returns the next leaf, or io.EOF after the last. The previous leaf's
// body is skipped if it was not read to its end.
func (w *walker) next() (*leaf, error) {
	if w.cur != nil {
		cur := w.cur
		w.cur = nil
		if _, err := io.Copy(io.Discard, cur.body); err != nil {
			return nil, w.fail(cur.path, "reading the part", err)
		}
	}
	if !w.started {
		w.started = true
		w.src.arm()
		h, err := textproto.ReadHeader(w.root)
		w.src.disarm()
		if err != nil {
			return nil, w.fail("", "reading the message header", err)
		}
		w.parts++
		if l, err := w.enter(h, w.root, true, ""); l != nil || err != nil {
			return l, err
		}
	}
	for len(w.stack) > 0 {
		f := w.stack[len(w.stack)-1]
		w.src.arm()
		p, err := f.mr.NextPart()
		w.src.disarm()
		if err == io.EOF {
			w.stack = w.stack[:len(w.stack)-1]
			if len(w.stack) > 0 {
				// The epilogue of a nested multipart, up to its parent's
				// next boundary.
				if _, err := io.Copy(io.Discard, f.body); err != nil {
					return nil, w.fail(f.path, "reading the end of the multipart", err)
				}
			}
			continue
		}
		f.n++
		path := partPath(f.path, f.n)
		if err != nil {
			// go-message formats the cause into the text ("multipart:
			// NextPart: EOF") without wrapping it.
			if w.src.err == nil && !w.src.over && strings.Contains(err.Error(), "EOF") {
				return nil, fmt.Errorf("%w: multipart %s ends without its closing boundary (truncated, or a wrong boundary)", ErrMalformed, describePath(f.path))
			}
			if strings.Contains(err.Error(), bufio.ErrBufferFull.Error()) {
				return nil, fmt.Errorf("%w: multipart %s: a line of more than 4 KiB before or between its parts", ErrMalformed, describePath(f.path))
			}
			return nil, w.fail(path, "finding the part", err)
		}
		w.parts++
		if w.parts > MaxParts {
			return nil, fmt.Errorf("%w: more than %d MIME parts", ErrMalformed, MaxParts)
		}
		bodyPos := f.bodyPos && (f.sub == "alternative" || f.n == 1)
		if l, err := w.enter(p.Header, p, bodyPos, path); l != nil || err != nil {
			return l, err
		}
	}
	return nil, io.EOF
}

// enter starts walking a part: a multipart is pushed on the stack (and nil
// returned), anything else is returned as a leaf.
func (w *walker) enter(h textproto.Header, body io.Reader, bodyPos bool, path string) (*leaf, error) {
	mediaType, params := parseHeaderValue(h.Get("Content-Type"))
	if sub, ok := strings.CutPrefix(mediaType, "multipart/"); ok {
		boundary := params["boundary"]
		switch {
		case boundary == "":
			return nil, fmt.Errorf("%w: part %s: multipart without a boundary", ErrMalformed, describePath(path))
		case len(boundary) > maxBoundary:
			return nil, fmt.Errorf("%w: part %s: boundary longer than %d bytes", ErrMalformed, describePath(path), maxBoundary)
		case len(w.stack) >= MaxDepth:
			return nil, fmt.Errorf("%w: multiparts nested more than %d deep", ErrMalformed, MaxDepth)
		}
		w.stack = append(w.stack, &frame{
			mr:      textproto.NewMultipartReader(body, boundary),
			body:    body,
			sub:     sub,
			bodyPos: bodyPos,
			path:    path,
		})
		return nil, nil
	}
	l := &leaf{header: h, body: &rawBody{r: body}, bodyPos: bodyPos, root: path == "", path: path}
	w.cur = l
	return l, nil
}

// fail explains an error met at a part: an I/O error of the source is
// ErrUnreadable, anything else ErrMalformed.
func (w *walker) fail(path, doing string, err error) error {
	if w.src.err != nil {
		return w.cause(doing, err)
	}
	return fmt.Errorf("part %s: %w", describePath(path), w.cause(doing, err))
}

// cause is fail without naming the part.
func (w *walker) cause(doing string, err error) error {
	switch {
	case w.src.err != nil:
		return fmt.Errorf("%w: %s: %w", ErrUnreadable, doing, w.src.err)
	case w.src.over:
		return fmt.Errorf("%w: header or preamble larger than %d KiB", ErrMalformed, MaxHeaderBytes>>10)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: the message ends before the part does (truncated, or a missing closing boundary)", ErrMalformed)
	default:
		return fmt.Errorf("%w: %s: %v", ErrMalformed, doing, err)
	}
}

// partPath is the IMAP-style number of the n-th part (from 1) of parent.
func partPath(parent string, n int) string {
	if parent == "" {
		return strconv.Itoa(n)
	}
	return parent + "." + strconv.Itoa(n)
}

func describePath(path string) string {
	if path == "" {
		return "(message)"
	}
	return path
}
