// Package eml is the attachment source of a workflow run: it lists the
// attachments of the triggering e-mail's original .eml and streams their
// decoded bytes, for ${{email.attachments.N}} and its .base64, .filename,
// .content_type and .size.
//
// # Entry points
//
//   - Open (a file) or New (any io.ReaderAt and its size: a file handle, a
//     database large object read in one transaction, bytes in memory) reads
//     the message once and returns a *Message over that one snapshot.
//   - ReadIndex reads a message once, decoding every part to take its
//     SHA-256, and returns an Index to store beside the message (JSON);
//     NewIndexed then makes a Message without reading the message at all
//     (resolve.EMLIndexed uses it for a stored message).
//   - Message.Attachments, Message.Attachment and Message.Len give the
//     metadata; Message.Check tells, cheaply, whether an attachment can
//     still be read as described; Message.Open streams one attachment.
//   - InferType gives the media type of a filename from a table built into the
//     package, the same on every machine.
//
// # Attachments
//
// Message order is the depth-first order of the MIME leaf parts that are
// attachments: a part whose disposition is "attachment", an attached message
// (message/rfc822 or message/global below the top: kept whole, its raw
// bytes, as one attachment and never descended into), or any other part with
// a filename (from the disposition's filename or the content type's name)
// that is not the message's text body (text/plain or text/html where the
// body goes: the message itself, any part of a multipart/alternative there,
// the first part of any other multipart there). An inline image of a
// multipart/related with a filename is an attachment; without one it is not.
//
// Bytes are exact: the Content-Transfer-Encoding (base64, quoted-printable,
// 7bit, 8bit, binary) is undone and nothing else; text is never converted
// between charsets and line endings are kept. Filenames are decoded from RFC
// 2231 and RFC 2047 in any charset the WHATWG Encoding Standard names.
//
// # Reading broken mail
//
// Messages are read the way Python's email package reads them, so a real
// mailbox loses nothing a mature reader would recover, and each repair is a
// Defect (a stable code and a message) on the attachment it concerns
// (Attachment.Defects, and in a run record) or on the message (Index.Defects):
//
//   - A leading mbox "From " line is skipped (DefectMboxFromLine); one inside
//     a header is ignored (DefectMisplacedFromLine).
//   - A header not followed by a blank line ends at the first line that is
//     not a header field, which starts the body (DefectMissingHeaderSeparator);
//     a header that starts with a continuation line, or a line starting with
//     ":", loses that line (DefectHeaderContinuation, DefectHeaderWithoutName).
//     A multipart's header repairs are the message's.
//   - Boundaries: a part ends at a delimiter of its own multipart or of any
//     enclosing one (RFC 2046 5.1.2); a multipart that ends at an enclosing
//     delimiter or at the end of the message without its closing delimiter
//     keeps its parts, the last of which may be cut short
//     (DefectMissingClosingBoundary); one whose first delimiter never comes,
//     or that has no boundary, is read as one part
//     (DefectStartBoundaryNotFound, DefectMultipartWithoutBoundary); one
//     nested deeper than MaxDepth is read as one part (DefectNestingTooDeep).
//   - Base64 is decoded as far as it goes: characters outside the alphabet
//     are skipped (DefectBase64InvalidCharacters; line breaks, spaces and
//     tabs are skipped without a defect), data that end mid-group keep the
//     bytes the group completes (DefectBase64MissingPadding), data after the
//     padding are ignored (DefectBase64DataAfterPadding).
//   - Quoted-printable is decoded as Python's quopri does: an "=" not
//     followed by two hex digits or a line break is kept as written
//     (DefectQuotedPrintableInvalidEscape).
//   - An unknown Content-Transfer-Encoding ("x-uuencode", "7-bit", "8bits")
//     yields the raw bytes (DefectUnknownTransferEncoding).
//
// Deliberate differences from Python: base64 data ending with a single
// character of a group drop it (DefectBase64DanglingCharacter; Python
// returns the whole part undecoded), x-uuencode is not decoded (Python
// decodes it), a Content-Transfer-Encoding is compared without surrounding
// blanks (Python keeps trailing ones and then treats "base64 " as unknown),
// and an unquoted parameter value keeps everything up to the next ";", as
// mail clients show it (Python reads "name=Invoice_(123).pdf" as
// "Invoice_" and a comment).
// As in Python, a line ends at LF, CRLF or a lone CR. The corpus test
// (corpus_test.go) compares this reader with Python's on public real-world
// mail.
//
// Only the safety limits make a message unreadable (ErrMalformed): more than
// MaxParts parts, or a header block larger than MaxHeaderBytes.
//
// # Snapshots and streams
//
// A Message reads one snapshot of the message for its life. Open keeps the
// file open, so a file removed (purged) while a run goes on is still read
// whole. Sizes are exact: Attachment.Size is what Message.Open yields. A
// stream reads only its attachment's byte range (ranged reads suit a large
// object or an object store), decodes as it goes (memory stays flat) and
// checks the range's CRC-32C and its decoded size against the index: if the
// message was truncated, rewritten or cannot be read, Read fails with
// ErrChanged or ErrUnreadable before returning the attachment's last byte,
// so a consumer that sends a Content-Length never completes a request with
// other bytes. Message.Check notices most such changes before anything is
// sent (a file's size and modification time; the attachment's first and
// last bytes).
//
// # Sizing without decoding
//
// A base64 part's decoded size follows from its characters alone: n
// alphabet characters before the data end give 3*(n/4) + max(0, n%4-1)
// bytes, whatever the damage. New counts them (eight at a time) instead of
// decoding, so a run without a stored index decodes each attachment once,
// while sending it. Quoted-printable parts are decoded to be counted.
//
// # Index format
//
// An Index is JSON:
//
//	{"version": 1, "size": 48213, "digests": true,
//	 "defects": [{"code": "mbox-from-line", "message": "…"}],
//	 "parts": [
//	  {"path": "1", "header_offset": 512, "offset": 590, "length": 120,
//	   "content_type": "text/plain", "charset": "utf-8", "encoding": "quoted-printable",
//	   "decoding": "quoted-printable", "size": 112, "crc32c": 2771348237,
//	   "sha256": "…", "body": true},
//	  {"path": "2", "header_offset": 730, "offset": 861, "length": 44120,
//	   "content_type": "application/pdf", "disposition": "attachment", "encoding": "base64",
//	   "decoding": "base64", "size": 32592, "crc32c": 911872345, "sha256": "…",
//	   "attachment": {"index": 0, "filename": "nota.pdf", "content_type": "application/pdf"},
//	   "defects": [{"code": "base64-missing-padding", "message": "…"}]}]}
//
// Parts are the leaves in depth-first order with their IMAP-style path;
// offset and length delimit the body as sent (still transfer-encoded),
// header_offset the header; decoding is "identity", "base64" or
// "quoted-printable"; size is the decoded size; crc32c (Castagnoli) covers
// the body as sent; sha256 (of the decoded bytes) is present when the index
// was made by ReadIndex; body marks the text body; attachment makes a part
// an attachment, with its position in message order and the name and type
// it is given. NewIndexed refuses an index of another version or size
// (ErrBadIndex).
//
// # Errors
//
// *IndexError for an attachment the e-mail lacks; ErrUnreadable when the
// .eml cannot be opened or read (or is shorter than its size); ErrMalformed
// beyond the safety limits; ErrChanged when the .eml is not the one first
// read; ErrBadIndex for an index that does not fit. Match them with
// errors.Is and errors.As.
//
// The package is a leaf: it depends on nothing else in this module.
package eml
