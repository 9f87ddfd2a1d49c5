package lang

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLiteral(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "cost $5", "${ not", "$$", "{{x}}", "${x}"} {
		tpl, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if !tpl.IsLiteral() || tpl.Source != s {
			t.Errorf("Parse(%q) = %+v, want a literal", s, tpl)
		}
	}
}

func TestParseReferences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []Segment
	}{
		{"${{secrets.TOKEN}}", []Segment{{Ref: &Ref{Namespace: Secrets, Path: []string{"secrets", "TOKEN"}, Span: Span{0, 18}, Key: "TOKEN"}}}},
		{"Bearer ${{ secrets.TOKEN }}", []Segment{{Literal: "Bearer "}, {Ref: &Ref{Namespace: Secrets, Path: []string{"secrets", "TOKEN"}, Span: Span{7, 27}, Key: "TOKEN"}}}},
		{"${{\tkobana.now\t}}!", []Segment{{Ref: &Ref{Namespace: Kobana, Path: []string{"kobana", "now"}, Span: Span{0, 17}, Key: "now"}}, {Literal: "!"}}},
		{"${{steps.0.response.status}}", []Segment{{Ref: &Ref{Namespace: Steps, Path: []string{"steps", "0", "response", "status"}, Span: Span{0, 28}, Index: 0, Step: StepStatus}}}},
		{"/p/${{steps.12.response.body.data.items.0.id}}/x", []Segment{{Literal: "/p/"}, {Ref: &Ref{Namespace: Steps, Path: strings.Split("steps.12.response.body.data.items.0.id", "."), Span: Span{3, 46}, Index: 12, Step: StepBody, BodyPath: []string{"data", "items", "0", "id"}}}, {Literal: "/x"}}},
		{"${{steps.1.response.body}}", []Segment{{Ref: &Ref{Namespace: Steps, Path: strings.Split("steps.1.response.body", "."), Span: Span{0, 26}, Index: 1, Step: StepBody, BodyPath: []string{}}}}},
		{"${{steps.1.response.headers.Location}}", []Segment{{Ref: &Ref{Namespace: Steps, Path: strings.Split("steps.1.response.headers.Location", "."), Span: Span{0, 38}, Index: 1, Step: StepHeaders, Header: "Location"}}}},
		{"${{email.attachments.0}}", []Segment{{Ref: &Ref{Namespace: Email, Path: strings.Split("email.attachments.0", "."), Span: Span{0, 24}, Attachment: AttachmentContent}}}},
		{"${{email.attachments.3.content_type}}", []Segment{{Ref: &Ref{Namespace: Email, Path: strings.Split("email.attachments.3.content_type", "."), Span: Span{0, 37}, Index: 3, Attachment: AttachmentContentType}}}},
		{"a${{kobana.env}}${{kobana.email_id}}b", []Segment{{Literal: "a"}, {Ref: &Ref{Namespace: Kobana, Path: []string{"kobana", "env"}, Span: Span{1, 16}, Key: "env"}}, {Ref: &Ref{Namespace: Kobana, Path: []string{"kobana", "email_id"}, Span: Span{16, 36}, Key: "email_id"}}, {Literal: "b"}}},
		{"price $5 ${{secrets.A-b_1}}}", []Segment{{Literal: "price $5 "}, {Ref: &Ref{Namespace: Secrets, Path: []string{"secrets", "A-b_1"}, Span: Span{9, 27}, Key: "A-b_1"}}, {Literal: "}"}}},
	}
	for _, tc := range tests {
		tpl, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, tpl.Segments); diff != "" {
			t.Errorf("Parse(%q) segments (-want +got):\n%s", tc.in, diff)
		}
		for _, r := range tpl.Refs() {
			if got := tc.in[r.Span.Start:r.Span.End]; !strings.HasPrefix(got, "${{") || !strings.HasSuffix(got, "}}") {
				t.Errorf("Parse(%q): span %v covers %q", tc.in, r.Span, got)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in         string
		code       string
		span       Span
		msg        string // substring of the message
		suggestion string
	}{
		{"x ${{secrets.TOKEN", CodeUnterminated, Span{2, 18}, "unterminated", ""},
		{"${{}}", CodeEmpty, Span{0, 5}, "empty placeholder", ""},
		{"${{   }}", CodeEmpty, Span{0, 8}, "empty placeholder", ""},
		{"${{secret.TOKEN}}", CodeUnknownNS, Span{0, 17}, `unknown namespace "secret"`, "${{secrets.TOKEN}}"},
		{"${{env.HOME}}", CodeUnknownNS, Span{0, 13}, "secrets, kobana, steps or email", ""},
		{"${{secrets}}", CodeSecretRef, Span{0, 12}, "secrets.KEY", ""},
		{"${{secrets.A.B}}", CodeSecretRef, Span{0, 16}, "secrets.KEY", ""},
		{"${{kobana.mow}}", CodeUnknownKobana, Span{0, 15}, "unknown run fact", "${{kobana.now}}"},
		{"${{kobana.workspace}}", CodeUnknownKobana, Span{0, 21}, "unknown run fact", "${{kobana.workspace_id}}"},
		{"${{kobana}}", CodeKobanaRef, Span{0, 11}, "kobana.KEY", ""},
		{"${{steps.x.response.status}}", CodeStepsRef, Span{0, 28}, `"x" is not a number`, ""},
		{"${{steps.01.response.status}}", CodeStepsRef, Span{0, 29}, "leading zero", ""},
		{"${{steps.0.body.id}}", CodeStepsRef, Span{0, 20}, "steps.N.response", "${{steps.0.response.body.id}}"},
		{"${{steps.0}}", CodeStepsRef, Span{0, 12}, "steps.N.response", ""},
		{"${{steps.0.response}}", CodeStepsRef, Span{0, 21}, "steps.N.response", ""},
		{"${{steps.0.response.stauts}}", CodeStepsRef, Span{0, 28}, "status, body and headers", "${{steps.0.response.status}}"},
		{"${{steps.0.response.status.code}}", CodeStepsRef, Span{0, 33}, "no fields", "${{steps.0.response.status}}"},
		{"${{steps.0.response.headers}}", CodeStepsRef, Span{0, 29}, "name one header", ""},
		{"${{steps.9999999999.response.status}}", CodeIndexOutOfRange, Span{0, 37}, "out of range", ""},
		{"${{email.attachment.0}}", CodeAttachmentRef, Span{0, 23}, "email.attachments.N", "${{email.attachments.0}}"},
		{"${{email.attachments.zero}}", CodeAttachmentRef, Span{0, 27}, "not a number", ""},
		{"${{email.attachments.0.name}}", CodeAttachmentRef, Span{0, 29}, ".filename", ""},
		{"${{email.attachments.0.bas64}}", CodeAttachmentRef, Span{0, 30}, ".base64", "${{email.attachments.0.base64}}"},
		{"${{email.attachments.0.size.x}}", CodeAttachmentRef, Span{0, 31}, "email.attachments.N", ""},
	}
	for _, tc := range tests {
		_, err := Parse(tc.in)
		var list ErrorList
		if !errors.As(err, &list) || len(list) != 1 {
			t.Errorf("Parse(%q): got %v, want one error", tc.in, err)
			continue
		}
		e := list[0]
		if e.Code != tc.code || e.Span != tc.span || !strings.Contains(e.Message, tc.msg) || e.Suggestion != tc.suggestion {
			t.Errorf("Parse(%q):\n got  %s %v %q sugg %q\n want %s %v ~%q sugg %q", tc.in, e.Code, e.Span, e.Message, e.Suggestion, tc.code, tc.span, tc.msg, tc.suggestion)
		}
	}
}

// TestSyntaxMessages pins the whole message of each kind of syntax error:
// what was expected is said in the language's words (a namespace, a name, "."
// or "}}"), never in the grammar's.
func TestSyntaxMessages(t *testing.T) {
	t.Parallel()
	const (
		nsWanted   = "expected a namespace (secrets, kobana, steps or email)"
		nameWanted = `expected a name (letters, digits, "_" or "-") after the dot`
		nextWanted = `expected "." or "}}"`
		spaces     = "; spaces are allowed only just inside the braces, as in ${{ secrets.KEY }}"
	)
	tests := []struct {
		in   string
		span Span
		msg  string
	}{
		{"${{a..b}}", Span{5, 6}, `invalid placeholder ${{a..b}}: ` + nameWanted + `, found "."`},
		{"${{.a}}", Span{3, 4}, `invalid placeholder ${{.a}}: ` + nsWanted + `, found "."`},
		{"${{ a .b}}", Span{5, 6}, `invalid placeholder ${{ a .b}}: ` + nextWanted + `, found a space` + spaces},
		{"${{secrets..A}}", Span{11, 12}, `invalid placeholder ${{secrets..A}}: ` + nameWanted + `, found "."`},
		{"${{secrets.A B}}", Span{12, 13}, `invalid placeholder ${{secrets.A B}}: ` + nextWanted + `, found a space` + spaces},
		{"${{secrets.A  +}}", Span{12, 14}, `invalid placeholder ${{secrets.A  +}}: ` + nextWanted + `, found a space` + spaces},
		{"${{secrets . A}}", Span{10, 11}, `invalid placeholder ${{secrets . A}}: ` + nextWanted + `, found a space` + spaces},
		{"${{secrets.\tA}}", Span{11, 12}, `invalid placeholder "${{secrets.\tA}}": ` + nameWanted + `, found a tab` + spaces},
		{"${{secrets.A+B}}", Span{12, 13}, `invalid placeholder ${{secrets.A+B}}: ` + nextWanted + `, found "+"`},
		{"${{secrets.é}}", Span{11, 13}, `invalid placeholder ${{secrets.é}}: ` + nameWanted + `, found "é"`},
		{"${{ ${{secrets.A}} }}", Span{4, 5}, `invalid placeholder ${{ ${{secrets.A}}: ` + nsWanted + `, found "$"`},
		{"${{secrets.A.}}", Span{13, 15}, `invalid placeholder ${{secrets.A.}}: ` + nameWanted + `, found "}}"`},
		{"${{secrets.A. }}", Span{13, 16}, `invalid placeholder ${{secrets.A. }}: ` + nameWanted + `, found "}}"`},
		{"${{.secrets}}", Span{3, 4}, `invalid placeholder ${{.secrets}}: ` + nsWanted + `, found "."`},
		{"${{secrets.A\n}}", Span{12, 13}, `invalid placeholder "${{secrets.A\n}}": ` + nextWanted + `, found "\n"`},
		{"${{steps.0.response.body.data[0].id}}", Span{29, 30}, `invalid placeholder ${{steps.0.response.body.data[0].id}}: ` + nextWanted + `, found "["`},
		{"x ${{secrets.TOKEN", Span{2, 18}, `unterminated placeholder: "${{" has no closing "}}"`},
		{"${{a}} ${{b", Span{7, 11}, `unterminated placeholder: "${{" has no closing "}}"`},
		{"${{a}b", Span{0, 6}, `unterminated placeholder: "${{" has no closing "}}"`},
	}
	for _, tc := range tests {
		_, err := Parse(tc.in)
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("Parse(%q) = %v, want an error", tc.in, err)
			continue
		}
		var e *Error
		for _, x := range list {
			if x.Code == CodeSyntax || x.Code == CodeUnterminated {
				e = x
				break
			}
		}
		if e == nil || e.Span != tc.span || e.Message != tc.msg {
			t.Errorf("Parse(%q):\n got  %+v\n want %v %q", tc.in, e, tc.span, tc.msg)
		}
	}
}

// TestMessagesUseTheLanguagesWords checks that no message shows the grammar's
// vocabulary: token or production names, EBNF or participle's own phrases.
func TestMessagesUseTheLanguagesWords(t *testing.T) {
	t.Parallel()
	inners := []string{"", " ", "a", "a.", ".", "..", "a..b", "a b", "a .b", "a. b", "+", "a+", "a.+", "é", "a.é",
		"$", "{", "}", "a}", "a\n", "\t", "a\tb", "${{", "a.${{b"}
	banned := []string{"<", ">", "token", "Template", "Part", "Placeholder", "Reference", "Name ", "Node", "Open", "Close", "Dot", "Other", "Unterminated", "(expected"}
	for _, in := range inners {
		for _, s := range []string{"${{" + in + "}}", "x ${{" + in, "${{" + in + "}}${{" + in} {
			_, err := Parse(s)
			var list ErrorList
			if !errors.As(err, &list) {
				continue
			}
			for _, e := range list {
				for _, b := range banned {
					if strings.Contains(e.Message, b) {
						t.Errorf("Parse(%q): message %q holds %q", s, e.Message, b)
					}
				}
			}
		}
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	t.Parallel()
	in := "${{secret.A}} ok ${{secrets.B}} ${{kobana.nope}} ${{steps.0"
	tpl, err := Parse(in)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("want ErrorList, got %v", err)
	}
	var codes []string
	for _, e := range list {
		codes = append(codes, e.Code)
	}
	if diff := cmp.Diff([]string{CodeUnknownNS, CodeUnknownKobana, CodeUnterminated}, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	if refs := tpl.Refs(); len(refs) != 1 || refs[0].Key != "B" {
		t.Errorf("valid references kept: %v", refs)
	}
}

func TestParseTooManyPlaceholders(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("${{secrets.A}}", 10000)
	_, err := Parse(in)
	var list ErrorList
	if !errors.As(err, &list) || list[len(list)-1].Code != CodeTooManyRefs {
		t.Fatalf("want %s, got %v", CodeTooManyRefs, err)
	}
	bad := strings.Repeat("${{nope.A}}", 10000)
	_, err = Parse(bad)
	if !errors.As(err, &list) || len(list) > maxErrors {
		t.Fatalf("errors are bounded: got %d", len(list))
	}
}

func TestWholeRef(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"${{email.attachments.0}}":   true,
		" ${{email.attachments.0}}":  false,
		"${{email.attachments.0}}x":  false,
		"${{ email.attachments.0 }}": true,
		"plain":                      false,
	} {
		tpl, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := tpl.WholeRef() != nil; got != want {
			t.Errorf("WholeRef(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestRuleTablesAreCopies checks that the rule tables cannot be changed
// from outside: each call returns a fresh copy.
func TestRuleTablesAreCopies(t *testing.T) {
	t.Parallel()
	for name, table := range map[string]func() []string{"KobanaKeys": KobanaKeys, "Namespaces": Namespaces, "AttachmentSuffixes": AttachmentSuffixes} {
		first := table()
		want := slices.Clone(first)
		for i := range first {
			first[i] = "changed"
		}
		if got := table(); !slices.Equal(got, want) {
			t.Errorf("%s after changing a returned slice = %v, want %v", name, got, want)
		}
	}
	if got := Namespaces(); !slices.Equal(got, []string{"secrets", "kobana", "steps", "email"}) {
		t.Errorf("Namespaces() = %v", got)
	}
	for _, k := range KobanaKeys() {
		if !IsKobanaKey(k) || KobanaKeyDoc(k) == "" {
			t.Errorf("kobana.%s: known=%v, doc %q", k, IsKobanaKey(k), KobanaKeyDoc(k))
		}
		if _, err := Parse("${{kobana." + k + "}}"); err != nil {
			t.Errorf("kobana.%s: %v", k, err)
		}
	}
	if IsKobanaKey("nope") || KobanaKeyDoc("nope") != "" {
		t.Error(`"nope" is a known kobana key`)
	}
}

// TestIsName holds IsName to the grammar: s is a name exactly when
// ${{secrets.s}} parses to a reference with the key s.
func TestIsName(t *testing.T) {
	t.Parallel()
	cases := []string{"", "A", "FINANCE_TOKEN", "a-b_9", "a.b", "a b", "A=1", "é", "a}", "-", "_"}
	for c := 0; c < 0x80; c++ {
		cases = append(cases, string(rune(c)), "x"+string(rune(c))+"y")
	}
	for _, s := range cases {
		tpl, err := Parse("${{secrets." + s + "}}")
		parsed := err == nil && len(tpl.Refs()) == 1 && tpl.Refs()[0].Key == s
		if IsName(s) != parsed {
			t.Errorf("IsName(%q) = %v, but ${{secrets.%s}} parses to key %q: %v", s, IsName(s), s, s, parsed)
		}
	}
}
