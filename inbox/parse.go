package inbox

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/emersion/go-message/mail"

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
	if err != nil {
		return e, fmt.Errorf("parsing e-mail: %w", err)
	}
	h := mr.Header
	e.Headers = map[string]string{}
	for _, k := range KeptHeaders {
		if v := h.Get(k); v != "" {
			if dec, err := h.Text(k); err == nil {
				v = dec
			}
			e.Headers[k] = v
		}
	}
	if from, err := h.AddressList("From"); err == nil && len(from) > 0 {
		e.From = from[0].Address
	}
	e.To = addresses(h, "To")
	e.Cc = addresses(h, "Cc")
	e.Subject, _ = h.Subject()
	e.Date, _ = h.Date()
	e.Date = e.Date.UTC()
	e.MessageID, _ = h.MessageID()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return e, fmt.Errorf("parsing e-mail body: %w", err)
		}
		if ih, ok := part.Header.(*mail.InlineHeader); ok && e.Text == "" {
			ct, _, _ := ih.ContentType()
			if ct == "" || ct == "text/plain" {
				b, _ := io.ReadAll(io.LimitReader(part.Body, maxTextBody))
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
		e.Attachments = append(e.Attachments, AttachmentInfo{Index: a.Index, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size})
	}
	e.SizeBytes = int(size)
	return e, nil
}

func addresses(h mail.Header, key string) []string {
	list, err := h.AddressList(key)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.Address)
	}
	return out
}
