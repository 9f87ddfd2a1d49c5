package lint

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/kobana/workflow/compile"
)

// TextOptions adjusts the text format.
type TextOptions struct {
	// NoSnippet leaves out the quoted source line and its underline.
	NoSnippet bool
	// NoSummary leaves out the closing "N errors, M warnings in K files" line.
	NoSummary bool
	// MaxWidth is the widest source line quoted, in terminal columns; longer
	// lines (a document on one line) are clipped around the range. Zero
	// means 120.
	MaxWidth int
	// Redact, when set, rewrites what is quoted from a document — messages
	// and source lines — before it is printed (kobana run hides secret
	// values with it). The underline follows the rewritten line: a
	// replacement that overlaps the range is underlined whole.
	Redact func(string) string
}

const defaultMaxWidth = 120

// WriteText prints each diagnostic as
//
//	FILE:LINE:COL: SEVERITY: MESSAGE [CODE]
//	   3 |   "headers": {"Host": "x"}
//	     |               ^~~~~~
//
// followed by one summary line. Reports whose file could not be read are
// skipped (the caller says why); they are counted in the summary.
func WriteText(w io.Writer, reports []Report, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	for _, r := range reports {
		if r.Err != nil {
			continue
		}
		for _, d := range r.Diagnostics {
			msg := d.Message
			if opts.Redact != nil {
				msg = opts.Redact(msg)
			}
			fmt.Fprintf(bw, "%s:%d:%d: %s: %s [%s]\n", sanitize(r.File), d.Range.Start.Line, d.Range.Start.Column,
				d.Severity, sanitize(msg), d.Code)
			if !opts.NoSnippet {
				writeSnippet(bw, r.Source, d, opts)
			}
		}
	}
	if !opts.NoSummary {
		fmt.Fprintln(bw, Summary(reports))
	}
	return bw.Flush()
}

// Summary says how many errors and warnings the reports hold, e.g.
// "2 errors, 1 warning in 1 file", and how many files could not be read.
func Summary(reports []Report) string {
	var errs, warns, files, unread int
	for _, r := range reports {
		if r.Err != nil {
			unread++
			continue
		}
		files++
		errs += r.Errors()
		warns += r.Warnings()
	}
	s := fmt.Sprintf("%s, %s in %s", plural(errs, "error"), plural(warns, "warning"), plural(files, "file"))
	if unread > 0 {
		s += fmt.Sprintf("; %s could not be read", plural(unread, "file"))
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// sanitize replaces control characters, which could drive a terminal, by
// U+FFFD; a message quotes what the document said.
func sanitize(s string) string {
	if strings.IndexFunc(s, isControl) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func isControl(r rune) bool {
	return r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0))
}

// cell is one character of a quoted source line.
type cell struct {
	text  string // what is printed: the character, a tab, or U+FFFD
	width int    // terminal columns it takes
	off   int    // byte offset in the document
}

const tabWidth = 8 // assumed for clipping only: a tab is printed as a tab

// writeSnippet prints the source line where d starts, with the range
// underlined (to the end of the line when the range goes on), clipped to
// opts.MaxWidth columns around the range.
func writeSnippet(w *bufio.Writer, doc []byte, d compile.Diagnostic, opts TextOptions) {
	maxWidth := opts.MaxWidth
	if maxWidth <= 0 {
		maxWidth = defaultMaxWidth
	}
	start := clamp(d.Range.Start.Byte, 0, len(doc))
	end := clamp(d.Range.End.Byte, start, len(doc))
	lineStart := strings.LastIndexByte(string(doc[:start]), '\n') + 1
	lineEnd := len(doc)
	if i := strings.IndexByte(string(doc[start:]), '\n'); i >= 0 {
		lineEnd = start + i
	}
	if lineEnd > start && doc[lineEnd-1] == '\r' {
		lineEnd-- // a CRLF line ending is not part of the line
	}
	if end > lineEnd {
		end = lineEnd
	}
	// From here on, offsets are within the line.
	line, start, end := string(doc[lineStart:lineEnd]), start-lineStart, end-lineStart
	if opts.Redact != nil {
		line, start, end = redactLine(line, start, end, opts.Redact)
	}

	var cells []cell
	caret := -1 // index of the first underlined cell; len(cells) when at the end
	for off := 0; off < len(line); {
		if caret < 0 && off >= start {
			caret = len(cells)
		}
		r, size := utf8.DecodeRuneInString(line[off:])
		c := cell{off: off, text: string(r), width: runeWidth(r)}
		switch {
		case r == '\t':
			c.text, c.width = "\t", tabWidth
		case r == utf8.RuneError && size == 1, isControl(r):
			c.text, c.width = "\uFFFD", 1
		}
		cells = append(cells, c)
		off += size
	}
	if caret < 0 {
		caret = len(cells)
	}
	last := caret // one past the last underlined cell
	for last < len(cells) && cells[last].off < end {
		last++
	}

	from, to := window(cells, caret, last, maxWidth)
	var src, mark strings.Builder
	if from > 0 {
		src.WriteString("…")
		mark.WriteByte(' ')
	}
	for i := from; i < to; i++ {
		c := cells[i]
		src.WriteString(c.text)
		switch {
		case i < caret && c.text == "\t":
			mark.WriteByte('\t') // keeps the caret under its character
		case i < caret:
			mark.WriteString(strings.Repeat(" ", c.width))
		case i == caret:
			mark.WriteByte('^')
			mark.WriteString(strings.Repeat("~", max(c.width, 1)-1))
		case i < last:
			mark.WriteString(strings.Repeat("~", max(c.width, 1)))
		}
	}
	if caret >= to {
		mark.WriteByte('^') // an empty range, or one at the end of the line
	}
	if to < len(cells) {
		src.WriteString("…")
	}
	num := strconv.Itoa(d.Range.Start.Line)
	fmt.Fprintf(w, " %s | %s\n", num, src.String())
	fmt.Fprintf(w, " %s | %s\n", strings.Repeat(" ", len(num)), strings.TrimRight(mark.String(), " \t"))
}

// redactLine rewrites line with redact and maps the range [start, end) of
// line onto the rewritten text. Text that redact leaves alone keeps its
// place around the range; a replacement that overlaps a boundary of the
// range is taken into it whole, so the underline covers what replaced the
// characters it pointed at. Only the line rewritten whole is returned:
// rewriting pieces alone could miss a value that spans them.
func redactLine(line string, start, end int, redact func(string) string) (string, int, int) {
	out := redact(line)
	if out == line {
		return line, start, end
	}
	pre, mid, post := redact(line[:start]), redact(line[start:end]), redact(line[end:])
	if pre+mid+post == out {
		return out, len(pre), len(pre) + len(mid)
	}
	s := commonPrefixLen(pre, out)
	e := len(out) - commonSuffixLen(post, out)
	return out, s, max(e, s)
}

func commonPrefixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// window chooses the cells [from, to) to print so that the line fits in
// maxWidth columns, keeping some context before the caret and as much of
// the underlined range as fits.
func window(cells []cell, caret, last, maxWidth int) (from, to int) {
	total := 0
	for _, c := range cells {
		total += c.width
	}
	if total <= maxWidth {
		return 0, len(cells)
	}
	budget := maxWidth - 2 // room for the two ellipses
	context := budget / 3
	from = caret
	used := 0
	for from > 0 && used+cells[from-1].width <= context {
		from--
		used += cells[from].width
	}
	to = from
	used = 0
	for to < len(cells) && used+cells[to].width <= budget {
		used += cells[to].width
		to++
	}
	if to == len(cells) { // the end is in view: use the room left for more context
		for from > 0 && used+cells[from-1].width <= budget {
			from--
			used += cells[from].width
		}
	}
	if to <= caret && caret < len(cells) {
		to = caret + 1 // a character wider than the budget still gets shown
	}
	return from, to
}

// runeWidth is the number of terminal columns r takes: 2 for East Asian wide
// characters, 0 for combining marks, else 1.
func runeWidth(r rune) int {
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
