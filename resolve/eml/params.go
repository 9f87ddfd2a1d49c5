package eml

import (
	"cmp"
	"io"
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
)

// parseHeaderValue splits a Content-Type or Content-Disposition value into its
// lower-cased value ("application/pdf", "attachment") and its parameters
// (lower-cased names, values with RFC 2231 encodings and continuations
// decoded). mime.ParseMediaType is authoritative; a lenient parser fills in
// what it rejects or drops, because mail in the wild carries unquoted spaces,
// duplicate parameters and RFC 2231 values in charsets other than UTF-8.
func parseHeaderValue(s string) (string, map[string]string) {
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	value, params, err := mime.ParseMediaType(s)
	if err != nil {
		value, params, _ = parseLenient(s)
		return value, params
	}
	if strings.Contains(s, "*") {
		// ParseMediaType drops RFC 2231 values in charsets other than UTF-8
		// and US-ASCII (keeping a plain fallback if there is one), yet the
		// extended value is the one the sender meant.
		_, more, extended := parseLenient(s)
		for k := range extended {
			params[k] = more[k]
		}
	}
	return value, params
}

// parseLenient parses "value; name=value; ..." accepting what real mailers
// write: unquoted values with spaces, duplicate names (the first wins),
// unterminated quotes, and RFC 2231 values in any charset. It also reports
// which parameters were given in RFC 2231 extended form.
func parseLenient(s string) (string, map[string]string, map[string]bool) {
	value, rest, _ := strings.Cut(s, ";")
	value = strings.ToLower(strings.TrimSpace(value))

	type piece struct {
		n   int
		ext bool
		v   string
	}
	plain := map[string]string{}
	extended := map[string]string{}
	pieces := map[string][]piece{}
	for rest != "" {
		var name, v string
		var ok bool
		name, v, rest, ok = nextParam(rest)
		if !ok {
			continue
		}
		base, suffix, star := strings.Cut(name, "*")
		switch {
		case !star:
			if _, dup := plain[name]; !dup {
				plain[name] = v
			}
		case suffix == "":
			if _, dup := extended[base]; !dup {
				extended[base] = v
			}
		default:
			num, ext := strings.CutSuffix(suffix, "*")
			n, err := strconv.Atoi(num)
			if err != nil || n < 0 || n > 999 || (num != "0" && num[0] == '0') {
				continue
			}
			pieces[base] = append(pieces[base], piece{n, ext, v})
		}
	}

	params := make(map[string]string, len(plain)+len(extended)+len(pieces))
	fromExtended := make(map[string]bool, len(extended)+len(pieces))
	for k, v := range plain {
		params[k] = v
	}
	for k, ps := range pieces {
		slices.SortStableFunc(ps, func(a, b piece) int { return cmp.Compare(a.n, b.n) })
		var raw []byte
		charset := ""
		for i, p := range ps {
			if p.n != i {
				break // a gap or a duplicate ends the value
			}
			v := p.v
			if p.ext {
				if i == 0 {
					var ok bool
					if charset, v, ok = splitCharset(v); !ok {
						break
					}
				}
				raw = append(raw, percentDecode(v)...)
			} else {
				raw = append(raw, v...)
			}
		}
		if raw != nil {
			params[k] = decodeCharset(charset, raw)
			fromExtended[k] = true
		}
	}
	for k, v := range extended {
		if charset, text, ok := splitCharset(v); ok {
			params[k] = decodeCharset(charset, percentDecode(text))
			fromExtended[k] = true
		}
	}
	return value, params, fromExtended
}

// nextParam reads one "name=value" from s (after any leading ';' and spaces)
// and returns the lower-cased name, the unquoted value and what follows.
func nextParam(s string) (name, value, rest string, ok bool) {
	s = strings.TrimLeft(s, "; \t\r\n")
	eq := strings.IndexAny(s, "=;")
	if eq < 0 {
		return "", "", "", false
	}
	if s[eq] == ';' {
		return "", "", s[eq:], false
	}
	name = strings.ToLower(strings.TrimSpace(s[:eq]))
	s = strings.TrimLeft(s[eq+1:], " \t\r\n")
	if strings.HasPrefix(s, `"`) {
		var b strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		}
		value = b.String()
		s = s[min(i+1, len(s)):]
		if j := strings.IndexByte(s, ';'); j >= 0 {
			s = s[j:]
		} else {
			s = ""
		}
	} else {
		j := strings.IndexByte(s, ';')
		if j < 0 {
			j = len(s)
		}
		value = strings.TrimSpace(s[:j])
		s = s[j:]
	}
	return name, value, s, name != ""
}

// splitCharset splits an RFC 2231 "charset'language'text" value.
func splitCharset(v string) (charset, text string, ok bool) {
	charset, rest, ok1 := strings.Cut(v, "'")
	_, text, ok2 := strings.Cut(rest, "'")
	return strings.TrimSpace(charset), text, ok1 && ok2
}

// percentDecode decodes %XX escapes, leaving malformed ones as they are.
func percentDecode(s string) []byte {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return b
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

// decodeCharset converts text in the named charset to UTF-8. Charset labels
// are resolved as the WHATWG Encoding Standard does (as browsers and mail
// clients do); an unknown label, or bytes that are not valid in an empty or
// UTF-8 label, are read as Windows-1252, the most common legacy mail charset.
func decodeCharset(charset string, b []byte) string {
	switch strings.ToLower(charset) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return fixUTF8(string(b))
	}
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return fixUTF8(string(b))
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return fixUTF8(string(b))
	}
	return string(out)
}

// fixUTF8 returns s unchanged if it is valid UTF-8. Text that is mostly
// UTF-8 (more well-formed multi-byte characters than invalid bytes, as in a
// name a mailer cut in the middle of a character) keeps its UTF-8 and loses
// the invalid bytes; anything else is read as Windows-1252 (raw 8-bit
// header bytes are otherwise nearly always Latin).
func fixUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	multi, invalid := 0, 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			invalid++
		case n > 1:
			multi++
		}
		i += n
	}
	if multi > invalid {
		return strings.ToValidUTF8(s, "")
	}
	out, err := charmap.Windows1252.NewDecoder().String(s)
	if err != nil {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return out
}

// wordDecoder decodes RFC 2047 encoded-words in any charset htmlindex knows.
var wordDecoder = mime.WordDecoder{
	CharsetReader: func(charset string, input io.Reader) (io.Reader, error) {
		enc, err := htmlindex.Get(charset)
		if err != nil {
			return nil, err
		}
		return enc.NewDecoder().Reader(input), nil
	},
}

// decodeWords decodes the RFC 2047 encoded-words in s; text it cannot decode
// is kept as written. Invalid UTF-8 is read as Windows-1252.
func decodeWords(s string) string {
	if strings.Contains(s, "=?") {
		if d, err := wordDecoder.DecodeHeader(s); err == nil {
			s = d
		}
	}
	return fixUTF8(s)
}
