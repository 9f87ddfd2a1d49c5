package eml

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"
)

// Attachment describes one attachment of an e-mail, in message order.
type Attachment struct {
	// Index is the attachment's position, from 0, in message order.
	Index int
	// Filename is the sender's filename, decoded (RFC 2231, RFC 2047), in
	// Unicode NFC and reduced to a bare name: no directories, no control or
	// bidirectional-override characters, at most 255 bytes. It is
	// never empty: an unnamed attached message is named after its Subject
	// (or "message.eml"), any other unnamed attachment "attachment" plus the
	// extension of its type.
	Filename string
	// ContentType is the sender's media type without parameters,
	// lower-cased; when the sender declared nothing useful (no type, an
	// unparseable one, or a generic one such as application/octet-stream) it
	// is InferType of the filename.
	ContentType string
	// Size is the number of decoded bytes, which Message.Open yields exactly.
	Size int64
	// SHA256 is the hex SHA-256 of the decoded bytes when the message was
	// indexed with digests (ReadIndex), else "".
	SHA256 string
	// Defects are the repairs made to read the attachment; nil when none.
	Defects []Defect
}

// Message is an e-mail's attachments over one consistent snapshot of its
// .eml: a source read by byte ranges (a file handle kept open, a database
// large object read in one transaction, bytes in memory) and an Index of
// its parts. Making a Message reads the source once (or not at all, given a
// stored Index); each Message.Open then reads only the bytes of one
// attachment and decodes them as they are read, so memory never grows with
// an attachment's size. A Message is safe for concurrent use.
type Message struct {
	r     io.ReaderAt
	size  int64
	name  string   // the file's path, for errors; "" for New
	file  *os.File // the file Open opened, closed by Close
	stamp *stamp   // the source's size and time, when it can tell them
	ix    *Index
	atts  []Attachment
	parts []int // the index in ix.Parts of each attachment
}

// stamp identifies a version of a source that can be stat'ed.
type stamp struct {
	size    int64
	modTime time.Time
}

type statter interface {
	Stat() (fs.FileInfo, error)
}

func stampOf(r any) *stamp {
	s, ok := r.(statter)
	if !ok {
		return nil
	}
	fi, err := s.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return &stamp{fi.Size(), fi.ModTime()}
}

// Open opens the .eml file at path and reads it as New does; its errors name
// the path. The Message keeps the file open, so the run reads one snapshot:
// a file removed (purged) after Open is still read whole; one truncated or
// rewritten in place is noticed (ErrChanged) before or while its bytes are
// sent. Close the Message to release the file.
func Open(path string) (*Message, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in every error already
		}
		return nil, fmt.Errorf("eml: %s: %w: %w", path, ErrUnreadable, err)
	}
	m, err := openFile(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

func openFile(f *os.File, path string) (*Message, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("eml: %s: %w: %w", path, ErrUnreadable, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("eml: %s: %w: not a regular file", path, ErrUnreadable)
	}
	m, err := newMessage(f, fi.Size(), path)
	if err != nil {
		return nil, err
	}
	m.file = f
	return m, nil
}

// New reads the message in r, size bytes long, once: it lists the
// attachments and their decoded sizes without decoding base64 (the size
// follows from the characters) and without keeping any body in memory.
// r must keep returning the same bytes for as long as the Message is used
// (one snapshot); if it does not, streams fail with ErrChanged rather than
// yield other bytes. Errors match ErrUnreadable when r fails or is shorter
// than size, and ErrMalformed beyond the limits MaxParts and MaxHeaderBytes;
// anything else in a message is read leniently and its repairs recorded as
// defects.
func New(r io.ReaderAt, size int64) (*Message, error) {
	return newMessage(r, size, "")
}

// NewIndexed is New with an Index made earlier of the same bytes (by
// ReadIndex or Message.Index): nothing is read until an attachment is
// opened. The index must describe a message of size bytes (ErrBadIndex
// otherwise).
func NewIndexed(r io.ReaderAt, size int64, ix *Index) (*Message, error) {
	m := &Message{r: r, size: size, stamp: stampOf(r)}
	if err := ix.check(size); err != nil {
		return nil, fmt.Errorf("%s%w", m.prefix(), err)
	}
	m.use(ix.clone())
	return m, nil
}

func newMessage(r io.ReaderAt, size int64, name string) (*Message, error) {
	m := &Message{r: r, size: size, name: name, stamp: stampOf(r)}
	ix, err := buildIndex(r, size, false)
	if err != nil {
		return nil, fmt.Errorf("%s%w", m.prefix(), err)
	}
	m.use(ix)
	return m, nil
}

// use makes ix the Message's index and lists its attachments.
func (m *Message) use(ix *Index) {
	m.ix = ix
	m.atts = []Attachment{}
	for i, p := range ix.Parts {
		if p.Attachment == nil {
			continue
		}
		m.atts = append(m.atts, Attachment{
			Index:       p.Attachment.Index,
			Filename:    p.Attachment.Filename,
			ContentType: p.Attachment.ContentType,
			Size:        p.Size,
			SHA256:      p.SHA256,
			Defects:     slices.Clone(p.Defects),
		})
		m.parts = append(m.parts, i)
	}
}

// clone returns a deep copy of ix.
func (ix *Index) clone() *Index {
	c := *ix
	c.Defects = slices.Clone(ix.Defects)
	c.Parts = slices.Clone(ix.Parts)
	for i := range c.Parts {
		c.Parts[i].Defects = slices.Clone(c.Parts[i].Defects)
		if a := c.Parts[i].Attachment; a != nil {
			ac := *a
			c.Parts[i].Attachment = &ac
		}
	}
	return &c
}

// Index returns the message's index, to store beside the message and give
// to NewIndexed later. The Index is the caller's to keep.
func (m *Message) Index() *Index { return m.ix.clone() }

// Close releases the file Open opened; for New and NewIndexed, whose source
// is the caller's, it does nothing. A closed Message cannot open
// attachments.
func (m *Message) Close() error {
	if m.file == nil {
		return nil
	}
	return m.file.Close()
}

// Attachments returns the attachments in message order. The slice is the
// caller's to keep; it is empty, not nil, when there are none.
func (m *Message) Attachments() []Attachment {
	out := make([]Attachment, len(m.atts))
	for i, a := range m.atts {
		a.Defects = slices.Clone(a.Defects)
		out[i] = a
	}
	return out
}

// Len returns the number of attachments.
func (m *Message) Len() int { return len(m.atts) }

// Attachment returns attachment i, or an *IndexError if there is none.
func (m *Message) Attachment(i int) (Attachment, error) {
	if i < 0 || i >= len(m.atts) {
		return Attachment{}, &IndexError{Index: i, Count: len(m.atts)}
	}
	a := m.atts[i]
	a.Defects = slices.Clone(a.Defects)
	return a, nil
}

// Check reports whether attachment i can still be read as it was first
// described, cheaply (no decoding): the source is the same size (for a
// file, by its size and modification time; otherwise by reading its last
// byte and finding none after it), and the first and last bytes of the
// attachment can be read. Call it right before sending an
// attachment: an error means nothing should be sent. It returns an
// *IndexError, or an error matching ErrChanged or ErrUnreadable.
func (m *Message) Check(i int) error {
	a, err := m.Attachment(i)
	if err != nil {
		return err
	}
	label := m.label(a)
	if m.stamp != nil {
		now := stampOf(m.r)
		switch {
		case now == nil:
			return fmt.Errorf("%s: %w: the file can no longer be examined", label, ErrUnreadable)
		case now.size != m.stamp.size:
			return fmt.Errorf("%s: %w: the file is now %d bytes, it was %d", label, ErrChanged, now.size, m.stamp.size)
		case !now.modTime.Equal(m.stamp.modTime):
			return fmt.Errorf("%s: %w: the file was modified after it was first read", label, ErrChanged)
		}
	}
	p := m.ix.Parts[m.parts[i]]
	var b [1]byte
	for _, off := range []int64{p.Offset, p.Offset + p.Length - 1, m.size - 1} {
		if off < 0 || off >= m.size || (off == p.Offset && p.Length == 0) {
			continue
		}
		if _, err := m.r.ReadAt(b[:], off); err != nil {
			return m.readError(label, off, err)
		}
	}
	if m.stamp == nil {
		if n, _ := m.r.ReadAt(b[:], m.size); n > 0 {
			return fmt.Errorf("%s: %w: the e-mail is longer than the %d bytes first read", label, ErrChanged, m.size)
		}
	}
	return nil
}

// readError classifies a failed read at off: a source that ends early has
// changed; anything else is unreadable.
func (m *Message) readError(label string, off int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: %w: the e-mail ends before byte %d; it was %d bytes when first read", label, ErrChanged, off+1, m.size)
	}
	if errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("%s: %w: the message was closed", label, ErrUnreadable)
	}
	return fmt.Errorf("%s: %w: %w", label, ErrUnreadable, err)
}

// Open streams the decoded bytes of attachment i: exactly Attachment.Size
// bytes, then io.EOF. It reads only the attachment's own bytes of the
// source, decoding as it goes. The stream also checks that those bytes are
// the ones first read (their CRC-32C): if they changed or cannot be read,
// Read fails with ErrChanged or ErrUnreadable and never yields the
// attachment's last byte, so a consumer that counts bytes (an HTTP body
// with a Content-Length) is never handed something complete-looking. A
// stream of an attachment whose encoded body is 1 MiB or more decodes ahead in a goroutine
// while its reader sends what came before; Close stops it. It returns an
// *IndexError if there is no attachment i. The caller must Close the reader.
func (m *Message) Open(i int) (io.ReadCloser, error) {
	a, err := m.Attachment(i)
	if err != nil {
		return nil, err
	}
	p := m.ix.Parts[m.parts[i]]
	r := &partReader{size: p.Size, d: &rangeDecoder{
		m:     m,
		p:     p,
		label: m.label(a),
		off:   p.Offset,
		end:   p.Offset + p.Length,
		dec:   newDecoder(p.Decoding),
	}}
	if p.Length >= prefetchMin {
		r.startPrefetch()
	}
	return r, nil
}

// label names an attachment in errors: "eml: nota.eml: attachment 0 (nota.pdf)".
func (m *Message) label(a Attachment) string {
	return fmt.Sprintf("%sattachment %d (%s)", m.prefix(), a.Index, a.Filename)
}

// prefix starts every error: the package, and the file if there is one.
func (m *Message) prefix() string {
	if m.name == "" {
		return "eml: "
	}
	return "eml: " + m.name + ": "
}

// errClosed is returned by Read after Close.
var errClosed = errors.New("eml: read after close")

// rawChunk is how much of the encoded body a stream reads at a time.
const rawChunk = 32 << 10

// prefetchMin is the encoded size from which a stream decodes ahead, in a
// goroutine, while its reader sends what was decoded before.
const prefetchMin = 1 << 20

// rangeDecoder reads a part's byte range a chunk at a time, decodes it, and
// at the end confirms the range's CRC-32C and decoded size.
type rangeDecoder struct {
	m     *Message
	p     Part
	label string
	off   int64 // next encoded byte to read
	end   int64
	crc   uint32
	dec   decoder
	raw   []byte
	made  int64 // decoded bytes produced
}

// next appends the next chunk's decoded bytes to dst (non-nil). done says
// the range was read, decoded and confirmed; an error matches ErrChanged or
// ErrUnreadable.
func (d *rangeDecoder) next(dst []byte) (out []byte, done bool, err error) {
	if d.raw == nil {
		d.raw = make([]byte, min(rawChunk, d.p.Length+1))
	}
	before := len(dst)
	finished := d.off == d.end
	if !finished {
		chunk := d.raw[:min(int64(len(d.raw)), d.end-d.off)]
		n, err := d.m.r.ReadAt(chunk, d.off)
		if n < len(chunk) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return dst, false, d.m.readError(d.label, d.off+int64(n), err)
		}
		d.off += int64(n)
		d.crc = crc32.Update(d.crc, castagnoli, chunk)
		dst = d.dec.decode(dst, chunk)
	} else {
		dst = d.dec.finish(dst)
	}
	d.made += int64(len(dst) - before)
	switch {
	case d.made > d.p.Size:
		return dst, false, fmt.Errorf("%s: %w: it is longer than the %d bytes first measured", d.label, ErrChanged, d.p.Size)
	case d.off == d.end && d.crc != d.p.CRC32C:
		return dst, false, fmt.Errorf("%s: %w: its bytes differ from those first read", d.label, ErrChanged)
	case finished && d.made != d.p.Size:
		return dst, false, fmt.Errorf("%s: %w: it ends after %d of the %d bytes first measured", d.label, ErrChanged, d.made, d.p.Size)
	}
	return dst, finished, nil
}

// decoded is a chunk handed from the prefetching goroutine to the reader.
type decoded struct {
	buf  []byte
	done bool
	err  error
}

// partReader streams one part. It never returns the part's last byte
// before the rangeDecoder has confirmed the whole range, so a change or a
// read failure shows as an error before the stream is complete.
type partReader struct {
	d     *rangeDecoder
	size  int64
	out   []byte // decoded bytes not yet handed out start at pos
	pos   int
	given int64 // decoded bytes handed out
	done  bool  // the range was read, decoded and confirmed
	err   error

	// Prefetching (large parts): a goroutine runs d and hands over
	// chunks on ready; buffers come back on free; stop ends it.
	ready chan decoded
	free  chan []byte
	stop  chan struct{}
}

func (r *partReader) startPrefetch() {
	r.ready = make(chan decoded, 1)
	r.free = make(chan []byte, 2)
	r.stop = make(chan struct{})
	capacity := rawChunk + 64 // a chunk's decoded bytes, and a few carried over
	if r.d.p.Decoding == decodeBase64 {
		capacity = rawChunk/4*3 + 64
	}
	for range 2 {
		r.free <- make([]byte, 0, capacity)
	}
	go func() {
		for {
			var buf []byte
			select {
			case buf = <-r.free:
			case <-r.stop:
				return
			}
			out, done, err := r.d.next(buf[:0])
			select {
			case r.ready <- decoded{out, done, err}:
			case <-r.stop:
				return
			}
			if done || err != nil {
				return
			}
		}
	}()
}

func (r *partReader) Read(p []byte) (int, error) {
	for {
		if r.err != nil {
			return 0, r.err
		}
		avail := int64(len(r.out) - r.pos)
		if !r.done && avail > 0 && r.given+avail >= r.size {
			avail = r.size - 1 - r.given // the last byte waits for the check
		}
		if avail > 0 && len(p) > 0 {
			n := copy(p, r.out[r.pos:r.pos+int(min(avail, int64(len(p))))])
			r.pos += n
			r.given += int64(n)
			return n, nil
		}
		if r.done {
			return 0, io.EOF
		}
		if len(p) == 0 {
			return 0, nil
		}
		r.more()
	}
}

// more gets the next decoded chunk, keeping any byte held back.
func (r *partReader) more() {
	held := r.out[r.pos:]
	if r.ready == nil {
		if r.out == nil {
			r.out = make([]byte, 0, min(rawChunk, r.d.p.Length+1))
		}
		r.out = r.out[:copy(r.out, held)]
		r.pos = 0
		r.out, r.done, r.err = r.d.next(r.out)
		return
	}
	c := <-r.ready
	if c.err != nil {
		r.err = c.err
		return
	}
	if len(held) > 0 {
		c.buf = append(held[:len(held):len(held)], c.buf...)
	}
	if r.out != nil {
		select {
		case r.free <- r.out[:0]:
		default:
		}
	}
	r.out, r.pos, r.done = c.buf, 0, c.done
}

// Close ends the stream. Reading after Close fails.
func (r *partReader) Close() error {
	if r.err != errClosed && r.stop != nil {
		close(r.stop)
	}
	r.err = errClosed
	r.out = nil
	return nil
}
