package eml

// Defect is a repair the reader made to read a message that does not follow
// the MIME rules: a stable Code for programs and a Message for people.
// Defects of one attachment are listed on it (Attachment.Defects); those of
// the message's structure on the Index.
type Defect struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Defect codes. A code never changes meaning; new ones may be added.
const (
	// DefectMboxFromLine: the message starts with an mbox "From " envelope
	// line, which was skipped.
	DefectMboxFromLine = "mbox-from-line"
	// DefectMisplacedFromLine: an mbox "From " line inside a header was
	// ignored.
	DefectMisplacedFromLine = "misplaced-from-line"
	// DefectHeaderContinuation: a header block starts with a continuation
	// line, which was ignored.
	DefectHeaderContinuation = "header-continuation-first"
	// DefectHeaderWithoutName: a header line starting with ":" was ignored.
	DefectHeaderWithoutName = "header-without-name"
	// DefectMissingHeaderSeparator: a header block is not followed by a blank
	// line; the first line that is not a header field starts the body.
	DefectMissingHeaderSeparator = "missing-header-separator"
	// DefectMultipartWithoutBoundary: a multipart declares no boundary; its
	// body is read as one leaf.
	DefectMultipartWithoutBoundary = "multipart-without-boundary"
	// DefectStartBoundaryNotFound: a multipart's first boundary never
	// appears; its body is read as one leaf.
	DefectStartBoundaryNotFound = "start-boundary-not-found"
	// DefectMissingClosingBoundary: a multipart ends (at the end of the
	// message or at an enclosing multipart's boundary) without its closing
	// boundary; its last part ends there and may be truncated.
	DefectMissingClosingBoundary = "missing-closing-boundary"
	// DefectNestingTooDeep: a multipart nested deeper than MaxDepth is read
	// as one leaf, not descended into.
	DefectNestingTooDeep = "nesting-too-deep"
	// DefectBase64InvalidCharacters: base64 data holds characters outside
	// the alphabet (or stray "="), which were skipped. Line breaks, spaces
	// and tabs are skipped without a defect.
	DefectBase64InvalidCharacters = "base64-invalid-characters"
	// DefectBase64MissingPadding: base64 data ends in the middle of a
	// 4-character group; the complete bytes of the group were kept.
	DefectBase64MissingPadding = "base64-missing-padding"
	// DefectBase64DanglingCharacter: base64 data ends with a single
	// character of a group, which holds no whole byte and was dropped.
	DefectBase64DanglingCharacter = "base64-dangling-character"
	// DefectBase64DataAfterPadding: base64 data continues after the padding
	// that ends it; the rest was ignored.
	DefectBase64DataAfterPadding = "base64-data-after-padding"
	// DefectQuotedPrintableInvalidEscape: an "=" not followed by two hex
	// digits or a line break was kept as written.
	DefectQuotedPrintableInvalidEscape = "quoted-printable-invalid-escape"
	// DefectUnknownTransferEncoding: the Content-Transfer-Encoding is not
	// one this reader knows (7bit, 8bit, binary, quoted-printable, base64);
	// the raw bytes were kept.
	DefectUnknownTransferEncoding = "unknown-transfer-encoding"
)

func defect(code, message string) Defect { return Defect{Code: code, Message: message} }

// addDefect appends d unless a defect with its code is already listed.
func addDefect(list []Defect, d Defect) []Defect {
	for _, x := range list {
		if x.Code == d.Code {
			return list
		}
	}
	return append(list, d)
}
