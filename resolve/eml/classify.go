package eml

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxFilenameBytes bounds a filename; longer names are shortened keeping
// their extension.
const maxFilenameBytes = 255

// partInfo is what a leaf's header says about it.
type partInfo struct {
	attachment  bool
	body        bool   // a text body part: text/plain or text/html where the body goes
	rfc822      bool   // an attached message, kept whole
	filename    string // sanitized filename from the header, "" if none
	declared    string // the declared media type, lower-cased, "" if none or invalid
	contentType string // the declared media type if useful, else inferred
	charset     string
	disposition string
	encoding    string // Content-Transfer-Encoding, lower-cased and trimmed
}

// classify decides whether a leaf is an attachment and describes it. A leaf
// is an attachment when its disposition is "attachment", when it is an
// attached message (message/rfc822 or message/global below the root), or when
// it has a filename and is not a text body part (text/plain or text/html
// where the message body goes: the message itself, any part of a
// multipart/alternative there, the first part of any other multipart there).
// A multipart read as a leaf (no boundary, nesting too deep) is an
// attachment only by its disposition or filename.
func classify(l *leaf) partInfo {
	declared, ctParams := parseHeaderValue(l.header.get("Content-Type"))
	if !isMediaType(declared) {
		declared = ""
	}
	if declared == "" && l.inDigest && !l.header.has("Content-Type") {
		declared = "message/rfc822" // the default inside a multipart/digest
	}
	disposition, dParams := parseHeaderValue(l.header.get("Content-Disposition"))

	name := dParams["filename"]
	if name == "" {
		name = ctParams["name"]
	}
	info := partInfo{
		filename:    sanitizeFilename(decodeWords(name)),
		declared:    declared,
		charset:     strings.ToLower(strings.TrimSpace(ctParams["charset"])),
		disposition: disposition,
		encoding:    strings.ToLower(strings.TrimSpace(l.header.get("Content-Transfer-Encoding"))),
		rfc822:      !l.root && !l.multipart && (declared == "message/rfc822" || declared == "message/global"),
	}

	textType := declared
	if textType == "" && !l.header.has("Content-Type") {
		textType = "text/plain" // RFC 2045 default
	}
	isBodyText := l.bodyPos && !l.multipart && (textType == "text/plain" || textType == "text/html")
	info.attachment = disposition == "attachment" || info.rfc822 || (info.filename != "" && !isBodyText)
	info.body = isBodyText && !info.attachment

	switch {
	case declared != "" && !uninformativeTypes[declared]:
		info.contentType = declared
	default:
		info.contentType = InferType(info.filename)
	}
	return info
}

// isMediaType reports whether s is a "type/subtype" of token characters.
func isMediaType(s string) bool {
	typ, sub, ok := strings.Cut(s, "/")
	return ok && isToken(typ) && isToken(sub)
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?=`, c) >= 0 {
			return false
		}
	}
	return true
}

// sanitizeFilename makes a sender's filename safe to hand on: only the last
// path element is kept, control and bidirectional-override characters are
// removed, the text is put in Unicode NFC (macOS mailers send decomposed
// accents), surrounding space is trimmed and the name is shortened to
// maxFilenameBytes keeping its extension. "." and ".." become "".
func sanitizeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || isBidiControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(norm.NFC.String(name))
	if name == "." || name == ".." {
		return ""
	}
	return shorten(name, maxFilenameBytes)
}

// isBidiControl reports the invisible characters that reorder text, used to
// disguise an extension ("invoice\u202Efdp.exe").
func isBidiControl(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' ||
		('\u202A' <= r && r <= '\u202E') || ('\u2066' <= r && r <= '\u2069')
}

// shorten cuts name to at most max bytes on a rune boundary, keeping a short
// extension.
func shorten(name string, max int) string {
	if len(name) <= max {
		return name
	}
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 && len(name)-i <= 16 {
		ext = name[i:]
		name = name[:i]
	}
	keep := max - len(ext)
	for keep > 0 && !utf8.RuneStart(name[keep]) {
		keep--
	}
	return strings.TrimSpace(name[:keep]) + ext
}

// subjectFilename turns an attached message's Subject into a filename
// ("NF 123/2026" → "NF 123_2026.eml"), or "" if it has none.
func subjectFilename(subject string) string {
	subject = strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':', '*', '?', '"', '<', '>', '|':
			return '_'
		}
		return r
	}, decodeWords(subject))
	name := sanitizeFilename(shorten(strings.TrimSpace(subject), maxFilenameBytes-len(".eml")))
	if name == "" {
		return ""
	}
	return name + ".eml"
}
