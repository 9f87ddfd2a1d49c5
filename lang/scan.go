package lang

// scanReference recognises the placeholder grammar of grammar.go on its
// accepting path without building a parser: "${{", optional spaces or tabs,
// names joined by single dots, optional spaces or tabs, "}}". It returns the
// names with their absolute spans, or the offset in ph of the first byte the
// grammar does not allow (bad >= 0). The differential fuzz test FuzzGrammar
// holds it to the participle grammar, which stays the definition of the
// language and the source of expectations in syntax errors.
func scanReference(ph string, base int) (path []string, spans []Span, bad int) {
	end := len(ph) - len(close)
	i := skipBlank(ph, len(open), end)
	n := 1
	for k := i; k < end; k++ {
		if ph[k] == '.' {
			n++
		}
	}
	path = make([]string, 0, n)
	spans = make([]Span, 0, n)
	for {
		start := i
		for i < end && isNameByte(ph[i]) {
			i++
		}
		if i == start {
			return nil, nil, i
		}
		path = append(path, ph[start:i])
		spans = append(spans, Span{base + start, base + i})
		if i < end && ph[i] == '.' {
			i++
			continue
		}
		j := skipBlank(ph, i, end)
		if j != end {
			if j > i && (ph[j] == '.' || isNameByte(ph[j])) {
				return nil, nil, i // a space between names or before a dot
			}
			return nil, nil, j
		}
		return path, spans, -1
	}
}

func skipBlank(s string, i, end int) int {
	for i < end && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
