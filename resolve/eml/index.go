package eml

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// IndexVersion is the version of the Index format this package writes and
// reads.
const IndexVersion = 1

// Index is what one pass over a message learns about it: where each leaf
// part's body lies, how it is encoded, its decoded size, which parts are
// attachments, and every repair made while reading. It is JSON-serializable
// so that a service can compute it once, when a message arrives (ReadIndex),
// store it beside the message, and give it to every later run
// (NewIndexed), which then reads only the byte ranges it sends.
type Index struct {
	// Version is IndexVersion.
	Version int `json:"version"`
	// Size is the length of the message in bytes.
	Size int64 `json:"size"`
	// Digests says each part's SHA256 is set.
	Digests bool `json:"digests,omitempty"`
	// Defects are the repairs made to the message's structure.
	Defects []Defect `json:"defects,omitempty"`
	// Parts are the leaf parts, depth-first.
	Parts []Part `json:"parts"`
}

// Part is one leaf part of a message: a part that is not a multipart, or a
// multipart read as one part (see the defects).
type Part struct {
	// Path is the IMAP-style part number ("1" for a single-part message,
	// "2.1" for the first part of the second part).
	Path string `json:"path"`
	// HeaderOffset is where the part's header starts; Offset and Length
	// delimit its body as sent, still transfer-encoded.
	HeaderOffset int64 `json:"header_offset"`
	Offset       int64 `json:"offset"`
	Length       int64 `json:"length"`
	// ContentType is the declared media type without parameters,
	// lower-cased; "" when none is declared or it is not a media type.
	ContentType string `json:"content_type"`
	// Charset is the declared charset parameter, lower-cased.
	Charset string `json:"charset,omitempty"`
	// Disposition is the declared Content-Disposition value, lower-cased.
	Disposition string `json:"disposition,omitempty"`
	// Encoding is the declared Content-Transfer-Encoding, lower-cased.
	Encoding string `json:"encoding,omitempty"`
	// Decoding is how the body is decoded: "identity", "base64" or
	// "quoted-printable".
	Decoding string `json:"decoding"`
	// Size is the number of decoded bytes.
	Size int64 `json:"size"`
	// CRC32C is the CRC-32 (Castagnoli) of the body as sent (the Length
	// bytes at Offset); streams check it to notice a changed message.
	CRC32C uint32 `json:"crc32c"`
	// SHA256 is the hex SHA-256 of the decoded bytes, when the index was
	// made with digests.
	SHA256 string `json:"sha256,omitempty"`
	// Body says the part is the message's text: text/plain or text/html
	// where the body goes, and not an attachment.
	Body bool `json:"body,omitempty"`
	// Attachment is set when the part is an attachment.
	Attachment *PartAttachment `json:"attachment,omitempty"`
	// Defects are the repairs made reading this part.
	Defects []Defect `json:"defects,omitempty"`
}

// PartAttachment is what makes a part an attachment: its position in message
// order and the name and type it is given.
type PartAttachment struct {
	Index       int    `json:"index"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
}

// castagnoli is the CRC-32C table (hardware-accelerated where available).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ReadIndex reads the message in r (size bytes) once, decoding every part to
// compute its SHA-256 as well. This is the pass a service makes when a
// message arrives; New makes a cheaper one (no digests, base64 sized without
// decoding). Errors match ErrUnreadable (the source failed or is shorter than
// size) or ErrMalformed (beyond MaxParts or MaxHeaderBytes).
func ReadIndex(r io.ReaderAt, size int64) (*Index, error) {
	return buildIndex(r, size, true)
}

func buildIndex(r io.ReaderAt, size int64, digests bool) (*Index, error) {
	if size < 0 {
		return nil, fmt.Errorf("%w: negative size %d", ErrUnreadable, size)
	}
	ix := &Index{Version: IndexVersion, Size: size, Digests: digests, Parts: []Part{}}
	var states []*partState
	p := &parser{s: &scanner{r: r, size: size}}
	defer p.s.release()
	p.visit = func(l *leaf) leafSink {
		info := classify(l)
		decoding, unknown := decodingFor(info.encoding)
		if unknown != nil {
			l.defects = append(l.defects, *unknown)
		}
		st := &partState{leaf: l, info: info, part: Part{
			Path:         l.path,
			HeaderOffset: l.headerOff,
			Offset:       l.bodyOff,
			ContentType:  info.declared,
			Charset:      info.charset,
			Disposition:  info.disposition,
			Encoding:     info.encoding,
			Decoding:     decoding,
			Body:         info.body,
		}}
		states = append(states, st)
		s := &indexSink{st: st, dec: newDecoder(decoding)}
		if digests {
			s.digest = sha256.New()
		}
		if info.rfc822 && info.filename == "" {
			s.sniff = &headSniffer{max: subjectSniff}
		}
		s.decoded = s.digest != nil || s.sniff != nil
		return s
	}
	if err := p.run(); err != nil {
		return nil, err
	}
	ix.Defects = p.defects
	n := 0
	for _, st := range states {
		part, info := st.part, st.info
		part.Defects = st.leaf.defects
		if info.attachment {
			a := &PartAttachment{Index: n, Filename: info.filename, ContentType: info.contentType}
			if a.Filename == "" {
				switch {
				case info.rfc822:
					a.Filename = cmp.Or(subjectFilename(st.subject), "message.eml")
				default:
					a.Filename = "attachment" + extensionFor(a.ContentType)
				}
			}
			part.Attachment = a
			n++
		}
		ix.Parts = append(ix.Parts, part)
	}
	return ix, nil
}

// partState is a part being indexed.
type partState struct {
	part    Part
	leaf    *leaf
	info    partInfo
	subject string // of an unnamed attached message
}

// indexSink measures one part's body as the parser reads it.
type indexSink struct {
	st     *partState
	dec    decoder
	crc    uint32
	digest hash.Hash
	sniff  *headSniffer
	// decoded says the decoded bytes are needed (digest or sniff); out is
	// where they are decoded (not needed for an identity part, whose bytes
	// are its decoded bytes).
	decoded bool
	out     []byte
}

func (s *indexSink) write(p []byte) {
	s.crc = crc32.Update(s.crc, castagnoli, p)
	if !s.decoded {
		s.dec.decode(nil, p)
		return
	}
	if id, ok := s.dec.(*identityDecoder); ok {
		id.n += int64(len(p))
		s.consume(p)
		return
	}
	if s.out == nil {
		s.out = make([]byte, 0, 64<<10)
	}
	s.out = s.dec.decode(s.out[:0], p)
	s.consume(s.out)
}

func (s *indexSink) consume(b []byte) {
	if s.digest != nil {
		s.digest.Write(b)
	}
	if s.sniff != nil {
		s.sniff.Write(b)
	}
}

func (s *indexSink) end(l *leaf, bodyEnd int64) {
	if s.decoded {
		s.out = s.dec.finish(s.out[:0])
		s.consume(s.out)
	} else {
		s.dec.finish(nil)
	}
	part := &s.st.part
	part.Length = bodyEnd - part.Offset
	part.Size = s.dec.size()
	part.CRC32C = s.crc
	if s.digest != nil {
		part.SHA256 = hex.EncodeToString(s.digest.Sum(nil))
	}
	l.defects = append(l.defects, s.dec.defects()...)
	if s.sniff != nil {
		h, _ := readHeaderBytes(s.sniff.buf)
		s.st.subject = h.get("Subject")
	}
}

// readHeaderBytes parses the header at the start of b.
func readHeaderBytes(b []byte) (header, []Defect) {
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(line) == 0 || !isHeaderLine(line) {
			break
		}
		lines = append(lines, line)
	}
	return parseHeader(lines)
}

// subjectSniff is how much of an unnamed attached message is kept to find
// its Subject.
const subjectSniff = 64 << 10

// headSniffer is a writer that keeps the first max bytes written to it.
type headSniffer struct {
	buf []byte
	max int
}

func (p *headSniffer) Write(b []byte) (int, error) {
	if room := p.max - len(p.buf); room > 0 {
		p.buf = append(p.buf, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// check verifies that an index can describe a message of size bytes: the
// version, the size, and parts and attachments that are consistent.
func (ix *Index) check(size int64) error {
	switch {
	case ix == nil:
		return fmt.Errorf("%w: no index", ErrBadIndex)
	case ix.Version != IndexVersion:
		return fmt.Errorf("%w: version %d, this reader knows %d", ErrBadIndex, ix.Version, IndexVersion)
	case ix.Size != size:
		return fmt.Errorf("%w: it describes a message of %d bytes, the source has %d", ErrBadIndex, ix.Size, size)
	}
	n := 0
	for i, p := range ix.Parts {
		if p.Offset < 0 || p.Length < 0 || p.Offset > size || p.Length > size-p.Offset || p.Size < 0 {
			return fmt.Errorf("%w: part %d (%s) lies outside the message", ErrBadIndex, i, p.Path)
		}
		if err := checkDecoding(p.Decoding); err != nil {
			return fmt.Errorf("%w: part %d (%s): %w", ErrBadIndex, i, p.Path, err)
		}
		if a := p.Attachment; a != nil {
			if a.Index != n {
				return fmt.Errorf("%w: part %d (%s) is attachment %d, expected %d", ErrBadIndex, i, p.Path, a.Index, n)
			}
			if a.Filename == "" || a.ContentType == "" {
				return fmt.Errorf("%w: attachment %d has no filename or content type", ErrBadIndex, a.Index)
			}
			n++
		}
	}
	return nil
}
