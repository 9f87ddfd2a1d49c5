// Package lang is the placeholder language of Kobana workflows.
//
// A workflow string may embed references written as ${{ reference }}, in
// exactly four namespaces:
//
//	${{secrets.KEY}}                          a workspace secret
//	${{kobana.KEY}}                           a fact about the run (see KobanaKeys)
//	${{steps.N.response.status}}              an earlier step's response: status,
//	${{steps.N.response.body[.path…]}}        body (or a path into its JSON),
//	${{steps.N.response.headers.NAME}}        or a header
//	${{email.attachments.N[.base64|.filename|.content_type|.size]}}
//
// Parse turns a string into a Template: literal text and references, each
// reference with its byte range in the string. Anything that is not one of
// those shapes is an *Error with a stable code and a precise range; nothing
// that looks like a placeholder is ever left as literal text.
//
// # Grammar
//
// The participle grammar in grammar.go is the definition of record of the
// language's syntax. In EBNF, productions capitalised and tokens in angle
// brackets:
//
//	Template    = Part* .
//	Part        = (<text> | <dollar>)+ | Placeholder .
//	Placeholder = <open> Reference? <close> .
//	Reference   = <name> (<dot> <name>)* .
//
// The tokens, as regular expressions, in the order the lexer tries them.
// Outside a placeholder:
//
//	unterminated = `\$\{\{(?:[^}]|\}[^}])*\}?\z`   "${{" never closed: never accepted
//	open         = `\$\{\{[ \t]*`                  "${{" and the blanks after it
//	dollar       = `\$`                            a "$" that opens nothing is text
//	text         = `[^$]+`
//
// Inside a placeholder (from open to close):
//
//	close = `[ \t]*\}\}`       the blanks before "}}", and "}}"
//	name  = `[A-Za-z0-9_-]+`
//	dot   = `\.`
//	space = `[ \t]+`           any other blank: never accepted
//	other = `[\s\S]`           any other character: never accepted
//
// So a placeholder runs from "${{" to the first "}}" after it; blanks (space
// or tab) are allowed only just inside the braces, never between names and
// dots; there is no escape for a literal "${{". A test holds this text to
// the grammar and the lexer.
//
// A syntax error is reported at the first token the grammar does not accept,
// saying what was expected there in the language's words: a namespace, a
// name, "." or "}}". Parse then skips to the end of that placeholder and
// reads on, so every placeholder of a string is checked.
//
// # Rules
//
// The grammar accepts an empty placeholder and any names; the rules of the
// namespaces, checked on the parsed reference, accept exactly the shapes
// listed above: a known namespace, a known kobana key (KobanaKeys), plain
// decimal indices without leading zeros, and the parts of a response or an
// attachment. Their errors carry a did-you-mean suggestion where one is close.
// A string holds at most MaxRefs placeholders.
//
// # Speed
//
// Parse reads strings with a hand-written scanner that accepts exactly what
// the grammar accepts and builds the same Template; the grammar reads a
// string only when the scanner stops at a syntax error. A differential fuzz
// target holds the two together. Strings without "${{" cost no allocation.
package lang
