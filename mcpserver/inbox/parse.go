package inbox

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"sync"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
	"golang.org/x/net/html/charset"

	"github.com/kobana/workflow/resolve/eml"
)

// maxTextBody caps the text body kept in an e-mail record.
const maxTextBody = 64 << 10

// KeptHeaders are the headers an e-mail record keeps (Email.Headers): the
// addressing and threading headers, and those that tell an automatic reply
// (see AutoReply).
var KeptHeaders = []string{
	"From", "To", "Cc", "Reply-To", "Subject", "Date", "Message-Id", "In-Reply-To", "References",
	"Auto-Submitted", "Precedence", "X-Autoreply", "X-Autorespond", "X-Auto-Response-Suppress",
	"List-Id", "Return-Path",
}

// ParseEmail reads an .eml held in memory into the fields of an e-mail
// record; see ReadEmail.
func ParseEmail(raw []byte) (Email, error) {
	return ReadEmail(bytes.NewReader(raw), int64(len(raw)))
}

// ReadEmail reads a stored message into the fields of an e-mail record: the
// kept headers (decoded), sender and recipients, subject, date, message id,
// the first text/plain body (at most 64 KiB) and the attachments in message
// order, the order workflows use for ${{email.attachments.N}}. It streams:
// memory does not grow with the message's size. Id, inbox, status and
// received time are the caller's to set.
func ReadEmail(r io.ReaderAt, size int64) (Email, error) {
	msg, err := eml.New(r, size)
	if err != nil {
		return Email{}, fmt.Errorf("parsing e-mail: %w", err)
	}
	return ReadEmailIndexed(r, size, msg.Index())
}

// ReadEmailIndexed is ReadEmail given the message's part index (made of the
// same bytes by eml.ReadIndex or eml.Message.Index, as the intake makes it
// when a message arrives): the structure is not read again, only the header
// and the text part.
func ReadEmailIndexed(r io.ReaderAt, size int64, ix *eml.Index) (Email, error) {
	var e Email
	hdr, err := textproto.ReadHeader(bufio.NewReader(io.NewSectionReader(r, 0, size)))
	if err != nil {
		return e, fmt.Errorf("parsing e-mail: %w", err)
	}
	h := mail.Header{Header: message.Header{Header: hdr}}
	e.Headers = map[string]string{}
	for _, k := range KeptHeaders {
		if v := h.Get(k); v != "" {
			e.Headers[k] = decodeHeader(v)
		}
	}
	if from := addresses(h, "From"); len(from) > 0 {
		e.From = from[0]
	}
	e.To = addresses(h, "To")
	e.Cc = addresses(h, "Cc")
	e.Subject = decodeHeader(h.Get("Subject"))
	e.Date, _ = h.Date()
	e.Date = e.Date.UTC()
	e.MessageID, _ = h.MessageID()
	if p, ok := FirstPart(ix, "text/plain"); ok {
		e.Text = readText(PartText(r, p), min(p.Size, maxTextBody))
	}
	e.Attachments = []AttachmentInfo{}
	for _, p := range ix.Parts {
		a := p.Attachment
		if a == nil {
			continue
		}
		info := AttachmentInfo{Index: a.Index, Filename: a.Filename, ContentType: a.ContentType, Size: p.Size}
		for _, d := range p.Defects {
			info.Defects = append(info.Defects, AttachmentDefect{Code: d.Code, Message: d.Message})
		}
		e.Attachments = append(e.Attachments, info)
	}
	e.SizeBytes = int(size)
	return e, nil
}

// readText reads at most maxTextBody bytes of text (expecting about want),
// line breaks as "\n", without blanks around it. The text is built in one
// allocation of about want bytes, through a pooled read buffer.
func readText(r io.Reader, want int64) string {
	var sb strings.Builder
	sb.Grow(int(want) + 1)
	buf := textBuffers.Get().(*[textBufferSize]byte)
	defer textBuffers.Put(buf)
	cr := false // the last byte read was a CR, not written yet
	for read := 0; read < maxTextBody; {
		n, err := r.Read(buf[:min(len(buf), maxTextBody-read)])
		read += n
		chunk := buf[:n]
		if cr && n > 0 {
			// CRLF to LF: a CR is written unless an LF follows it.
			if chunk[0] != '\n' {
				sb.WriteByte('\r')
			}
			cr = false
		}
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\r')
			if i < 0 {
				sb.Write(chunk)
				break
			}
			sb.Write(chunk[:i])
			switch {
			case i+1 == len(chunk):
				cr = true
			case chunk[i+1] != '\n':
				sb.WriteByte('\r')
			}
			chunk = chunk[i+1:]
		}
		if err != nil {
			break
		}
	}
	if cr {
		sb.WriteByte('\r')
	}
	return strings.TrimSpace(sb.String())
}

// textBufferSize is the size of readText's read buffers.
const textBufferSize = 16 << 10

var textBuffers = sync.Pool{New: func() any { return new([textBufferSize]byte) }}

// FirstPart is the first part of an indexed message of media type t that
// is shown inline (as a mail reader shows it, and not as an attachment),
// and whether there is one.
func FirstPart(ix *eml.Index, t string) (eml.Part, bool) {
	for _, p := range ix.Parts {
		if pt, inline := partType(p); inline && pt == t {
			return p, true
		}
	}
	return eml.Part{}, false
}

// partType is a part's media type (text/plain when it declares none, as
// RFC 2045 says) and whether it is shown inline: declared inline, or text
// not declared an attachment.
func partType(p eml.Part) (string, bool) {
	t := p.ContentType
	if t == "" {
		t = "text/plain"
	}
	return t, p.Disposition == "inline" || (p.Disposition != "attachment" && strings.HasPrefix(t, "text/"))
}

// PartText reads a part's body decoded: its transfer encoding undone, and
// its charset, when it declares one other than UTF-8, decoded as the WHATWG
// Encoding Standard names it (go-message and the mail readers leave other
// charsets to the reader).
func PartText(r io.ReaderAt, p eml.Part) io.Reader {
	var body io.Reader = io.NewSectionReader(r, p.Offset, p.Length)
	switch p.Decoding {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, skipSpace{body})
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	if label := p.Charset; label != "" {
		if _, name := charset.Lookup(label); name != "" && name != "utf-8" {
			if dec, err := charset.NewReaderLabel(label, body); err == nil {
				body = dec
			}
		}
	}
	return body
}

// skipSpace drops the line breaks and blanks of a base64 body.
type skipSpace struct{ r io.Reader }

func (s skipSpace) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		k := 0
		for _, c := range p[:n] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				p[k] = c
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

// wordDecoder decodes RFC 2047 encoded words in any charset the WHATWG
// Encoding Standard names (go-message's own decoder knows UTF-8 and ASCII
// only, and mail in ISO-8859-1 or Windows-1252 is common).
var wordDecoder = &mime.WordDecoder{CharsetReader: charset.NewReaderLabel}

// decodeHeader decodes a header value's encoded words; a value that does
// not decode is kept as written.
func decodeHeader(v string) string {
	if d, err := wordDecoder.DecodeHeader(v); err == nil {
		return d
	}
	return v
}

func addresses(h mail.Header, key string) []string {
	v := h.Get(key)
	if v == "" {
		return nil
	}
	list, err := (&netmail.AddressParser{WordDecoder: wordDecoder}).ParseList(v)
	if err != nil {
		// A display name the parser refuses (raw 8-bit bytes) does not hide
		// a single address in angle brackets.
		open, end := strings.LastIndexByte(v, '<'), strings.LastIndexByte(v, '>')
		if open >= 0 && end > open && strings.Count(v, "@") == 1 {
			if a, err := netmail.ParseAddress(v[open : end+1]); err == nil {
				return []string{a.Address}
			}
		}
		return nil
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.Address)
	}
	return out
}
