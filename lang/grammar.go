package lang

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file is the definition of record of the placeholder language: the
// lexer and the participle grammar below decide what a string means. The
// package documentation shows the same grammar as EBNF, and a test holds the
// two together. Parse reads strings with the hand-written scanner of scan.go
// first, and asks the grammar whenever the scanner meets something it does not
// accept; the differential fuzz target FuzzGrammar holds the scanner to the
// grammar on every input.

// template is the AST of a whole string: literal text and placeholders.
type template struct {
	Parts []*part `parser:"@@*"`
}

// part is a run of literal text or one placeholder.
type part struct {
	Pos         lexer.Position
	EndPos      lexer.Position
	Text        string       `parser:"  @(Text | Dollar)+"`
	Placeholder *placeholder `parser:"| @@"`
}

// placeholder is "${{", an optional reference, and "}}". The grammar accepts
// an empty placeholder; the namespace rules reject it with their own message.
type placeholder struct {
	Pos       lexer.Position
	EndPos    lexer.Position
	Reference *reference `parser:"Open @@? Close"`
}

// reference is names joined by single dots, nothing between them.
type reference struct {
	Names []string `parser:"@Name ( Dot @Name )*"`
}

// Token names of the lexer, as the grammar refers to them.
const (
	tokUnterminated = "Unterminated"
	tokOpen         = "Open"
	tokDollar       = "Dollar"
	tokText         = "Text"
	tokClose        = "Close"
	tokName         = "Name"
	tokDot          = "Dot"
	tokSpace        = "Space"
	tokOther        = "Other"
)

// placeholderLexer cuts a string into tokens. Outside a placeholder ("Root")
// it knows text, a lone "$", "${{" and a "${{" that is never closed; inside a
// placeholder it knows names, dots, blanks and "}}". The blanks just inside
// the braces belong to "${{" and "}}", so a Space token is always a blank
// inside a reference, which the grammar never accepts. Anything else is an
// Other token of one character, so that the parser, not the lexer, reports it.
var placeholderLexer = lexer.MustStateful(lexer.Rules{
	"Root": {
		{Name: tokUnterminated, Pattern: `\$\{\{(?:[^}]|\}[^}])*\}?\z`},
		{Name: tokOpen, Pattern: `\$\{\{[ \t]*`, Action: lexer.Push("Placeholder")},
		{Name: tokDollar, Pattern: `\$`},
		{Name: tokText, Pattern: `[^$]+`},
	},
	"Placeholder": {
		{Name: tokClose, Pattern: `[ \t]*\}\}`, Action: lexer.Pop()},
		{Name: tokName, Pattern: `[A-Za-z0-9_-]+`},
		{Name: tokDot, Pattern: `\.`},
		{Name: tokSpace, Pattern: `[ \t]+`},
		{Name: tokOther, Pattern: `[\s\S]`},
	},
})

// placeholderParser is the grammar. With no lookahead, a branch that has read
// one token is committed: an error is reported at the first token that does
// not fit, never at the start of the group it belongs to.
var placeholderParser = participle.MustBuild[template](
	participle.Lexer(placeholderLexer),
	participle.UseLookahead(0),
)

var tokenNames = func() map[lexer.TokenType]string {
	m := make(map[lexer.TokenType]string)
	for name, t := range placeholderLexer.Symbols() {
		m[t] = name
	}
	return m
}()

// parseGrammar parses s with the grammar alone and returns what Parse
// returns. After a syntax error it records the error, skips the placeholder
// that holds it and reads on, so that every placeholder of s is checked.
func parseGrammar(s string) (Template, ErrorList) {
	b := builder{src: s}
	base := 0
	for base < len(s) && !b.stopped {
		ast, err := placeholderParser.ParseString("", s[base:])
		if err == nil {
			b.addParts(ast.Parts, base)
			break
		}
		at, perr := syntaxError(s, base, err)
		if at > base {
			// Everything before the failing placeholder is well formed: read
			// it again on its own to keep its parts.
			prefix, err := placeholderParser.ParseString("", s[base:at])
			if err != nil {
				// These are the tokens the grammar just accepted as the start
				// of the longer string, whole parts ending before a "${{":
				// rejecting them alone would be a defect of this file.
				panic(fmt.Sprintf("lang: grammar rejects the well-formed prefix %q: %v", s[base:at], err))
			}
			b.addParts(prefix.Parts, base)
		}
		if perr.Code == CodeUnterminated {
			b.fail(perr)
			b.invalid(at, len(s))
			break
		}
		end := placeholderEnd(s, at)
		if b.countPlaceholder(at) {
			b.fail(perr)
			b.invalid(at, end)
		}
		base = end
	}
	return b.result()
}

// placeholderEnd returns the end of the placeholder opened at start: just
// after its first "}}".
func placeholderEnd(s string, start int) int {
	j := strings.Index(s[start+len(open):], close)
	if j < 0 {
		return len(s)
	}
	return start + len(open) + j + len(close)
}

// addParts feeds the parts of a parsed piece of s, found at offset base, to b.
func (b *builder) addParts(parts []*part, base int) {
	for _, p := range parts {
		if p.Placeholder == nil {
			b.text(p.Text)
			continue
		}
		start, end := base+p.Pos.Offset, base+p.EndPos.Offset
		var names []string
		if p.Placeholder.Reference != nil {
			names = p.Placeholder.Reference.Names
		}
		if b.countPlaceholder(start) {
			b.placeholder(start, end, names)
		}
	}
}

// syntaxError turns the grammar's error on s[base:] into the language's
// error. It returns the offset in s of the placeholder holding the error.
func syntaxError(s string, base int, err error) (int, *Error) {
	var uerr *participle.UnexpectedTokenError
	if !errors.As(err, &uerr) {
		// The lexer has a rule for every character and the grammar reports
		// only unexpected tokens: any other error is a defect of this file.
		panic(fmt.Sprintf("lang: the grammar failed on %q without an unexpected token: %v", s[base:], err))
	}
	tok := uerr.Unexpected
	at := base + tok.Pos.Offset
	kind := tokenNames[tok.Type]
	if kind == tokUnterminated {
		return at, &Error{
			Span:    Span{at, len(s)},
			Code:    CodeUnterminated,
			Message: `unterminated placeholder: "${{" has no closing "}}"`,
		}
	}
	start := strings.LastIndex(s[:at+1], open)
	end := placeholderEnd(s, start)
	ph := s[start:end]
	span := Span{at, at + len(tok.Value)}
	msg := fmt.Sprintf("invalid placeholder %s: expected %s, found %s", showPlaceholder(ph), expectation(s[start:at]), describeToken(kind, tok.Value))
	if kind == tokSpace {
		msg += "; spaces are allowed only just inside the braces, as in ${{ secrets.KEY }}"
	}
	return start, &Error{Span: span, Code: CodeSyntax, Message: msg}
}

// expectation says, in the language's words, what the grammar accepts after
// before, the part of a placeholder read so far ("${{" and what follows up to
// the unexpected token). The grammar is LL(1): what may come next depends only
// on the last token read, so it is told apart by the last byte.
func expectation(before string) string {
	last := strings.TrimRight(before, " \t")
	switch {
	case strings.HasSuffix(last, "{{") && len(last) == len(open):
		return "a namespace (secrets, kobana, steps or email)"
	case strings.HasSuffix(last, "."):
		return `a name (letters, digits, "_" or "-") after the dot`
	default:
		return `"." or "}}"`
	}
}

// describeToken names an unexpected token for a message.
func describeToken(kind, value string) string {
	switch kind {
	case tokClose:
		return `"}}"`
	case tokSpace:
		if strings.HasPrefix(value, "\t") {
			return "a tab"
		}
		return "a space"
	}
	return strconv.Quote(value)
}

// showPlaceholder returns ph for a message: as written, or quoted when it
// holds a character that would not print on one line.
func showPlaceholder(ph string) string {
	for _, r := range ph {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			return strconv.Quote(ph)
		}
	}
	return ph
}
