package inbox

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	netmail "net/mail"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
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
	var e Email
	mr, err := mail.CreateReader(io.NewSectionReader(r, 0, size))
	if err != nil && !message.IsUnknownCharset(err) {
		return e, fmt.Errorf("parsing e-mail: %w", err)
	}
	h := mr.Header
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
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil && !(message.IsUnknownCharset(err) && part != nil) {
			return e, fmt.Errorf("parsing e-mail body: %w", err)
		}
		if ih, ok := part.Header.(*mail.InlineHeader); ok && e.Text == "" {
			ct, params, _ := ih.ContentType()
			if ct == "" || ct == "text/plain" {
				body := io.Reader(part.Body)
				// go-message decodes UTF-8 and ASCII only and leaves other
				// charsets (ISO-8859-1, Windows-1252, …) as written: they
				// are decoded here, as the WHATWG Encoding Standard names
				// them.
				if label := params["charset"]; label != "" {
					if _, name := charset.Lookup(label); name != "" && name != "utf-8" {
						if dec, err := charset.NewReaderLabel(label, body); err == nil {
							body = dec
						}
					}
				}
				b, _ := io.ReadAll(io.LimitReader(body, maxTextBody))
				e.Text = strings.TrimSpace(strings.ReplaceAll(string(b), "\r\n", "\n"))
			}
		}
	}
	msg, err := eml.New(r, size)
	if err != nil {
		return e, fmt.Errorf("reading attachments: %w", err)
	}
	e.Attachments = []AttachmentInfo{}
	for _, a := range msg.Attachments() {
		info := AttachmentInfo{Index: a.Index, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size}
		for _, d := range a.Defects {
			info.Defects = append(info.Defects, AttachmentDefect{Code: d.Code, Message: d.Message})
		}
		e.Attachments = append(e.Attachments, info)
	}
	e.SizeBytes = int(size)
	return e, nil
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
