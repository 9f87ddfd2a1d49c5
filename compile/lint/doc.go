// Package lint checks workflow documents and prints what is wrong with them
// for people, editors and code-scanning services.
//
// It is the library behind the validate-workflow program and `kobana
// validate`. A service that embeds the linter needs one call:
//
//	report := lint.Bytes("agent-output.json", doc, lint.Options{})
//	if report.Errors() > 0 { … report.Diagnostics … }
//
// Files and Read read documents from disk or a stream (capped at
// compile.MaxDocumentSize, so an endless stream cannot hang the linter).
// Reports are printed in three formats:
//
//   - WriteText: "FILE:LINE:COL: SEVERITY: MESSAGE [CODE]", then the source
//     line with the range underlined, and a closing summary line;
//   - WriteJSON: {"diagnostics": [{"file", "severity", "code", "message",
//     "pointer", "range": {"start", "end"}, "suggestion"}]}, each diagnostic
//     in compile's JSON shape with its file;
//   - WriteSARIF: SARIF 2.1.0, as GitHub code scanning accepts it.
//
// CLI is the whole command line (flags, files, output, exit status) shared
// by both programs.
package lint
