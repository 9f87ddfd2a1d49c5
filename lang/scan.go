package lang

import "strings"

// The scanner is Parse's fast path: it reads what the grammar of grammar.go
// accepts without building a parser, and stops at the first thing the
// grammar would reject, reporting where. It never writes an error message:
// when it stops, the grammar reads the string again. FuzzGrammar holds it to
// the grammar: the same Template and errors for every string it accepts, and
// the same first error position for every string it rejects.

// scanTemplate reads s, whose first "${{" is at i. It returns bad = -1 and the
// Template with the errors of the namespace rules when every placeholder is
// well formed; otherwise bad is the offset in s of the first byte the grammar
// rejects, and the rest is meaningless.
func scanTemplate(s string, i int) (Template, ErrorList, int) {
	var b builder
	b.src = s
	n := strings.Count(s[i:], open)
	b.grow(n, n+strings.Count(s[i:], "."))
	pos := 0
	for i >= 0 && !b.stopped {
		start := pos + i
		b.text(s[pos:start])
		j := strings.Index(s[start+len(open):], close)
		if j < 0 {
			return Template{}, nil, start // unterminated
		}
		end := start + len(open) + j + len(close)
		if !b.countPlaceholder(start) {
			break
		}
		k := len(b.names)
		var bad int
		b.names, bad = scanReference(s[start:end], b.names)
		if bad >= 0 {
			return Template{}, nil, start + bad
		}
		b.placeholder(start, end, b.names[k:len(b.names):len(b.names)])
		pos = end
		i = strings.Index(s[pos:], open)
	}
	if pos < len(s) {
		b.text(s[pos:])
	}
	t, errs := b.result()
	return t, errs, -1
}

// scanReference reads the reference of the placeholder ph ("${{" … "}}")
// into names, appending each name. It returns the grown slice and bad = -1
// when ph is well formed, or the offset in ph of the first byte the grammar
// rejects. The reference read is names[len(names before):].
//
// What it accepts: "${{", optional blanks (spaces or tabs), names of
// [A-Za-z0-9_-] joined by single dots, optional blanks, "}}"; or only blanks
// between the braces (an empty placeholder, which the namespace rules reject).
func scanReference(ph string, names []string) ([]string, int) {
	end := len(ph) - len(close)
	i := skipBlank(ph, len(open), end)
	if i == end {
		return names, -1
	}
	for {
		start := i
		for i < end && isNameByte(ph[i]) {
			i++
		}
		if i == start {
			return names, i // a name is missing: a dot, a blank or another byte is here
		}
		names = append(names, ph[start:i])
		if i < end && ph[i] == '.' {
			i++
			continue
		}
		if skipBlank(ph, i, end) != end {
			return names, i // neither a dot nor the closing blanks and "}}"
		}
		return names, -1
	}
}

func skipBlank(s string, i, end int) int {
	for i < end && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// IsName reports whether s is a name a reference spells as one of its
// dot-separated segments: one or more letters, digits, '_' and '-' (ASCII).
// A secret's key, a fact's key, a header name or a body key a reference can
// reach is such a name.
func IsName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
