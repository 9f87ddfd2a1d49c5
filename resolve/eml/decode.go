package eml

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"

	simd "github.com/segmentio/asm/base64"
)

// Decodings a part's body can need. The index records which one a part uses.
const (
	decodeIdentity = "identity"
	decodeBase64   = "base64"
	decodeQP       = "quoted-printable"
)

// decodingFor returns the decoding for a lower-cased, trimmed
// Content-Transfer-Encoding and, for one this reader does not know, the
// defect saying the raw bytes are kept.
func decodingFor(cte string) (string, *Defect) {
	switch cte {
	case "", "7bit", "8bit", "binary":
		return decodeIdentity, nil
	case "base64":
		return decodeBase64, nil
	case "quoted-printable":
		return decodeQP, nil
	}
	d := defect(DefectUnknownTransferEncoding, fmt.Sprintf("unknown Content-Transfer-Encoding %q: the raw bytes are kept", cte))
	return decodeIdentity, &d
}

// decoder undoes a transfer encoding on a body fed to it in pieces. In
// counting mode (dst nil throughout) it only counts the decoded bytes; the
// count, the bytes and the defects are the same in both modes.
type decoder interface {
	// decode consumes src and appends the decoded bytes to dst. src is not
	// modified or retained.
	decode(dst, src []byte) []byte
	// finish ends the body and appends any bytes still held.
	finish(dst []byte) []byte
	// size is the number of decoded bytes so far.
	size() int64
	// defects lists the repairs made so far.
	defects() []Defect
}

func newDecoder(decoding string) decoder {
	switch decoding {
	case decodeBase64:
		return &b64Decoder{}
	case decodeQP:
		return &qpDecoder{}
	}
	return &identityDecoder{}
}

// errUnknownDecoding is returned for an index naming a decoding this
// version does not know.
var errUnknownDecoding = errors.New("unknown decoding")

func checkDecoding(d string) error {
	switch d {
	case decodeIdentity, decodeBase64, decodeQP:
		return nil
	}
	return fmt.Errorf("%w %q", errUnknownDecoding, d)
}

// identityDecoder passes bytes through.
type identityDecoder struct{ n int64 }

func (d *identityDecoder) decode(dst, src []byte) []byte {
	d.n += int64(len(src))
	if dst == nil {
		return nil
	}
	return append(dst, src...)
}

func (d *identityDecoder) finish(dst []byte) []byte { return dst }
func (d *identityDecoder) size() int64              { return d.n }
func (d *identityDecoder) defects() []Defect        { return nil }

// b64Decoder decodes base64 leniently, the way Python's email package does
// (binascii.a2b_base64 without strict mode): characters outside the
// alphabet are skipped; "=" ends the data once it completes a group that
// holds at least two characters, and is skipped anywhere else; data that
// stop in the middle of a group keep the bytes the group completes. Unlike
// Python, a single dangling character is dropped rather than returning the
// whole part undecoded.
//
// The decoded size is a function of the characters alone: n alphabet
// characters before the end give 3*(n/4) + max(0, n%4-1) bytes. Counting
// mode computes it without decoding; decoding mode drops line breaks and
// hands whole groups to a SIMD decoder (github.com/segmentio/asm/base64,
// which gives encoding/base64's results several times faster), falling
// back to a character-at-a-time loop only around irregular characters.
type b64Decoder struct {
	n       int64  // alphabet characters consumed before the end
	pads    int    // "=" seen since the last alphabet character, in a group of 2 or 3
	done    bool   // padding ended the data
	acc     uint32 // bits of the current group (slow path)
	invalid bool
	after   bool
	scratch []byte // decoding mode: a chunk without its line breaks
}

// b64Value maps a character to its 6-bit value, or 0xff.
var b64Value = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = byte(i)
	}
	return t
}()

func isBlank(c byte) bool { return c == '\r' || c == '\n' || c == ' ' || c == '\t' }

// step consumes one character the slow way.
func (d *b64Decoder) step(dst []byte, c byte) []byte {
	if d.done {
		if !isBlank(c) {
			d.after = true
		}
		return dst
	}
	v := b64Value[c]
	switch {
	case v < 64:
		if d.pads > 0 {
			d.invalid = true // an "=" that did not end the data
			d.pads = 0
		}
		q := d.n & 3
		d.n++
		d.acc = d.acc<<6 | uint32(v)
		if dst != nil {
			switch q {
			case 1:
				dst = append(dst, byte(d.acc>>4))
				d.acc &= 0x0f
			case 2:
				dst = append(dst, byte(d.acc>>2))
				d.acc &= 0x03
			case 3:
				dst = append(dst, byte(d.acc))
				d.acc = 0
			}
		}
	case c == '=':
		if q := int(d.n & 3); q >= 2 {
			d.pads++
			if q+d.pads >= 4 {
				d.done = true
			}
		} else {
			d.invalid = true
		}
	case isBlank(c):
	default:
		d.invalid = true
	}
	return dst
}

func (d *b64Decoder) decode(dst, src []byte) []byte {
	if dst == nil {
		d.count(src)
		return nil
	}
	for len(src) > 0 {
		chunk := src[:min(len(src), 16<<10)]
		src = src[len(chunk):]
		if cap(d.scratch) < len(chunk) {
			d.scratch = make([]byte, 0, len(chunk))
		}
		d.scratch = appendUnbroken(d.scratch[:0], chunk)
		dst = d.decodeStripped(dst, d.scratch)
	}
	return dst
}

// count is counting mode. Eight bytes at a time, alphabet characters are
// counted and line breaks skipped in bulk (b64Weight makes the sum of a
// word's weights its number of alphabet characters, or 16 or more when it
// holds anything else); only a word holding "=", blanks or stray
// characters is taken byte by byte.
func (d *b64Decoder) count(s []byte) {
	for len(s) > 0 {
		if !d.done && d.pads == 0 {
			i := 0
			for ; i+8 <= len(s); i += 8 {
				w := s[i : i+8 : i+8]
				sum := b64Weight[w[0]] + b64Weight[w[1]] + b64Weight[w[2]] + b64Weight[w[3]] +
					b64Weight[w[4]] + b64Weight[w[5]] + b64Weight[w[6]] + b64Weight[w[7]]
				if sum >= 16 {
					break
				}
				d.n += int64(sum)
			}
			s = s[i:]
			if i > 0 {
				continue
			}
			for _, c := range s[:min(8, len(s))] {
				s = s[1:]
				d.step(nil, c)
				if d.done || d.pads != 0 {
					break
				}
			}
			continue
		}
		d.step(nil, s[0])
		s = s[1:]
	}
}

// b64Weight is 1 for an alphabet character, 0 for CR and LF, 16 for
// anything else.
var b64Weight = func() (t [256]uint8) {
	for c := range t {
		switch {
		case b64Value[c] < 64:
			t[c] = 1
		case c == '\r' || c == '\n':
		default:
			t[c] = 16
		}
	}
	return t
}()

// decodeStripped decodes characters with the blanks already removed.
func (d *b64Decoder) decodeStripped(dst, s []byte) []byte {
	for len(s) > 0 {
		if d.done {
			for _, c := range s {
				dst = d.step(dst, c)
			}
			return dst
		}
		if d.n&3 == 0 && d.pads == 0 && len(s) >= 4 {
			k := len(s) / 4 * 4
			at := len(dst)
			dst = grow(dst, k/4*3+8)
			m, err := simd.StdEncoding.Decode(dst[at:], s[:k])
			if err != nil {
				// Where the data go wrong, as encoding/base64 counts it.
				m, err = base64.StdEncoding.Decode(dst[at:], s[:k])
			}
			if err == nil {
				dst = dst[:at+m]
				pad := bytes.Count(s[k-2:k], []byte("="))
				d.n += int64(k - pad)
				if pad > 0 {
					d.done = true
				}
				s = s[k:]
				continue
			}
			dst = dst[:at]
			// Decode the groups before the irregular one in bulk, then take
			// the slow path past it.
			var bad int
			if ce, ok := err.(base64.CorruptInputError); ok {
				bad = int(ce)
			}
			if good := bad / 4 * 4; good >= 4 {
				m, err := base64.StdEncoding.Decode(dst[at:at+good/4*3], s[:good])
				if err == nil && !bytes.Contains(s[:good], []byte("=")) {
					dst = dst[:at+m]
					d.n += int64(good)
					s = s[good:]
					bad -= good
				}
			}
			for i := 0; len(s) > 0 && (i <= bad || d.n&3 != 0 || d.pads != 0) && !d.done; i++ {
				dst = d.step(dst, s[0])
				s = s[1:]
			}
			continue
		}
		dst = d.step(dst, s[0])
		s = s[1:]
	}
	return dst
}

// grow extends dst by n bytes of capacity and length.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		dst = append(dst[:cap(dst)], make([]byte, n-(cap(dst)-len(dst)))...)[:len(dst)]
	}
	return dst[:len(dst)+n]
}

// appendUnbroken appends s to dst without its line breaks (LF and the CR
// of a CRLF), a line at a time. Blanks inside a line stay: they are rare,
// and the decoder skips them on its slow path.
func appendUnbroken(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			return append(dst, s...)
		}
		line := s[:i]
		if i > 0 && line[i-1] == '\r' {
			line = line[:i-1]
		}
		dst = append(dst, line...)
		s = s[i+1:]
	}
	return dst
}

func (d *b64Decoder) finish(dst []byte) []byte { return dst }

func (d *b64Decoder) size() int64 {
	return 3*(d.n/4) + max(0, d.n%4-1)
}

func (d *b64Decoder) defects() []Defect {
	var out []Defect
	if d.invalid {
		out = append(out, defect(DefectBase64InvalidCharacters, "characters outside the base64 alphabet were skipped"))
	}
	if !d.done {
		switch d.n % 4 {
		case 1:
			out = append(out, defect(DefectBase64DanglingCharacter, "the base64 data end with a single character of a group, which was dropped"))
		case 2, 3:
			out = append(out, defect(DefectBase64MissingPadding, "the base64 data end without their padding; the last group was decoded as far as it goes"))
		}
	}
	if d.after {
		out = append(out, defect(DefectBase64DataAfterPadding, "data after the base64 padding were ignored"))
	}
	return out
}

// qpDecoder decodes quoted-printable exactly as Python's quopri (binascii
// a2b_qp) does: "=XX" (hex in either case) is a byte, "=" before a line
// break is a soft break (after "=\r", everything up to the next LF goes),
// "==" is one "=", an "=" at the very end disappears, and any other "=" is
// kept as written. Line breaks and trailing blanks are kept as they are.
type qpDecoder struct {
	n       int64
	state   uint8 // qpText, qpEq, qpHex, qpSkip
	hi      byte  // first hex digit, in state qpHex
	invalid bool
}

const (
	qpText = iota
	qpEq
	qpHex
	qpSkip
)

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexValue(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func (d *qpDecoder) emit(dst []byte, b ...byte) []byte {
	d.n += int64(len(b))
	if dst == nil {
		return nil
	}
	return append(dst, b...)
}

func (d *qpDecoder) decode(dst, src []byte) []byte {
	for len(src) > 0 {
		if d.state == qpText {
			i := bytes.IndexByte(src, '=')
			if i < 0 {
				i = len(src)
			}
			d.n += int64(i)
			if dst != nil {
				dst = append(dst, src[:i]...)
			}
			if i == len(src) {
				return dst
			}
			d.state = qpEq
			src = src[i+1:]
			continue
		}
		c := src[0]
		src = src[1:]
		switch d.state {
		case qpEq:
			switch {
			case c == '\n':
				d.state = qpText
			case c == '\r':
				d.state = qpSkip
			case c == '=':
				dst = d.emit(dst, '=')
				d.invalid = true
				d.state = qpText
			case isHexDigit(c):
				d.hi = c
				d.state = qpHex
			default:
				dst = d.emit(dst, '=', c)
				d.invalid = true
				d.state = qpText
			}
		case qpHex:
			if isHexDigit(c) {
				dst = d.emit(dst, hexValue(d.hi)<<4|hexValue(c))
				d.state = qpText
				continue
			}
			dst = d.emit(dst, '=', d.hi)
			d.invalid = true
			d.state = qpText
			if c == '=' {
				d.state = qpEq
			} else {
				dst = d.emit(dst, c)
			}
		case qpSkip:
			if c == '\n' {
				d.state = qpText
			}
		}
	}
	return dst
}

func (d *qpDecoder) finish(dst []byte) []byte {
	if d.state == qpHex {
		dst = d.emit(dst, '=', d.hi)
		d.invalid = true
	}
	d.state = qpText
	return dst
}

func (d *qpDecoder) size() int64 { return d.n }

func (d *qpDecoder) defects() []Defect {
	if d.invalid {
		return []Defect{defect(DefectQuotedPrintableInvalidEscape, `an "=" not followed by two hex digits or a line break was kept as written`)}
	}
	return nil
}
