package eml

import (
	"bytes"
	"strings"
)

// field is one header field: its name as written and its value unfolded
// (line breaks removed, the whitespace that followed them kept).
type field struct {
	name, value string
}

// header is a part's header fields in order.
type header []field

// get returns the value of the first field called name (compared without
// regard to case), or "".
func (h header) get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.name, name) {
			return f.value
		}
	}
	return ""
}

// has reports whether a field called name is present.
func (h header) has(name string) bool {
	for _, f := range h {
		if strings.EqualFold(f.name, name) {
			return true
		}
	}
	return false
}

// isHeaderLine reports whether line can belong to a header block: a field
// ("Name:" with printable name characters, possibly none), a continuation
// (leading space or tab) or an mbox "From " line. Anything else ends the
// header; this is the rule of Python's email package, so a message missing
// its blank line after the header loses nothing.
func isHeaderLine(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	if line[0] == ' ' || line[0] == '\t' || bytes.HasPrefix(line, []byte("From ")) {
		return true
	}
	for _, c := range line {
		switch {
		case c == ':':
			return true
		case c < '!' || c > '~':
			return false
		}
	}
	return false
}

// parseHeader turns the lines of a header block (each without its line
// ending) into fields. first says the block is at the start of an entity,
// where a leading "From " line is an mbox envelope and is dropped. It
// returns the fields and what it had to repair.
func parseHeader(lines [][]byte) (header, []Defect) {
	var h header
	var defects []Defect
	var cur []byte
	have := false
	flush := func() {
		if have {
			name, value, _ := bytes.Cut(cur, []byte(":"))
			h = append(h, field{name: string(bytes.TrimRight(name, " \t")), value: strings.TrimSpace(string(value))})
		}
		cur, have = nil, false
	}
	for i, line := range lines {
		if line[0] == ' ' || line[0] == '\t' {
			if !have {
				defects = append(defects, defect(DefectHeaderContinuation, "the header starts with a continuation line; it was ignored"))
				continue
			}
			cur = append(cur, line...)
			continue
		}
		flush()
		if bytes.HasPrefix(line, []byte("From ")) {
			if i > 0 {
				defects = append(defects, defect(DefectMisplacedFromLine, "an mbox \"From \" line inside the header was ignored"))
			}
			continue
		}
		if line[0] == ':' {
			defects = append(defects, defect(DefectHeaderWithoutName, "a header line without a field name was ignored"))
			continue
		}
		cur = append([]byte(nil), line...)
		have = true
	}
	flush()
	return h, defects
}
