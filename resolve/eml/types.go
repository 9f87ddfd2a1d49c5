package eml

import (
	"path"
	"strings"
)

// octetStream is the media type of bytes nobody described.
const octetStream = "application/octet-stream"

// extensionTypes maps a lower-case file extension (without the dot) to a media
// type. Where several extensions share a type, the first listed is the one
// used to name an attachment that has no filename. The table is part of the
// program, so inference gives the same answer on every machine.
var extensionTypes = [...]struct{ ext, typ string }{
	// Documents.
	{"pdf", "application/pdf"},
	{"xml", "application/xml"},
	{"json", "application/json"},
	{"csv", "text/csv"},
	{"tsv", "text/tab-separated-values"},
	{"txt", "text/plain"},
	{"text", "text/plain"},
	{"log", "text/plain"},
	{"ret", "text/plain"}, // CNAB return file
	{"rem", "text/plain"}, // CNAB remittance file
	{"html", "text/html"},
	{"htm", "text/html"},
	{"xhtml", "application/xhtml+xml"},
	{"md", "text/markdown"},
	{"yaml", "application/yaml"},
	{"yml", "application/yaml"},
	{"rtf", "application/rtf"},
	{"epub", "application/epub+zip"},
	{"ofx", "application/x-ofx"},
	{"ics", "text/calendar"},
	{"vcf", "text/vcard"},
	{"eml", "message/rfc822"},
	{"msg", "application/vnd.ms-outlook"},
	// Office suites.
	{"doc", "application/msword"},
	{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	{"xls", "application/vnd.ms-excel"},
	{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
	{"ppt", "application/vnd.ms-powerpoint"},
	{"pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	{"odt", "application/vnd.oasis.opendocument.text"},
	{"ods", "application/vnd.oasis.opendocument.spreadsheet"},
	{"odp", "application/vnd.oasis.opendocument.presentation"},
	{"pages", "application/vnd.apple.pages"},
	{"numbers", "application/vnd.apple.numbers"},
	{"key", "application/vnd.apple.keynote"},
	// Images.
	{"png", "image/png"},
	{"jpg", "image/jpeg"},
	{"jpeg", "image/jpeg"},
	{"jpe", "image/jpeg"},
	{"jfif", "image/jpeg"},
	{"gif", "image/gif"},
	{"webp", "image/webp"},
	{"svg", "image/svg+xml"},
	{"tif", "image/tiff"},
	{"tiff", "image/tiff"},
	{"bmp", "image/bmp"},
	{"heic", "image/heic"},
	{"heif", "image/heif"},
	{"avif", "image/avif"},
	{"ico", "image/vnd.microsoft.icon"},
	// Archives.
	{"zip", "application/zip"},
	{"gz", "application/gzip"},
	{"tgz", "application/gzip"},
	{"7z", "application/x-7z-compressed"},
	{"rar", "application/vnd.rar"},
	{"tar", "application/x-tar"},
	{"bz2", "application/x-bzip2"},
	{"xz", "application/x-xz"},
	// Audio and video.
	{"mp3", "audio/mpeg"},
	{"m4a", "audio/mp4"},
	{"wav", "audio/wav"},
	{"ogg", "audio/ogg"},
	{"opus", "audio/opus"},
	{"mp4", "video/mp4"},
	{"mov", "video/quicktime"},
	{"avi", "video/x-msvideo"},
	{"webm", "video/webm"},
	// Signatures and certificates.
	{"p7s", "application/pkcs7-signature"},
	{"p7m", "application/pkcs7-mime"},
	{"cer", "application/pkix-cert"},
	{"crt", "application/pkix-cert"},
	{"pfx", "application/x-pkcs12"},
	{"p12", "application/x-pkcs12"},
}

var (
	typeByExt = make(map[string]string, len(extensionTypes))
	extByType = make(map[string]string, len(extensionTypes))
)

func init() {
	for _, e := range extensionTypes {
		typeByExt[e.ext] = e.typ
		if _, ok := extByType[e.typ]; !ok {
			extByType[e.typ] = e.ext
		}
	}
}

// InferType returns the media type for a filename's extension, compared
// case-insensitively, from a table built into this package (never the host's
// mime database). An unknown or missing extension gives
// "application/octet-stream".
func InferType(filename string) string {
	ext := path.Ext(filename)
	if len(ext) < 2 {
		return octetStream
	}
	if t, ok := typeByExt[strings.ToLower(ext[1:])]; ok {
		return t
	}
	return octetStream
}

// extensionFor returns ".ext" for a media type in the table, or "".
func extensionFor(mediaType string) string {
	if e, ok := extByType[mediaType]; ok {
		return "." + e
	}
	return ""
}

// uninformativeTypes are media types that say no more than "some bytes";
// an attachment declared with one of them gets its type from its extension.
var uninformativeTypes = map[string]bool{
	octetStream:                  true,
	"application/x-octet-stream": true,
	"binary/octet-stream":        true,
	"application/binary":         true,
	"application/unknown":        true,
	"application/x-unknown":      true,
	"application/download":       true,
	"application/x-download":     true,
	"application/force-download": true,
}
