package eml

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/emersion/go-message/textproto"
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
	// ContentType is the sender's media type without parameters, lower-cased;
	// when the sender declared nothing useful (no type, an unparseable one,
	// or a generic one such as application/octet-stream) it is InferType of
	// the filename.
	ContentType string
	// Size is the number of decoded bytes, which Message.Open yields exactly.
	Size int64
}

// Message is an e-mail's attachments, read from an .eml that can be opened
// more than once: New reads it once to list the attachments with their sizes,
// and each Message.Open reads it again to stream one attachment's bytes.
// Neither holds an attachment in memory. A Message is safe for concurrent
// use.
type Message struct {
	name  string // the file's path, for errors; "" for New
	open  func() (io.ReadCloser, error)
	atts  []Attachment
	names []string // each attachment's filename as its header gave it
	stamp *stamp   // the source's size and time, when it can tell them
}

// stamp identifies a version of a source that can be stat'ed.
type stamp struct {
	size    int64
	modTime time.Time
}

type statter interface {
	Stat() (fs.FileInfo, error)
}

func stampOf(r io.Reader) *stamp {
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

// Open reads the .eml file at path, as New does; its errors name the path.
// The file must stay in place, unchanged, for as long as the Message is used.
func Open(path string) (*Message, error) {
	return read(path, func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, pe.Err // the path is in every error already
			}
			return nil, err
		}
		return f, nil
	})
}

// New reads an .eml from a source that open can open again and again (a
// file, an object store, a database blob), each time from its first byte.
// It lists the attachments and counts their decoded sizes, streaming.
// Errors match ErrUnreadable when the source cannot be opened or read, and
// ErrMalformed when it is not a MIME message that can be read safely.
func New(open func() (io.ReadCloser, error)) (*Message, error) {
	return read("", open)
}

func read(name string, open func() (io.ReadCloser, error)) (*Message, error) {
	m := &Message{name: name, open: open, atts: []Attachment{}}
	rc, err := open()
	if err != nil {
		return nil, fmt.Errorf("%s%w: %w", m.prefix(), ErrUnreadable, err)
	}
	defer rc.Close()

	m.stamp = stampOf(rc)
	w := newWalker(rc)
	for {
		l, err := w.next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s%w", m.prefix(), err)
		}
		info := classify(l)
		if !info.attachment {
			continue
		}
		a := Attachment{Index: len(m.atts), Filename: info.filename, ContentType: info.contentType}
		size, subject, err := measure(w, l, info)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", m.prefix(), describe(a, l), err)
		}
		a.Size = size
		if a.Filename == "" {
			switch {
			case info.rfc822:
				a.Filename = cmp.Or(subjectFilename(subject), "message.eml")
			default:
				a.Filename = "attachment" + extensionFor(a.ContentType)
			}
		}
		m.atts = append(m.atts, a)
		m.names = append(m.names, info.filename)
	}
}

// subjectSniff is how much of an unnamed attached message is kept to find
// its Subject.
const subjectSniff = 64 << 10

// measure decodes a leaf's body, counting its bytes and keeping none. For an
// unnamed attached message it also returns the message's Subject.
func measure(w *walker, l *leaf, info partInfo) (int64, string, error) {
	dec, err := decodedBody(l, info.encoding)
	if err != nil {
		return 0, "", err
	}
	var sink io.Writer = io.Discard
	var head *headSniffer
	if info.rfc822 && info.filename == "" {
		head = &headSniffer{max: subjectSniff}
		sink = head
	}
	n, err := io.Copy(sink, dec)
	if err != nil {
		return 0, "", w.bodyError(l, info.encoding, err)
	}
	subject := ""
	if head != nil {
		h, _ := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(head.buf)))
		subject = h.Get("Subject")
	}
	return n, subject, nil
}

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

// Attachments returns the attachments in message order. The slice is the
// caller's to keep; it is empty, not nil, when there are none.
func (m *Message) Attachments() []Attachment {
	out := make([]Attachment, len(m.atts))
	copy(out, m.atts)
	return out
}

// Len returns the number of attachments.
func (m *Message) Len() int { return len(m.atts) }

// Attachment returns attachment i, or an *IndexError if there is none.
func (m *Message) Attachment(i int) (Attachment, error) {
	if i < 0 || i >= len(m.atts) {
		return Attachment{}, &IndexError{Index: i, Count: len(m.atts)}
	}
	return m.atts[i], nil
}

// Open streams the decoded bytes of attachment i from the .eml: exactly
// Attachment.Size bytes, then io.EOF. It returns an *IndexError if there is
// no attachment i. If the .eml changed since New read it, Open or a Read
// fails with ErrChanged, and Read never yields more than Size bytes; a read
// failure of the source is ErrUnreadable. The caller must Close the reader.
func (m *Message) Open(i int) (io.ReadCloser, error) {
	a, err := m.Attachment(i)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%sattachment %d (%s)", m.prefix(), a.Index, a.Filename)
	rc, err := m.open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", label, ErrUnreadable, err)
	}
	r, err := m.find(rc, a)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	r.label = label
	return r, nil
}

// prefix starts every error: the package, and the file if there is one.
func (m *Message) prefix() string {
	if m.name == "" {
		return "eml: "
	}
	return "eml: " + m.name + ": "
}

// find walks the .eml again to attachment a and checks it is the same one.
func (m *Message) find(rc io.ReadCloser, a Attachment) (*reader, error) {
	if m.stamp != nil {
		if now := stampOf(rc); now == nil || *now != *m.stamp {
			return nil, fmt.Errorf("%w: the file's size or modification time differs", ErrChanged)
		}
	}
	w := newWalker(rc)
	seen := 0
	for {
		l, err := w.next()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: the email now has %d attachments", ErrChanged, seen)
		}
		if err != nil {
			if errors.Is(err, ErrUnreadable) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", ErrChanged, err)
		}
		info := classify(l)
		if !info.attachment {
			continue
		}
		if seen < a.Index {
			seen++
			continue
		}
		if info.filename != m.names[a.Index] || info.contentType != a.ContentType {
			return nil, fmt.Errorf("%w: attachment %d is now %q (%s)", ErrChanged, a.Index, info.filename, info.contentType)
		}
		dec, err := decodedBody(l, info.encoding)
		if err != nil {
			return nil, err
		}
		return &reader{dec: dec, rc: rc, w: w, l: l, enc: info.encoding, want: a.Size}, nil
	}
}

// describe names an attachment in an error.
func describe(a Attachment, l *leaf) string {
	if a.Filename != "" {
		return fmt.Sprintf("attachment %d (%s, part %s)", a.Index, a.Filename, describePath(l.path))
	}
	return fmt.Sprintf("attachment %d (part %s)", a.Index, describePath(l.path))
}

// errClosed is returned by Read after Close.
var errClosed = errors.New("eml: read after close")

// reader streams one attachment and checks that it is exactly as long as
// the first pass measured.
type reader struct {
	dec       io.Reader
	rc        io.Closer
	w         *walker
	l         *leaf
	enc       string
	label     string // "eml: attachment 0 (nota.pdf)", for errors
	want, got int64
	err       error
}

func (r *reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	// Ask for at most one byte beyond the expected end, to notice growth.
	if rem := r.want - r.got; rem < int64(len(p))-1 {
		p = p[:rem+1]
	}
	n, err := r.dec.Read(p)
	r.got += int64(n)
	if r.got > r.want {
		n -= int(r.got - r.want)
		r.got = r.want
		r.err = fmt.Errorf("%s: %w: it is longer than the %d bytes first measured", r.label, ErrChanged, r.want)
		return n, r.err
	}
	switch {
	case err == io.EOF && r.got != r.want:
		r.err = fmt.Errorf("%s: %w: it ends after %d of the %d bytes first measured", r.label, ErrChanged, r.got, r.want)
	case err == io.EOF:
		r.err = io.EOF
	case err != nil:
		r.err = fmt.Errorf("%s: %w", r.label, r.w.bodyError(r.l, r.enc, err))
	}
	return n, r.err
}

// Close releases the source. Reading after Close fails.
func (r *reader) Close() error {
	if r.err == errClosed {
		return nil
	}
	r.err = errClosed
	return r.rc.Close()
}
