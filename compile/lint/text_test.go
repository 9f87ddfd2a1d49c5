package lint

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kobana/workflow/compile"
)

// snippet renders the two snippet lines of a diagnostic over doc[start:end].
func snippet(t *testing.T, doc string, start, end, maxWidth int) (src, mark string) {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	d := compile.Diagnostic{Range: compile.Range{
		Start: compile.Pos{Line: 1 + strings.Count(doc[:start], "\n"), Byte: start},
		End:   compile.Pos{Byte: end},
	}}
	writeSnippet(w, []byte(doc), d, TextOptions{MaxWidth: maxWidth})
	w.Flush()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("snippet has %d lines: %q", len(lines), b.String())
	}
	_, src, _ = strings.Cut(lines[0], " | ")
	_, mark, _ = strings.Cut(lines[1], " | ")
	return src, mark
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc  string
		start, end int
		src, mark  string
	}{
		{"simple", `{"a": "post"}`, 6, 12, `{"a": "post"}`, `      ^~~~~~`},
		{"tabs before the caret are kept", "{\n\t\t\"x\": 1}", 4, 7, "\t\t\"x\": 1}", "\t\t^~~"},
		{"empty range", `{"a": }`, 6, 6, `{"a": }`, `      ^`},
		{"at the end of the line", "{\"a\": 1\n}", 7, 7, `{"a": 1`, `       ^`},
		{"range over several lines underlines to the end of the first", "[1,\n 2,\n 3]", 1, 10, "[1,", " ^~"},
		{"CRLF line ending dropped", "{\r\n \"Host\": 1\r\n}", 4, 10, ` "Host": 1`, ` ^~~~~~`},
		{"wide characters take two columns", `{"東京": "post"}`, 11, 17, `{"東京": "post"}`, `         ^~~~~~`},
		{"combining marks take none", "{\"e\u0301\": \"x\"}", 8, 11, "{\"e\u0301\": \"x\"}", `      ^~~`},
		{"control characters shown as U+FFFD", "{\"a\x1b[31m\": 1}", 1, 9, "{\"a\uFFFD[31m\": 1}", " ^" + strings.Repeat("~", 7)},
		{"invalid UTF-8 shown as U+FFFD", "{\"caf\xe9\": 1}", 5, 6, "{\"caf\uFFFD\": 1}", `     ^`},
		{"empty document", ``, 0, 0, ``, `^`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, mark := snippet(t, tc.doc, tc.start, tc.end, 0)
			if src != tc.src || mark != tc.mark {
				t.Errorf("got\n%q\n%q\nwant\n%q\n%q", src, mark, tc.src, tc.mark)
			}
		})
	}
}

// TestSnippetClipsLongLines checks a one-line document far wider than the
// limit: the quoted part fits, starts and ends with an ellipsis, and the
// caret still sits under the range.
func TestSnippetClipsLongLines(t *testing.T) {
	t.Parallel()
	doc := `{"result": "` + strings.Repeat("x", 5000) + `", "workflow": [{"type": "request", "method": "post", "url": "https://a.example/` + strings.Repeat("y", 5000) + `"}]}`
	start := strings.Index(doc, `"post"`)
	src, mark := snippet(t, doc, start, start+6, 80)
	if w := utf8.RuneCountInString(src); w > 80 {
		t.Errorf("quoted line is %d columns wide, limit 80", w)
	}
	if !strings.HasPrefix(src, "…") || !strings.HasSuffix(src, "…") {
		t.Errorf("clipping not shown: %q", src)
	}
	caret := strings.IndexByte(mark, '^')
	if got := string([]rune(src)[caret : caret+6]); got != `"post"` || !strings.HasSuffix(mark, "^~~~~~") {
		t.Errorf("caret under %q: %q / %q", got, src, mark)
	}
	// A range starting at the very beginning or end of the long line.
	src, mark = snippet(t, doc, 0, 1, 80)
	if !strings.HasPrefix(src, `{"result"`) || mark != "^" || !strings.HasSuffix(src, "…") {
		t.Errorf("start of line: %q %q", src, mark)
	}
	src, mark = snippet(t, doc, len(doc)-1, len(doc), 80)
	if !strings.HasSuffix(src, `"}]}`) || !strings.HasPrefix(src, "…") || utf8.RuneCountInString(src) != len(mark) || !strings.HasSuffix(mark, "^") {
		t.Errorf("end of line: %q %q", src, mark)
	}
}

// TestSnippetCaretAlignment checks, for every start offset of a line mixing
// tabs, wide characters and ASCII, that the underline begins in the column
// of the range's first character.
func TestSnippetCaretAlignment(t *testing.T) {
	t.Parallel()
	line := "\t\"名前\": \"ACME\", \"método\":\t\"post\", \"x\": \"東京商事\" "
	for start := 0; start < len(line); start++ {
		if !utf8.RuneStart(line[start]) {
			continue
		}
		for _, limit := range []int{0, 20} {
			src, mark := snippet(t, line, start, start+1, limit)
			caret := strings.IndexByte(mark, '^')
			if caret < 0 {
				t.Fatalf("start %d: no caret in %q", start, mark)
			}
			// Replace each character before the caret by its width in
			// spaces (tabs stay); the result must be the underline's prefix.
			var want strings.Builder
			col := 0
			for _, r := range src {
				if col >= caret {
					break
				}
				if want.Len() >= caret {
					break
				}
				switch {
				case r == '\t':
					want.WriteByte('\t')
				case r == '…':
					want.WriteByte(' ')
				default:
					want.WriteString(strings.Repeat(" ", runeWidth(r)))
				}
				col = want.Len()
			}
			if want.String() != mark[:caret] {
				t.Errorf("start %d, limit %d: underline prefix %q, want %q\n%s\n%s", start, limit, mark[:caret], want.String(), src, mark)
			}
			r, _ := utf8.DecodeRuneInString(line[start:])
			if r == '\t' {
				continue
			}
			// The character at the caret's display column is the range's.
			w := 0
			var at rune = -1
			for _, c := range src {
				if w == caret {
					at = c
					break
				}
				switch {
				case c == '\t':
					w++
				case c == '…':
					w++
				default:
					w += runeWidth(c)
				}
			}
			if at != r {
				t.Errorf("start %d, limit %d: caret under %q, want %q\n%s\n%s", start, limit, at, r, src, mark)
			}
		}
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":         "plain",
		"a\x1b[2Jb":     "a\uFFFD[2Jb",
		"tab\tkept":     "tab\tkept",
		"bad \xff byte": "bad \uFFFD byte",
		"c1 \u0085":     "c1 \uFFFD",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	rep := func(sevs ...compile.Severity) Report {
		r := Report{File: "x.json"}
		for _, s := range sevs {
			r.Diagnostics = append(r.Diagnostics, compile.Diagnostic{Severity: s})
		}
		return r
	}
	e, w := compile.SeverityError, compile.SeverityWarning
	tests := []struct {
		reports []Report
		want    string
	}{
		{nil, "0 errors, 0 warnings in 0 files"},
		{[]Report{rep()}, "0 errors, 0 warnings in 1 file"},
		{[]Report{rep(e, w, e)}, "2 errors, 1 warning in 1 file"},
		{[]Report{rep(e), rep(w, w), {File: "gone.json", Err: bytes.ErrTooLarge}}, "1 error, 2 warnings in 2 files; 1 file could not be read"},
	}
	for _, tc := range tests {
		if got := Summary(tc.reports); got != tc.want {
			t.Errorf("Summary = %q, want %q", got, tc.want)
		}
	}
}

func TestWriteTextOptions(t *testing.T) {
	t.Parallel()
	r := Bytes("a.json", []byte(`{"result": 1, "workflow": [{"type": "request", "url": "https://a.example/", "method": "get"}]}`), Options{})
	var full, bare bytes.Buffer
	if err := WriteText(&full, []Report{r}, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&bare, []Report{r}, TextOptions{NoSnippet: true, NoSummary: true}); err != nil {
		t.Fatal(err)
	}
	wantFirst := `a.json:1:87: error: method "get" must be written in upper case: "GET" [method-invalid]`
	if got := strings.Split(full.String(), "\n"); len(got) != 5 || got[0] != wantFirst || got[3] != "1 error, 0 warnings in 1 file" {
		t.Errorf("full output:\n%s", full.String())
	}
	if bare.String() != wantFirst+"\n" {
		t.Errorf("bare output: %q", bare.String())
	}
}
