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
// Lexing and parsing of a placeholder follow a participle grammar (see
// grammar.go); the namespace rules are checked on the resulting AST. Strings
// without "${{" never reach the grammar and cost no allocation.
package lang
