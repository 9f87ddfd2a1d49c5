package lang

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var fuzzSeeds = []string{
	"", "plain text", "${{secrets.TOKEN}}", "Bearer ${{ secrets.TOKEN }}", "${{kobana.now}}",
	"https://x/${{steps.0.response.body.data.id}}/a?b=${{kobana.email_id}}",
	"${{steps.1.response.headers.location}}", "${{email.attachments.0}}",
	"${{email.attachments.2.filename}}", "${{secret.X}}", "${{}}", "${{ ", "${{a..b}}",
	"${{secrets . A}}", "${{ ${{secrets.A}} }}", "${{secrets.é}}", "$${{secrets.A}}}}",
	"${{steps.01.response.status}}", "${{email.attachments.0.bas64}}", "\x00${{\xff}}",
}

// FuzzParse checks properties of Parse on any string: it never panics, every
// error and reference range lies inside the input and on placeholder
// boundaries, and rendering the segments back reproduces the input when it
// parsed cleanly.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := Parse(s)
		var list ErrorList
		if err != nil {
			if !errors.As(err, &list) || len(list) == 0 || len(list) > maxErrors+1 {
				t.Fatalf("Parse(%q): error %v is not a non-empty bounded ErrorList", s, err)
			}
			for _, e := range list {
				if e.Span.Start < 0 || e.Span.End > len(s) || e.Span.Start > e.Span.End {
					t.Fatalf("Parse(%q): error span %v outside the input", s, e.Span)
				}
				if e.Code == "" || e.Message == "" {
					t.Fatalf("Parse(%q): error without code or message: %+v", s, e)
				}
			}
		} else if !strings.Contains(s, open) != tpl.IsLiteral() {
			t.Fatalf("Parse(%q): IsLiteral=%v", s, tpl.IsLiteral())
		}
		var b strings.Builder
		for _, seg := range tpl.Segments {
			if seg.Ref == nil {
				b.WriteString(seg.Literal)
				continue
			}
			r := seg.Ref
			if r.Span.Start < 0 || r.Span.End > len(s) || !strings.HasPrefix(s[r.Span.Start:], open) || !strings.HasSuffix(s[:r.Span.End], close) {
				t.Fatalf("Parse(%q): reference span %v is not a placeholder", s, r.Span)
			}
			if r.Namespace < Secrets || r.Namespace > Email {
				t.Fatalf("Parse(%q): reference without namespace", s)
			}
			// The canonical form parses to the same reference.
			again, err := Parse(r.Placeholder())
			if err != nil || again.WholeRef() == nil || again.WholeRef().String() != r.String() {
				t.Fatalf("Parse(%q): canonical form %s does not round-trip: %v", s, r.Placeholder(), err)
			}
			b.WriteString(s[r.Span.Start:r.Span.End])
		}
		if err == nil && !tpl.IsLiteral() && b.String() != s {
			t.Fatalf("Parse(%q): segments render %q", s, b.String())
		}
	})
}

// FuzzGrammar holds the scanner, Parse's fast path, to the grammar, the
// definition of record: for every string the scanner accepts, the grammar
// makes the same Template and the same errors of it (compared whole); for
// every string the scanner rejects, the grammar's first syntax error is at the
// same byte.
func FuzzGrammar(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"${{secrets.A}}", "${{ a.b }}", "${{a..b}}", "${{a. b}}", "${{a .b}}", "${{\ta\t}}",
		"${{}}", "${{ }}", "${{a}b}}", "${{é}}", "${{a.b.c.0.d-e_f}}", "${{a\n}}", "x${{a", "${{a}}${{b", "$${{a}}$",
		"${{a +}}", "${{.a}}", "${{ ${{a}} }}", "${{a}}}}", "${${{a}}", "${{a}}" + strings.Repeat("${{b}}", MaxRefs) + "${{c d}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gt, gerrs := parseGrammar(s)
		i := strings.Index(s, open)
		if i < 0 {
			if len(gerrs) != 0 || !gt.IsLiteral() || gt.Source != s {
				t.Fatalf("%q: the grammar reads %+v, %v from a string without placeholders", s, gt, gerrs)
			}
			return
		}
		ft, ferrs, bad := scanTemplate(s, i)
		var first *Error
		for _, e := range gerrs {
			if e.Code == CodeSyntax || e.Code == CodeUnterminated {
				first = e
				break
			}
		}
		if bad >= 0 {
			if first == nil {
				t.Fatalf("%q: the scanner rejects byte %d, the grammar accepts: %v", s, bad, gerrs)
			}
			if first.Span.Start != bad {
				t.Fatalf("%q: the scanner rejects byte %d, the grammar byte %d: %v", s, bad, first.Span.Start, first)
			}
			return
		}
		if first != nil {
			t.Fatalf("%q: the scanner accepts, the grammar rejects: %v", s, first)
		}
		if diff := cmp.Diff(gt, ft); diff != "" {
			t.Fatalf("%q: templates differ (-grammar +scanner):\n%s", s, diff)
		}
		if diff := cmp.Diff(gerrs, ferrs); diff != "" {
			t.Fatalf("%q: errors differ (-grammar +scanner):\n%s", s, diff)
		}
	})
}
