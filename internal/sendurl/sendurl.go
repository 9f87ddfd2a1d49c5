package sendurl

import (
	"fmt"
	"strings"

	"golang.org/x/net/idna"
)

// Piece marks the run [Start, End) of the URL text that the record shows as
// Record instead, such as a secret's value shown as its redacted form.
type Piece struct {
	Start, End int
	Record     string
}

// ControlError reports a control character in the URL text: it cannot be
// sent, and percent-encoding it would change what the author meant.
type ControlError struct {
	// Offset is the byte offset of the character in the URL text.
	Offset int
	// Char is the character.
	Char byte
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("the url contains %s at byte %d", ControlName(e.Char), e.Offset)
}

// ControlName names a control character for a person: "a tab",
// "a line feed (LF)", "a control character (U+001B)".
func ControlName(c byte) string {
	switch c {
	case '\t':
		return "a tab"
	case '\n':
		return "a line feed (LF)"
	case '\r':
		return "a carriage return (CR)"
	case 0:
		return "a NUL byte"
	}
	return fmt.Sprintf("a control character (U+%04X)", c)
}

// HostError reports a non-ASCII host name that has no ASCII (punycode)
// form, such as one with characters IDNA does not allow.
type HostError struct {
	Err error
}

func (e *HostError) Error() string {
	return "the host name is not a valid international domain name: " + e.Err.Error()
}

func (e *HostError) Unwrap() error { return e.Err }

// IsControl reports whether c is a control character a URL may not hold.
func IsControl(c byte) bool { return c < 0x20 || c == 0x7f }

// UnsafeByte reports whether c may never appear in a URL as written and is
// sent percent-encoded: space, ", <, >, \, ^, `, {, |, } and non-ASCII bytes.
// (Control characters are refused instead, and a '%' is encoded only when
// it does not start a %XX escape.)
func UnsafeByte(c byte) bool {
	return c >= 0x80 || unsafeASCII[c]
}

var unsafeASCII = [128]bool{' ': true, '"': true, '<': true, '>': true, '\\': true, '^': true, '`': true, '{': true, '|': true, '}': true}

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// LoneEscape reports whether the '%' at s[i] does not start a %XX escape
// and is therefore sent as %25.
func LoneEscape(s string, i int) bool {
	return s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]))
}

// HostSpan returns the byte range [start, end) of the host (with its port,
// if any) in the URL text s written as scheme://[userinfo@]host[:port]…,
// or -1, -1 when s has no such authority.
func HostSpan(s string) (start, end int) {
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !validScheme(s[:colon]) || !strings.HasPrefix(s[colon+1:], "//") {
		return -1, -1
	}
	as := colon + 3
	ae := len(s)
	if i := strings.IndexAny(s[as:], "/?#"); i >= 0 {
		ae = as + i
	}
	return as + strings.LastIndexByte(s[as:ae], '@') + 1, ae
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// ASCIIHost returns the host (with its port, if any) as it is sent: a
// non-ASCII name in its ASCII (punycode) form, as golang.org/x/net/idna's
// lookup profile gives it, or a *HostError when it has none.
func ASCIIHost(hostport string) (string, error) {
	if isASCII(hostport) {
		return hostport, nil
	}
	name, port := splitPort(hostport)
	a, err := idna.Lookup.ToASCII(name)
	if err != nil {
		return "", &HostError{Err: err}
	}
	return a + port, nil
}

// splitPort splits ":port" (digits only) off a host; a bracketed IPv6
// literal keeps its colons.
func splitPort(hostport string) (host, port string) {
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 || strings.HasSuffix(hostport, "]") {
		return hostport, ""
	}
	for j := i + 1; j < len(hostport); j++ {
		if hostport[j] < '0' || hostport[j] > '9' {
			return hostport, ""
		}
	}
	return hostport[:i], hostport[i:]
}

// text is one URL being built.
type text struct {
	s      string
	cut    int // where the fragment starts (len(s) without one)
	hs, he int // host span, or -1
	host   string
	// host is the ASCII form of s[hs:he] when that is not ASCII, else "".
}

// Build returns the URL to send for the URL text s and the text its record
// shows, in which each of the pieces (sorted, not overlapping) is replaced
// by its Record. It fails with *ControlError or *HostError.
func Build(s string, pieces []Piece) (live, record string, err error) {
	for i := 0; i < len(s); i++ {
		if IsControl(s[i]) {
			return "", "", &ControlError{Offset: i, Char: s[i]}
		}
	}
	u := text{s: s, cut: len(s)}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		u.cut = i
	}
	u.hs, u.he = HostSpan(s[:u.cut])
	if u.hs >= 0 && !isASCII(s[u.hs:u.he]) {
		if u.host, err = ASCIIHost(s[u.hs:u.he]); err != nil {
			return "", "", err
		}
	}
	asWritten := u.cut == len(s) && u.host == "" && !needsEncoding(s)
	if asWritten {
		live = s
	} else {
		var stack [256]byte
		live = string(u.appendRange(stack[:0], 0, u.cut, true))
	}
	switch {
	case len(pieces) == 0:
		return live, live, nil
	case asWritten:
		return live, ReplacePieces(s, pieces), nil
	}
	return live, u.record(pieces), nil
}

// ReplacePieces returns s with each of pieces (sorted, not overlapping)
// replaced by its Record, as written: how the record shows text that could
// not be made a URL.
func ReplacePieces(s string, pieces []Piece) string {
	n := len(s)
	for _, p := range pieces {
		n += len(p.Record) - (p.End - p.Start)
	}
	var b strings.Builder
	b.Grow(n)
	at := 0
	for _, p := range pieces {
		b.WriteString(s[at:p.Start])
		b.WriteString(p.Record)
		at = p.End
	}
	b.WriteString(s[at:])
	return b.String()
}

func needsEncoding(s string) bool {
	for i := 0; i < len(s); i++ {
		if UnsafeByte(s[i]) || s[i] == '%' && LoneEscape(s, i) {
			return true
		}
	}
	return false
}

// appendRange appends s[a:b] as sent. When wholeHost is set and the range
// holds the host, the host's ASCII form replaces it; otherwise the labels
// of the host inside the range are converted one by one.
func (u *text) appendRange(dst []byte, a, b int, wholeHost bool) []byte {
	for i := a; i < b; {
		if u.host != "" && i >= u.hs && i < u.he {
			if wholeHost {
				dst = append(dst, u.host...)
				i = u.he
				continue
			}
			end := min(b, u.he)
			dst = u.appendLabels(dst, i, end)
			i = end
			continue
		}
		c := u.s[i]
		switch {
		case UnsafeByte(c), c == '%' && LoneEscape(u.s, i):
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		default:
			dst = append(dst, c)
		}
		i++
	}
	return dst
}

// appendLabels converts the dot-separated labels of part of a host whose
// other parts the record does not show.
func (u *text) appendLabels(dst []byte, a, b int) []byte {
	for i, label := range strings.Split(u.s[a:b], ".") {
		if i > 0 {
			dst = append(dst, '.')
		}
		if !isASCII(label) {
			if l, err := idna.Lookup.ToASCII(label); err == nil {
				label = l
			}
		}
		for j := 0; j < len(label); j++ {
			if c := label[j]; UnsafeByte(c) {
				dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return dst
}

// record builds the record text: the URL as sent with each piece shown as
// its Record. A piece the fragment starts in is shown whole; pieces after
// the fragment's start are not shown.
func (u *text) record(pieces []Piece) string {
	whole := true // the host is shown whole: no piece covers part of it
	for _, p := range pieces {
		if p.Start < u.he && p.End > u.hs {
			whole = false
		}
	}
	var stack [256]byte
	dst := stack[:0]
	at := 0
	for _, p := range pieces {
		if u.cut < len(u.s) && p.Start >= u.cut {
			break // in the fragment, which is not sent
		}
		dst = u.appendRange(dst, at, p.Start, whole)
		dst = append(dst, p.Record...)
		at = p.End
	}
	if at < u.cut {
		dst = u.appendRange(dst, at, u.cut, whole)
	}
	return string(dst)
}
