package lang

import (
	"errors"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The grammar of one placeholder, from "${{" to "}}":
//
//	placeholder = "${{" segment { "." segment } "}}" .
//	segment     = Ident .
//
// Spaces and tabs are tolerated between tokens by the lexer; the parser then
// insists that dots and names touch (see checkAdjacent), so that only the
// space just inside the braces is free.

// placeholderNode is the AST of one placeholder.
type placeholderNode struct {
	Segments []*segmentNode `parser:"'${{' @@ ( '.' @@ )* '}}'"`
}

// segmentNode is one dot-separated name, with its position in the placeholder.
type segmentNode struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@Ident"`
}

var placeholderLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Open", Pattern: `\$\{\{`},
	{Name: "Close", Pattern: `\}\}`},
	{Name: "Ident", Pattern: `[A-Za-z0-9_-]+`},
	{Name: "Dot", Pattern: `\.`},
	{Name: "Space", Pattern: `[ \t]+`},
	// Anything else is a token of its own, so that the parser, not the
	// lexer, reports it with the grammar's expectations.
	{Name: "Other", Pattern: `[\s\S]`},
})

var placeholderParser = participle.MustBuild[placeholderNode](
	participle.Lexer(placeholderLexer),
	participle.Elide("Space"),
)

// grammarError parses ph with the grammar and returns its error, if any.
func grammarError(ph string) participle.Error {
	_, err := placeholderParser.ParseString("", ph)
	if err == nil {
		return nil
	}
	var perr participle.Error
	if errors.As(err, &perr) {
		return perr
	}
	return nil
}

// grammarAccepts reports whether the grammar accepts ph, and the names it
// read; it is the reference the fast scanner is tested against.
func grammarAccepts(ph string) ([]string, bool) {
	node, err := placeholderParser.ParseString("", ph)
	if err != nil {
		return nil, false
	}
	names := make([]string, len(node.Segments))
	for i, s := range node.Segments {
		if i > 0 && s.Pos.Offset != node.Segments[i-1].EndPos.Offset+1 {
			return nil, false // only the space inside the braces is free
		}
		names[i] = s.Name
	}
	return names, true
}

// expected extracts what the grammar expected from a participle error.
func expected(err participle.Error) string {
	msg := err.Message()
	const marker = " (expected "
	if i := strings.LastIndex(msg, marker); i >= 0 && strings.HasSuffix(msg, ")") {
		return msg[i+len(marker) : len(msg)-1]
	}
	return ""
}
