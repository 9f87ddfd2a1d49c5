// Package eml is the attachment source of a workflow run: it lists the
// attachments of the triggering e-mail's original .eml and streams their
// decoded bytes, for ${{email.attachments.N}} and its .base64, .filename,
// .content_type and .size.
//
// Entry points:
//
//   - Open (a file) or New (any source that can be opened again) reads the
//     .eml once, streaming, and returns a *Message listing its attachments
//     with their decoded sizes.
//   - Message.Attachments, Message.Attachment and Message.Len give the
//     metadata; Message.Open streams one attachment's bytes, reading the .eml
//     again, so memory never grows with an attachment's size.
//   - InferType gives the media type of a filename from a table built into the
//     package, the same on every machine.
//
// Message order is the depth-first order of the MIME leaf parts that are
// attachments: a part whose disposition is "attachment", an attached message
// (message/rfc822 or message/global below the top: kept whole, its raw bytes,
// as one attachment and never descended into), or
// any other part with a filename (from the disposition's filename or the
// content type's name) that is not the message's text body. An inline image
// of a multipart/related with a filename is an attachment; without one it is
// not.
//
// Bytes are exact: the Content-Transfer-Encoding (base64, quoted-printable,
// 7bit, 8bit, binary) is undone and nothing else; text is never converted
// between charsets. Filenames are decoded from RFC 2231 and RFC 2047 in any
// charset the WHATWG Encoding Standard names.
//
// Errors: *IndexError for an attachment the e-mail lacks; ErrUnreadable when
// the .eml cannot be opened or read; ErrMalformed for a truncated message, a
// broken boundary, invalid base64 or a message beyond the limits MaxParts,
// MaxDepth and MaxHeaderBytes; ErrChanged when the .eml read by Message.Open
// is not the one first read. Match them with errors.Is and errors.As.
//
// The package is a leaf: it depends on nothing else in this module.
package eml
