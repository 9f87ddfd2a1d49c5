package resolve

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kobana/workflow/internal/jsonstr"
)

// MinSubstring is the length, in bytes, from which a secret value is
// redacted wherever it occurs, even inside a word. A shorter value ("C",
// "42") would otherwise rewrite text the platform or a receiver wrote
// ("Content-Type"), so it is redacted only where it stands as a whole word:
// not directly after or before a letter, a digit, a non-ASCII character or
// a redaction marker. A JSON number or boolean equal to it is redacted
// whatever its length.
const MinSubstring = 4

// MinReplaced is the shortest content Replace accepts: shorter text (a
// three-byte attachment) is too likely to occur by chance to be removed
// from everything recorded.
const MinReplaced = 16

// Placeholder returns the redacted form of the secret key.
func Placeholder(key string) string { return "[redacted secrets." + key + "]" }

// Redactor removes secret values — and the bytes of attachments a run sent —
// from anything persisted or logged: a run record, an error message, a log
// line. It is safe for concurrent use; the zero value knows no secret.
//
// Each value is found in every form it is known to take on the way back
// (see the package documentation): as written, percent-encoded, JSON-string
// escaped, and, in a JSON document, as a number or boolean. Redaction
// never rewrites its own markers (a secret's "[redacted secrets.KEY]", an
// attachment's description) and is idempotent: redacting its output again
// changes nothing.
type Redactor struct {
	mu      sync.Mutex
	entries map[string]string // value → replacement; each replacement is a marker
	markers map[string]bool   // other text redaction never rewrites
	snap    *redaction        // built from entries and markers on first use
}

// NewRedactor returns a Redactor that already knows every secret of src when
// src can list them (SecretLister).
func NewRedactor(src Secrets) *Redactor {
	r := &Redactor{}
	if l, ok := src.(SecretLister); ok {
		for k, v := range l.AllSecrets() {
			r.Add(k, v)
		}
	}
	return r
}

// Add makes value redacted as the secret key from now on. An empty value
// has nothing to redact, but its marker is still one (a request that used
// the secret records it).
func (r *Redactor) Add(key, value string) {
	if value == "" {
		r.AddMarker(Placeholder(key))
		return
	}
	r.mu.Lock()
	old, known := r.entries[value]
	r.mu.Unlock()
	if known && isPlaceholderOf(old, key) {
		return // already known: a run resolves the same secret many times
	}
	r.set(value, Placeholder(key))
}

// isPlaceholderOf reports whether s is Placeholder(key), without building it.
func isPlaceholderOf(s, key string) bool {
	const prefix = "[redacted secrets."
	return len(s) == len(prefix)+len(key)+1 && s[:len(prefix)] == prefix && s[len(prefix):len(s)-1] == key && s[len(s)-1] == ']'
}

// Replace makes value replaced by replacement from now on, for content that
// must not be persisted but is not a secret, such as the bytes of an
// attachment the run sent, should a receiver echo them. The replacement
// becomes a marker (see AddMarker). Values shorter than MinReplaced are
// ignored.
func (r *Redactor) Replace(value, replacement string) {
	if len(value) < MinReplaced {
		return
	}
	r.set(value, replacement)
}

// AddMarker makes text a marker: text the platform wrote into a record in
// place of something else (an attachment's description), which redaction
// leaves as it is. Whatever text holds must already be redacted.
func (r *Redactor) AddMarker(text string) {
	if text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.markers == nil {
		r.markers = map[string]bool{}
	}
	if !r.markers[text] {
		r.markers[text] = true
		r.snap = nil
	}
}

func (r *Redactor) set(value, replacement string) {
	if value == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[string]string{}
	}
	if old, ok := r.entries[value]; ok && old <= replacement {
		return
	}
	r.entries[value] = replacement
	r.snap = nil
}

// String returns s with every known value redacted, in every covered form.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	x := r.get()
	if x == nil {
		return s
	}
	out, changed := x.text(nil, s, false)
	if !changed {
		return s
	}
	return string(out)
}

// JSON returns the JSON document doc with every known value redacted: in
// strings (keys too) in every covered form, and as a whole number or
// boolean, which then becomes the marker as a string. The document keeps
// its layout, key order and duplicate keys; a lone UTF-16 surrogate escape
// becomes \ufffd, as it is read (see Response). ok is false when doc is not
// a single valid JSON value; it is then returned unchanged.
func (r *Redactor) JSON(doc []byte) (out []byte, ok bool) {
	var x *redaction
	if r != nil {
		x = r.get()
	}
	return x.json(doc)
}

func (r *Redactor) get() *redaction {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.entries) == 0 {
		return nil
	}
	if r.snap == nil {
		r.snap = newRedaction(r.entries, r.markers)
	}
	return r.snap
}

// redaction is an immutable snapshot of what a Redactor knows.
type redaction struct {
	values  []entry // longest first
	markers []string
	start   [256]bool // bytes a value or a marker may start with
	mstart  [256]bool // bytes a marker may start with
}

type entry struct {
	value, repl string
	short       bool // shorter than MinSubstring: whole words only
}

func newRedaction(entries map[string]string, markers map[string]bool) *redaction {
	x := &redaction{}
	x.values = make([]entry, 0, len(entries))
	x.markers = make([]string, 0, len(entries)+len(markers))
	for v, repl := range entries {
		x.values = append(x.values, entry{value: v, repl: repl, short: len(v) < MinSubstring})
		x.start[v[0]] = true
		if v[0] == ' ' {
			x.start['+'] = true
		}
		x.markers = append(x.markers, repl)
	}
	slices.SortFunc(x.values, func(a, b entry) int {
		if c := cmp.Compare(len(b.value), len(a.value)); c != 0 {
			return c
		}
		return strings.Compare(a.value, b.value)
	})
	for m := range markers {
		x.markers = append(x.markers, m)
	}
	for _, m := range x.markers {
		x.start[m[0]] = true
		x.mstart[m[0]] = true
	}
	slices.Sort(x.markers)
	x.markers = slices.Compact(x.markers)
	x.start['%'] = true  // a percent-encoded first byte
	x.start['\\'] = true // a JSON-escaped first character
	return x
}

// markerAt returns the length of the marker s starts with at i, or 0.
func (x *redaction) markerAt(s string, i int) int {
	if !x.mstart[s[i]] {
		return 0
	}
	for _, m := range x.markers {
		if strings.HasPrefix(s[i:], m) {
			return len(m)
		}
	}
	return 0
}

// text appends s with every value redacted to dst and reports true, or, when
// s holds no value, returns dst as it was and false. In JSON mode s is the
// contents of a JSON string literal: a backslash always starts an escape,
// matches never start or end inside one, and replacements are escaped.
func (x *redaction) text(dst []byte, s string, jsonMode bool) ([]byte, bool) {
	if x == nil {
		return dst, false
	}
	changed := false
	last := 0
	// glued says the character before s[i] is a letter, a digit, a
	// non-ASCII character or a marker, so a short value cannot start at i.
	// In JSON mode it is the character an escape stands for.
	glued := false
	for i := 0; i < len(s); {
		c := s[i]
		if !x.start[c] {
			glued = isWordByte(c)
			i++
			continue
		}
		if n := x.markerAt(s, i); n > 0 {
			i += n
			glued = true
			continue
		}
		if end, repl, ok := x.matchAny(s, i, glued, jsonMode); ok {
			dst = append(dst, s[last:i]...)
			if jsonMode {
				dst = jsonstr.Append(dst, repl)
			} else {
				dst = append(dst, repl...)
			}
			i, last, changed, glued = end, end, true, true
			continue
		}
		if jsonMode && c == '\\' {
			n := escapeLen(s, i)
			_, dec := decodeAt(s, i)
			glued = dec.n > 0 && isWordByte(dec.b[0])
			i += n
			continue
		}
		glued = isWordByte(c)
		i++
	}
	if !changed {
		return dst, false
	}
	return append(dst, s[last:]...), true
}

// matchAny finds the longest known value at s[i] in any covered form.
func (x *redaction) matchAny(s string, i int, glued, jsonMode bool) (end int, repl string, ok bool) {
	c := s[i]
	var first byte // the byte an escape at s[i] stands for, if it is one
	escaped := false
	if c == '%' || c == '\\' {
		if n, dec := decodeAt(s, i); n > 0 {
			first, escaped = dec.b[0], true
		}
	}
	for k := range x.values {
		e := &x.values[k]
		v0 := e.value[0]
		if c != v0 && !(escaped && first == v0) && (c != '+' || v0 != ' ') {
			continue // cannot start here in any form
		}
		m := matcher{x: x, s: s, v: e.value, json: jsonMode}
		end := m.match(i)
		if end < 0 {
			continue
		}
		if e.short && (glued || x.gluedAfter(s, end, jsonMode)) {
			continue
		}
		return end, e.repl, true
	}
	return 0, "", false
}

// gluedAfter reports whether a letter, a digit, a non-ASCII character or a
// marker follows at s[end] (in JSON mode, the character an escape there
// stands for), so a short value cannot end there.
func (x *redaction) gluedAfter(s string, end int, jsonMode bool) bool {
	if end >= len(s) {
		return false
	}
	if jsonMode && s[end] == '\\' {
		_, dec := decodeAt(s, end)
		return dec.n > 0 && isWordByte(dec.b[0])
	}
	return isWordByte(s[end]) || x.markerAt(s, end) > 0
}

func isWordByte(c byte) bool {
	return c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// matcher matches one value against text in which each of its bytes may be
// written as itself, percent-encoded (%XX, any case; '+' for a space) or,
// character by character, JSON-escaped.
type matcher struct {
	x    *redaction
	s, v string
	json bool
}

// match returns the end in s of the value written from s[i], or -1. Where
// a '%' or '\' of the value could be read in the text either as written or
// as the start of an escape that stands for it, the text is read one way
// throughout, then, if that fails, the other: a value is found when each
// such character is written the same way (all as written, or all escaped),
// which is how encoders write, and the work stays linear in the value's
// length whatever the text.
func (m *matcher) match(i int) int {
	end, ambiguous := m.read(i, true)
	if end < 0 && ambiguous {
		end, _ = m.read(i, false)
	}
	return end
}

// read matches the value from s[i], preferring, where both readings fit,
// the character as written (preferRaw) or the escape. ambiguous reports
// whether such a choice was met.
func (m *matcher) read(i int, preferRaw bool) (end int, ambiguous bool) {
	s, v := m.s, m.v
	for j := 0; j < len(v); {
		if i >= len(s) {
			return -1, ambiguous
		}
		c := s[i]
		switch c {
		case '%', '\\':
			n, dec := decodeAt(s, i)
			isDecoded := n > 0 && dec.prefixOf(v[j:])
			raw := c == v[j] && (c == '%' || !m.json)
			if isDecoded && raw {
				ambiguous = true
				isDecoded = !preferRaw
			}
			switch {
			case isDecoded:
				i, j = i+n, j+dec.n
			case raw:
				i, j = i+1, j+1
			default:
				return -1, ambiguous
			}
		case '+':
			if v[j] != ' ' && v[j] != '+' {
				return -1, ambiguous
			}
			i, j = i+1, j+1
		default:
			if c != v[j] || c == '[' && m.x.markerAt(s, i) > 0 {
				return -1, ambiguous
			}
			i, j = i+1, j+1
		}
	}
	return i, ambiguous
}

// decoded is the UTF-8 text an escape stands for: at most one character.
type decoded struct {
	b [utf8.UTFMax]byte
	n int
}

// prefixOf reports whether the decoded text starts v.
func (d *decoded) prefixOf(v string) bool {
	return d.n > 0 && len(v) >= d.n && string(d.b[:d.n]) == v[:d.n]
}

// decodeAt decodes the escape at s[i] — %XX, or a JSON escape (\", \\, \/,
// \b, \f, \n, \r, \t, \uXXXX, a surrogate pair) — returning its length in s
// and the UTF-8 bytes it stands for; n is 0 when s[i] starts none. A lone
// surrogate stands for U+FFFD, as it is read.
func decodeAt(s string, i int) (n int, dec decoded) {
	one := func(n int, c byte) (int, decoded) {
		return n, decoded{b: [utf8.UTFMax]byte{c}, n: 1}
	}
	if s[i] == '%' {
		if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			return one(3, unhex(s[i+1])<<4|unhex(s[i+2]))
		}
		return 0, dec
	}
	if i+1 >= len(s) {
		return 0, dec
	}
	switch s[i+1] {
	case '"', '\\', '/':
		return one(2, s[i+1])
	case 'b':
		return one(2, '\b')
	case 'f':
		return one(2, '\f')
	case 'n':
		return one(2, '\n')
	case 'r':
		return one(2, '\r')
	case 't':
		return one(2, '\t')
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return 0, dec
		}
		n = 6
		if utf16.IsSurrogate(r) {
			hi := r
			r = utf8.RuneError // a lone surrogate, unless its pair follows
			if hi < 0xdc00 && i+11 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				if lo, ok := hex4(s, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
					n, r = 12, utf16.DecodeRune(hi, lo)
				}
			}
		}
		dec.n = utf8.EncodeRune(dec.b[:], r)
		return n, dec
	}
	return 0, dec
}

// escapeLen is the length of the JSON escape at s[i] (at least 1).
func escapeLen(s string, i int) int {
	if i+1 < len(s) && s[i+1] == 'u' && i+5 < len(s) {
		return 6
	}
	return min(2, len(s)-i)
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		if !isHex(s[k]) {
			return 0, false
		}
		r = r<<4 | rune(unhex(s[k]))
	}
	return r, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// json redacts a JSON document token by token, keeping everything else as
// written (see Redactor.JSON). x may be nil: the document is then only
// checked and its lone surrogates replaced.
func (x *redaction) json(doc []byte) ([]byte, bool) {
	if !utf8.Valid(doc) || !json.Valid(doc) {
		return doc, false
	}
	var out []byte
	changed := false
	last := 0
	var sdoc string // doc as a string, made once, if a string may hold something
	for i := 0; i < len(doc); {
		c := doc[i]
		var end int
		var repl []byte
		switch {
		case c == '"':
			end = stringEnd(doc, i)
			if x == nil && bytes.IndexByte(doc[i+1:end-1], '\\') < 0 {
				i = end
				continue
			}
			if sdoc == "" {
				sdoc = string(doc)
			}
			content := sdoc[i+1 : end-1]
			fixed := content
			if strings.Contains(content, `\u`) {
				fixed = fixSurrogates(content)
			}
			red, did := x.text(nil, fixed, true)
			if !did {
				if fixed == content {
					i = end
					continue
				}
				red = []byte(fixed)
			}
			repl = append(append(append(make([]byte, 0, len(red)+2), '"'), red...), '"')
		case c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n':
			end = i + 1
			for end < len(doc) && isTokenByte(doc[end]) {
				end++
			}
			if v, ok := x.whole(string(doc[i:end])); ok {
				repl = append(append(append(make([]byte, 0, len(v)+2), '"'), jsonstr.Append(nil, v)...), '"')
			} else {
				i = end
				continue
			}
		default:
			i++
			continue
		}
		out = append(out, doc[last:i]...)
		out = append(out, repl...)
		last, i, changed = end, end, true
	}
	if !changed {
		return doc, true
	}
	return append(out, doc[last:]...), true
}

// whole returns the replacement of a JSON number or literal equal to a
// known value.
func (x *redaction) whole(token string) (string, bool) {
	if x == nil {
		return "", false
	}
	for _, e := range x.values {
		if e.value == token {
			return e.repl, true
		}
	}
	return "", false
}

func isTokenByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// stringEnd returns the offset just after the string literal starting at
// doc[i] (a valid document).
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(doc)
}

// fixSurrogates replaces each \u escape of a lone UTF-16 surrogate in the
// contents of a JSON string with \ufffd, the character it is read as.
func fixSurrogates(s string) string {
	var b []byte
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 >= len(s) || s[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex4(s, i+2)
		if !ok || !utf16.IsSurrogate(r) {
			i += 5
			continue
		}
		if r < 0xdc00 && i+11 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if r2, ok := hex4(s, i+8); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
				i += 11
				continue
			}
		}
		b = append(b, s[last:i]...)
		b = append(b, `\ufffd`...)
		last = i + 6
		i += 5
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}
