package lang

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLiteral(t *testing.T) {
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
		{"${{secrets..A}}", CodeSyntax, Span{11, 12}, `unexpected "."`, ""},
		{"${{secrets.A B}}", CodeSyntax, Span{12, 13}, "space inside a reference", ""},
		{"${{secrets.A+B}}", CodeSyntax, Span{12, 13}, `unexpected "+" (expected "}}")`, ""},
		{"${{secrets . A}}", CodeSyntax, Span{10, 11}, "space inside a reference", ""},
		{"${{secrets.é}}", CodeSyntax, Span{11, 13}, `unexpected "é"`, ""},
		{"${{ ${{secrets.A}} }}", CodeSyntax, Span{4, 5}, `unexpected "$"`, ""},
		{"${{secrets.A.}}", CodeSyntax, Span{13, 15}, "end of placeholder", ""},
		{"${{.secrets}}", CodeSyntax, Span{3, 4}, `unexpected "."`, ""},
		{"${{secrets.A\n}}", CodeSyntax, Span{12, 13}, `unexpected "\n"`, ""},
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

func TestParseReportsEveryProblem(t *testing.T) {
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
