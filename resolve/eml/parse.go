package eml

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// leaf is a MIME part that is not descended into, as the parser meets it.
type leaf struct {
	header    header
	path      string // IMAP-style part number: "1" for a single-part message, "2.1"
	bodyPos   bool   // in a position where the message body may be
	root      bool   // the message itself is this part
	inDigest  bool   // a part of a multipart/digest (default type message/rfc822)
	multipart bool   // a multipart read as a leaf (no boundary, or too deep)
	headerOff int64
	bodyOff   int64
	defects   []Defect
}

// leafSink receives a leaf's body bytes and learns where it ended.
type leafSink interface {
	write(p []byte)
	end(l *leaf, bodyEnd int64)
}

// parser walks a message's MIME tree depth-first, the way Python's email
// feedparser does (so both find the same parts in broken mail), and hands
// each leaf's body to a sink made for it once its header is known.
type parser struct {
	s       *scanner
	parts   int
	defects []Defect // of the message's structure
	visit   func(l *leaf) leafSink
	last    *leaf // the leaf read last
}

func (p *parser) run() error {
	_, err := p.entity(0, nil, "", true, false, false, 0)
	return err
}

// entity reads one entity (header and body) at pos, inside multiparts whose
// boundaries are bounds, and returns where it ended: at the end of the data
// or at the start of a boundary line of bounds.
func (p *parser) entity(pos int64, bounds []string, path string, bodyPos, inDigest, inMultipart bool, depth int) (int64, error) {
	p.parts++
	if p.parts > MaxParts {
		return 0, fmt.Errorf("%w: more than %d MIME parts", ErrMalformed, MaxParts)
	}
	root := path == ""
	hb, err := p.s.header(pos, bounds)
	if err != nil {
		return 0, err
	}
	h, defects := parseHeader(hb.lines)
	defects = append(hb.defects, defects...)
	if root && len(hb.lines) > 0 && bytes.HasPrefix(hb.lines[0], []byte("From ")) {
		p.defects = addDefect(p.defects, defect(DefectMboxFromLine, "the message starts with an mbox \"From \" line, which was skipped"))
	}
	l := &leaf{header: h, path: path, bodyPos: bodyPos, root: root, inDigest: inDigest, headerOff: pos, bodyOff: hb.bodyStart, defects: defects}
	if root {
		l.path = "1"
	}

	typ := structuralType(h, inDigest)
	if sub, ok := strings.CutPrefix(typ, "multipart/"); ok {
		_, params := parseHeaderValue(h.get("Content-Type"))
		boundary := strings.TrimRight(params["boundary"], " \t")
		switch {
		case boundary == "":
			l.multipart = true
			l.defects = append(l.defects, defect(DefectMultipartWithoutBoundary, "a multipart without a boundary was read as one part"))
		case len(boundary) > maxBoundary:
			l.multipart = true
			l.defects = append(l.defects, defect(DefectMultipartWithoutBoundary, fmt.Sprintf("a multipart boundary longer than %d bytes was not used", maxBoundary)))
		case depth >= MaxDepth:
			l.multipart = true
			l.defects = append(l.defects, defect(DefectNestingTooDeep, fmt.Sprintf("a multipart nested more than %d deep was read as one part", MaxDepth)))
		default:
			// A multipart is no part of its own: what its header needed
			// repaired is the message's.
			for _, d := range l.defects {
				p.defects = addDefect(p.defects, d)
			}
			l.defects = nil
			return p.multipart(l, sub, boundary, bounds, depth)
		}
	}
	return p.leafBody(l, bounds, inMultipart && !l.multipart)
}

// leafBody reads a leaf's body up to the next boundary of bounds.
func (p *parser) leafBody(l *leaf, bounds []string, strip bool) (int64, error) {
	sink := p.visit(l)
	st, err := p.s.body(l.bodyOff, bounds, strip, sink.write)
	if err != nil {
		return 0, err
	}
	sink.end(l, st.end)
	p.last = l
	return st.next, nil
}

// multipart reads a multipart's parts. Its own boundary joins bounds while
// its parts are read; an enclosing boundary ends it (RFC 2046 5.1.2), as
// does the end of the data, in both cases without its closing boundary.
func (p *parser) multipart(l *leaf, sub, boundary string, bounds []string, depth int) (int64, error) {
	inner := append(bounds[:len(bounds):len(bounds)], boundary)
	own := len(inner) - 1
	// The preamble runs to the first delimiter.
	st, err := p.s.body(l.bodyOff, inner, false, nil)
	if err != nil {
		return 0, err
	}
	if st.which != own || st.closing {
		return p.noParts(l, st, bounds, inner)
	}
	pos := st.next
	n := 0
	for {
		// pos is at a delimiter of this multipart: skip it and any
		// delimiter lines right after it (Python reads no part between
		// two of them).
		for {
			k, _, next, err := p.s.boundaryAt(pos, inner)
			if err != nil {
				return 0, err
			}
			if k != own {
				break
			}
			pos = next
		}
		n++
		bodyPos := l.bodyPos && (sub == "alternative" || n == 1)
		next, err := p.entity(pos, inner, partPath(l.path, l.root, n), bodyPos, sub == "digest", true, depth+1)
		if err != nil {
			return 0, err
		}
		k, closing, after := -1, false, int64(0)
		if next < p.s.size {
			if k, closing, after, err = p.s.boundaryAt(next, inner); err != nil {
				return 0, err
			}
		}
		if k != own {
			// The end of the data or an enclosing boundary: this
			// multipart ends without its closing boundary.
			p.missingClose(l)
			return next, nil
		}
		if closing {
			// The epilogue runs to the next enclosing boundary.
			st, err := p.s.body(after, bounds, false, nil)
			if err != nil {
				return 0, err
			}
			return st.next, nil
		}
		pos = next
	}
}

// noParts reads a multipart whose first delimiter never comes as one leaf,
// as Python does: its body is everything up to the closing delimiter (the
// rest, to the next enclosing boundary, is dropped) or up to the end.
func (p *parser) noParts(l *leaf, st stop, bounds, inner []string) (int64, error) {
	l.multipart = true
	l.defects = append(l.defects, defect(DefectStartBoundaryNotFound, "the multipart's first boundary was not found; its body was read as one part"))
	sink := p.visit(l)
	if err := p.s.feedRange(l.bodyOff, st.next, sink.write); err != nil {
		return 0, err
	}
	sink.end(l, st.next)
	p.last = l
	if st.which != len(inner)-1 {
		return st.next, nil
	}
	_, _, after, err := p.s.boundaryAt(st.next, inner)
	if err != nil {
		return 0, err
	}
	rest, err := p.s.body(after, bounds, false, nil)
	if err != nil {
		return 0, err
	}
	return rest.next, nil
}

// missingClose records that multipart l ended without its closing
// delimiter, on the message and on its last leaf, which may be cut short.
func (p *parser) missingClose(l *leaf) {
	d := defect(DefectMissingClosingBoundary, fmt.Sprintf("multipart %s ends without its closing boundary; its last part may be truncated", describePath(l.path, l.root)))
	p.defects = append(p.defects, d)
	if p.last != nil {
		p.last.defects = addDefect(p.last.defects, defect(DefectMissingClosingBoundary, "the multipart holding this part ends without its closing boundary; the part may be truncated"))
	}
}

// structuralType is the media type that decides how a part is read, as
// Python's email package decides it: the Content-Type before any ";",
// lower-cased; text/plain when it does not hold exactly one "/"; the
// default (text/plain, or message/rfc822 in a multipart/digest) without a
// Content-Type.
func structuralType(h header, inDigest bool) string {
	if !h.has("Content-Type") {
		if inDigest {
			return "message/rfc822"
		}
		return "text/plain"
	}
	v, _, _ := strings.Cut(h.get("Content-Type"), ";")
	v = strings.ToLower(strings.TrimSpace(v))
	if strings.Count(v, "/") != 1 {
		return "text/plain"
	}
	return v
}

// partPath is the IMAP-style number of the n-th part (from 1) of a
// multipart numbered parent.
func partPath(parent string, root bool, n int) string {
	if root {
		return strconv.Itoa(n)
	}
	return parent + "." + strconv.Itoa(n)
}

func describePath(path string, root bool) string {
	if root {
		return "(message)"
	}
	return path
}
