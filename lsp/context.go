package lsp

import (
	"strings"

	"github.com/kobana/workflow/internal/jsonpos"
)

// cursor is what surrounds an offset of a document. It is read from the text
// before the offset only (and the rest of a string the offset is in), so that
// it is right while the document is being typed and is not JSON yet.
type cursor struct {
	// path leads from the document to the value the cursor is in or at: an
	// object key, or an array index.
	path []pathElem
	// inString is set when the cursor is inside a string token (after its
	// opening quote, up to its closing quote).
	inString bool
	// isKey is set when that string, or the place the cursor is at, is an
	// object key.
	isKey bool
	// decoded is the string's text before the cursor, escapes decoded;
	// source[i] is the document offset of decoded byte i, and
	// source[len(decoded)] the cursor.
	decoded string
	source  []int
	// keys are the keys already written in the innermost object before the
	// cursor.
	keys []string
	// steps are the workflow's steps that begin before the cursor, with the
	// label, method and url written so far.
	steps []stepSummary
}

// pathElem is one step of a path: an object key or an array index.
type pathElem struct {
	key   string
	index int
	isKey bool
}

// stepSummary is what a completion shows about an earlier step.
type stepSummary struct {
	label, method, url string
}

// stepIndex returns the index of the workflow step holding the cursor, or -1.
func (c *cursor) stepIndex() int {
	if len(c.path) >= 2 && c.path[0].isKey && c.path[0].key == "workflow" && !c.path[1].isKey {
		return c.path[1].index
	}
	return -1
}

// stepPath returns the path inside the step holding the cursor ("url",
// "headers", "Authorization"…), or nil when the cursor is not in a step.
func (c *cursor) stepPath() []pathElem {
	if c.stepIndex() < 0 {
		return nil
	}
	return c.path[2:]
}

// frame is an open object or array while reading.
type frame struct {
	array bool
	index int
	key   string
	// state of an object: expecting a key, a colon, a value, or a comma.
	state int
	keys  []string
}

const (
	wantKey = iota
	wantColon
	wantValue
	wantComma
)

// readCursor reads doc up to off.
func readCursor(doc string, off int) *cursor {
	off = max(0, min(off, len(doc)))
	var stack []*frame
	var steps []stepSummary
	c := &cursor{}
	pathOf := func() []pathElem {
		var p []pathElem
		for _, f := range stack {
			switch {
			case f.array:
				p = append(p, pathElem{index: f.index})
			case f.state == wantValue || f.state == wantComma:
				p = append(p, pathElem{key: f.key, isKey: true})
			}
		}
		return p
	}
	// value marks that a value was read in the innermost container.
	value := func() {
		if len(stack) == 0 {
			return
		}
		if f := stack[len(stack)-1]; !f.array {
			f.state = wantComma
		}
	}
	for i := 0; i < off; {
		switch ch := doc[i]; ch {
		case '{', '[':
			if len(stack) == 2 && stack[0].key == "workflow" && stack[1].array && ch == '{' && !stack[0].array {
				steps = append(steps, stepSummary{})
			}
			stack = append(stack, &frame{array: ch == '['})
			i++
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
				value()
			}
			i++
		case ':':
			if len(stack) > 0 && !stack[len(stack)-1].array {
				stack[len(stack)-1].state = wantValue
			}
			i++
		case ',':
			if len(stack) > 0 {
				f := stack[len(stack)-1]
				if f.array {
					f.index++
				} else {
					f.state = wantKey
				}
			}
			i++
		case '"':
			end, closed := stringEnd(doc, i)
			var top *frame
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			}
			isKey := top != nil && !top.array && top.state == wantKey
			if off < end || !closed && off <= end {
				// The cursor is inside this string.
				c.inString, c.isKey = true, isKey
				c.decoded, c.source = decodePrefix(doc, i+1, off)
				c.path = pathOf()
				if top != nil && !top.array {
					c.keys = top.keys
				}
				c.steps = steps
				return c
			}
			if !closed {
				i = end // a string cut by a line break: read on after it
				value()
				continue
			}
			text := decodeString(doc[i+1 : end-1])
			switch {
			case isKey:
				top.key, top.state = text, wantColon
				top.keys = append(top.keys, text)
			default:
				// A string value: remember what it says about a step.
				if len(stack) == 3 && !stack[0].array && stack[0].key == "workflow" && stack[1].array && !stack[2].array && len(steps) > 0 {
					s := &steps[len(steps)-1]
					switch stack[2].key {
					case "label":
						s.label = text
					case "method":
						s.method = text
					case "url":
						s.url = text
					}
				}
				value()
			}
			i = end
		default:
			if isWordByte(ch) || ch == '-' || ch == '+' || ch == '.' {
				for i < off && (isWordByte(doc[i]) || strings.IndexByte("-+.", doc[i]) >= 0) {
					i++
				}
				if i < off {
					value()
				}
				continue
			}
			i++
		}
	}
	c.path = pathOf()
	if len(stack) > 0 {
		if f := stack[len(stack)-1]; !f.array {
			c.isKey = f.state == wantKey
			c.keys = f.keys
		}
	}
	c.steps = steps
	return c
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// stringEnd returns the offset just after the string token starting at the
// quote doc[start], and whether it is closed on its line (a string cannot
// hold a raw line break, so one being typed ends at the end of its line).
func stringEnd(doc string, start int) (int, bool) {
	for i := start + 1; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		case '\n', '\r':
			return i, false
		}
	}
	return len(doc), false
}

// decodePrefix decodes the string content doc[from:to] and maps each decoded
// byte to its offset in doc. An escape cut by the cursor is left out.
func decodePrefix(doc string, from, to int) (string, []int) {
	var b strings.Builder
	var src []int
	for i := from; i < to; {
		if doc[i] != '\\' {
			b.WriteByte(doc[i])
			src = append(src, i)
			i++
			continue
		}
		r, n, ok := jsonpos.DecodeEscape(doc[i:to])
		if !ok {
			break
		}
		start := b.Len()
		b.WriteRune(r)
		for range b.Len() - start {
			src = append(src, i)
		}
		i += n
	}
	src = append(src, to)
	return b.String(), src
}

// decodeString decodes the content of a closed string token; an invalid
// escape ends it.
func decodeString(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	text, _ := decodePrefix(raw, 0, len(raw))
	return text
}
