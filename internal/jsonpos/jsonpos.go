// Package jsonpos parses a JSON document into a tree that remembers where
// every value, key and string came from, so that diagnostics can point at the
// exact bytes of the original document.
//
// Unlike encoding/json it keeps duplicate object keys (and reports them),
// keeps numbers as written, and maps offsets inside decoded strings back
// through escapes (SourceOffset). Parse is the entry point.
package jsonpos

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a Value.
type Kind uint8

// JSON value kinds.
const (
	Null Kind = iota + 1
	Bool
	Number
	String
	Object
	Array
)

var kindNames = [...]string{Null: "null", Bool: "boolean", Number: "number", String: "string", Object: "object", Array: "array"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one JSON value with its byte range [Start, End) in the document.
type Value struct {
	Kind       Kind
	Start, End int
	// Text is the decoded string (String), the number as written (Number),
	// or "true"/"false"/"null".
	Text string
	// Escaped reports whether the string token held escapes, i.e. whether
	// decoded offsets differ from source offsets.
	Escaped bool
	Members []Member // Object, in document order, duplicates kept
	Elems   []*Value // Array
}

// Member is one key/value pair of an object.
type Member struct {
	Key   *Value // a String value: the key with its range
	Value *Value
}

// Get returns the value of the first member named key, or nil.
func (v *Value) Get(key string) *Value {
	for _, m := range v.Members {
		if m.Key.Text == key {
			return m.Value
		}
	}
	return nil
}

// Problem codes reported by Parse.
const (
	CodeSyntax       = "json-syntax"
	CodeDuplicateKey = "json-duplicate-key"
	CodeInvalidUTF8  = "json-invalid-utf8"
	CodeTooDeep      = "json-too-deep"
)

// Problem is a defect of the document at a byte range.
type Problem struct {
	Start, End int
	Code       string
	Message    string
	// Key is set for duplicate keys: the member repeated.
	Key *Value
}

// MaxDepth is how deeply arrays and objects may nest.
const MaxDepth = 64

// Parse reads doc as one JSON value. Syntax errors and excessive nesting end
// the parse (fatal is true, root may be nil); duplicate keys and invalid
// UTF-8 in strings are reported and parsing goes on.
func Parse(doc []byte) (root *Value, problems []Problem, fatal bool) {
	p := &parser{src: string(doc)}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(stop)
			if !ok {
				panic(r)
			}
			problems = append(p.problems, Problem(se))
			root, fatal = nil, true
		}
	}()
	p.skipSpace()
	root = p.value(0)
	p.skipSpace()
	if p.i < len(p.src) {
		p.fail(p.i, p.i+1, "unexpected %s after the end of the document", p.describe(p.i))
	}
	return root, p.problems, false
}

type stop Problem

type parser struct {
	src      string
	i        int
	problems []Problem
	slab     []Value
}

func (p *parser) fail(start, end int, format string, args ...any) {
	p.failCode(CodeSyntax, start, end, format, args...)
}

func (p *parser) failCode(code string, start, end int, format string, args ...any) {
	if end > len(p.src) {
		end = len(p.src)
	}
	if start > end {
		start = end
	}
	panic(stop{Start: start, End: end, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) alloc() *Value {
	if len(p.slab) == 0 {
		p.slab = make([]Value, 32)
	}
	v := &p.slab[0]
	p.slab = p.slab[1:]
	return v
}

func (p *parser) describe(i int) string {
	if i >= len(p.src) {
		return "end of document"
	}
	r, n := utf8.DecodeRuneInString(p.src[i:])
	if r == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("byte 0x%02x", p.src[i])
	}
	return strconv.QuoteRune(r)
}

func (p *parser) skipSpace() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) *Value {
	if p.i >= len(p.src) {
		p.fail(p.i, p.i, "unexpected end of document: a value is missing")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", Bool)
	case c == 'f':
		return p.literal("false", Bool)
	case c == 'n':
		return p.literal("null", Null)
	default:
		p.fail(p.i, p.i+1, "unexpected %s: expected a JSON value", p.describe(p.i))
		return nil
	}
}

func (p *parser) literal(word string, k Kind) *Value {
	if len(p.src)-p.i < len(word) || p.src[p.i:p.i+len(word)] != word {
		end := p.i + 1
		for end < len(p.src) && isWordByte(p.src[end]) {
			end++
		}
		p.fail(p.i, end, "invalid literal %q: expected true, false, null, a number, a string, an object or an array", p.src[p.i:end])
	}
	v := p.alloc()
	*v = Value{Kind: k, Start: p.i, End: p.i + len(word), Text: word}
	p.i += len(word)
	return v
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func (p *parser) number() *Value {
	start := p.i
	s := p.src
	i := p.i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		p.fail(start, i+1, "invalid number: a digit must follow '-'")
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.fail(start, i+1, "invalid number %q: a digit must follow the decimal point", s[start:i])
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.fail(start, i+1, "invalid number %q: the exponent needs digits", s[start:i])
		}
	}
	if i < len(s) && (isWordByte(s[i]) || s[i] == '.') {
		p.fail(start, i+1, "invalid number: unexpected %s after %q", p.describe(i), s[start:i])
	}
	p.i = i
	v := p.alloc()
	*v = Value{Kind: Number, Start: start, End: i, Text: s[start:i]}
	return v
}

func (p *parser) string() *Value {
	start := p.i
	s := p.src
	i := start + 1
	// Fast path: no escapes, ASCII or valid UTF-8.
	for i < len(s) {
		c := s[i]
		if c == '"' {
			text := s[start+1 : i]
			if !utf8.ValidString(text) {
				p.invalidUTF8(start+1, text)
			}
			p.i = i + 1
			v := p.alloc()
			*v = Value{Kind: String, Start: start, End: i + 1, Text: text}
			return v
		}
		if c == '\\' {
			return p.escapedString(start)
		}
		if c < 0x20 {
			p.fail(i, i+1, "invalid control character %s in string: write it as an escape such as \\n", p.describe(i))
		}
		i++
	}
	p.fail(start, len(s), "unterminated string")
	return nil
}

func (p *parser) invalidUTF8(base int, text string) {
	for j := 0; j < len(text); {
		r, n := utf8.DecodeRuneInString(text[j:])
		if r == utf8.RuneError && n <= 1 {
			p.problems = append(p.problems, Problem{Start: base + j, End: base + j + 1, Code: CodeInvalidUTF8,
				Message: fmt.Sprintf("invalid UTF-8 byte 0x%02x in string: the document must be UTF-8", text[j])})
			return
		}
		j += n
	}
}

func (p *parser) escapedString(start int) *Value {
	s := p.src
	buf := make([]byte, 0, 64)
	i := start + 1
	for {
		if i >= len(s) {
			p.fail(start, len(s), "unterminated string")
		}
		c := s[i]
		switch {
		case c == '"':
			text := string(buf)
			if !utf8.ValidString(s[start+1 : i]) {
				p.invalidUTF8(start+1, s[start+1:i])
			}
			p.i = i + 1
			v := p.alloc()
			*v = Value{Kind: String, Start: start, End: i + 1, Text: text, Escaped: true}
			return v
		case c < 0x20:
			p.fail(i, i+1, "invalid control character %s in string: write it as an escape such as \\n", p.describe(i))
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		r, n, ok := DecodeEscape(s[i:])
		if !ok {
			p.fail(i, i+n, "invalid escape %q in string: allowed are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX", s[i:i+n])
		}
		buf = utf8.AppendRune(buf, r)
		i += n
	}
}

// DecodeEscape decodes the JSON escape at the start of s (s[0] == '\\'): the
// character, the bytes it takes and whether it is complete and valid. A \u
// surrogate pair is one escape; a lone surrogate decodes to U+FFFD, as
// encoding/json reads it.
func DecodeEscape(s string) (rune, int, bool) {
	if len(s) < 2 {
		return 0, len(s), false
	}
	switch s[1] {
	case '"':
		return '"', 2, true
	case '\\':
		return '\\', 2, true
	case '/':
		return '/', 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, min(len(s), 6), false
		}
		if utf16.IsSurrogate(r) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if r2, ok := hex4(s[8:]); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return d, 12, true
					}
				}
			}
			return utf8.RuneError, 6, true
		}
		return r, 6, true
	}
	return 0, 2, false
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *parser) object(depth int) *Value {
	if depth > MaxDepth {
		p.failCode(CodeTooDeep, p.i, p.i+1, "nesting deeper than %d levels", MaxDepth)
	}
	v := p.alloc()
	*v = Value{Kind: Object, Start: p.i}
	p.i++
	p.skipSpace()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		v.End = p.i
		return v
	}
	var seen map[string]bool
	for {
		p.skipSpace()
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			p.fail(p.i, p.i+1, "unexpected %s: expected an object key in double quotes", p.describe(p.i))
		}
		key := p.string()
		p.skipSpace()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			p.fail(p.i, p.i+1, "unexpected %s: expected ':' after object key %q", p.describe(p.i), key.Text)
		}
		p.i++
		p.skipSpace()
		val := p.value(depth)
		if len(v.Members) > 0 {
			dup := false
			if len(v.Members) < 8 && seen == nil {
				for _, m := range v.Members {
					if m.Key.Text == key.Text {
						dup = true
						break
					}
				}
			} else {
				if seen == nil {
					seen = make(map[string]bool, 16)
					for _, m := range v.Members {
						seen[m.Key.Text] = true
					}
				}
				dup = seen[key.Text]
			}
			if dup {
				p.problems = append(p.problems, Problem{Start: key.Start, End: key.End, Code: CodeDuplicateKey, Key: key,
					Message: fmt.Sprintf("duplicate key %q: each key may appear once in an object", key.Text)})
			}
		}
		if seen != nil {
			seen[key.Text] = true
		}
		v.Members = append(v.Members, Member{Key: key, Value: val})
		p.skipSpace()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.src) && p.src[p.i] == '}' {
			p.i++
			v.End = p.i
			return v
		}
		p.fail(p.i, p.i+1, "unexpected %s: expected ',' or '}' in object", p.describe(p.i))
	}
}

func (p *parser) array(depth int) *Value {
	if depth > MaxDepth {
		p.failCode(CodeTooDeep, p.i, p.i+1, "nesting deeper than %d levels", MaxDepth)
	}
	v := p.alloc()
	*v = Value{Kind: Array, Start: p.i}
	p.i++
	p.skipSpace()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		v.End = p.i
		return v
	}
	for {
		p.skipSpace()
		v.Elems = append(v.Elems, p.value(depth))
		p.skipSpace()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.src) && p.src[p.i] == ']' {
			p.i++
			v.End = p.i
			return v
		}
		p.fail(p.i, p.i+1, "unexpected %s: expected ',' or ']' in array", p.describe(p.i))
	}
}

// SourceOffset maps a byte offset in the decoded text of string value v to
// the offset in the document of the character that produced it.
func SourceOffset(doc []byte, v *Value, decoded int) int {
	if v.Kind != String {
		return v.Start
	}
	if !v.Escaped {
		return v.Start + 1 + decoded
	}
	raw := doc[v.Start+1 : v.End-1]
	d := 0
	for i := 0; i < len(raw); {
		if d >= decoded {
			return v.Start + 1 + i
		}
		if raw[i] != '\\' {
			d++
			i++
			continue
		}
		r, n, _ := DecodeEscape(string(raw[i:min(len(raw), i+12)]))
		d += utf8.RuneLen(r)
		i += n
	}
	return v.End - 1
}
