package lang

import (
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocGrammar holds the EBNF and the token table of the package
// documentation to the participle grammar and its lexer, so that the two
// cannot drift apart.
func TestDocGrammar(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	production := regexp.MustCompile(`^\t([A-Z]\w*)\s+= (.*)$`)
	tok := regexp.MustCompile("^\t([a-z]\\w*)\\s+= `([^`]*)`")
	var prods []string
	var toks [][2]string
	for line := range strings.SplitSeq(doc, "\n") {
		if m := production.FindStringSubmatch(line); m != nil {
			prods = append(prods, m[1]+" = "+m[2])
		} else if m := tok.FindStringSubmatch(line); m != nil {
			toks = append(toks, [2]string{m[1], m[2]})
		}
	}
	if diff := cmp.Diff(strings.Split(placeholderParser.String(), "\n"), prods); diff != "" {
		t.Errorf("the EBNF in doc.go differs from the grammar's (-grammar +doc):\n%s", diff)
	}
	var want [][2]string
	rules := placeholderLexer.Rules()
	for _, state := range []string{"Root", "Placeholder"} {
		for _, r := range rules[state] {
			want = append(want, [2]string{strings.ToLower(r.Name), r.Pattern})
		}
	}
	if len(rules) != 2 {
		t.Errorf("the lexer has %d states; doc.go describes Root and Placeholder", len(rules))
	}
	if diff := cmp.Diff(want, toks); diff != "" {
		t.Errorf("the tokens in doc.go differ from the lexer's (-lexer +doc):\n%s", diff)
	}
}

// TestExpectation holds the words of expectation to the grammar: after each
// kind of token the grammar can stop at, a name, a dot or "}}" is accepted
// next exactly when the words name it.
func TestExpectation(t *testing.T) {
	t.Parallel()
	probes := []struct {
		word, text, rest string // the word naming the probe, the probe, what completes the placeholder
	}{
		{"a name", "x", "}}"}, // "a namespace" too
		{`"."`, ".", "x}}"},
		{`"}}"`, "}}", ""},
	}
	for _, before := range []string{"${{", "${{ \t", "${{a.", "${{a.b.", "${{a", "${{a.b", "${{ab-_09"} {
		words := expectation(before)
		afterName := isNameByte(before[len(before)-1])
		for _, p := range probes {
			if afterName && p.text == "x" {
				continue // a name right after a name is the same name
			}
			_, err := placeholderParser.ParseString("", before+p.text+p.rest)
			accepted := err == nil
			named := strings.Contains(words, p.word)
			if p.text == "}}" && !afterName && !strings.HasSuffix(before, ".") {
				named = true // an empty placeholder parses; the rules reject it with their own message
			}
			if accepted != named {
				t.Errorf("after %q, %q: the grammar accepts=%v, the message says %s", before, p.text, accepted, words)
			}
		}
	}
}
