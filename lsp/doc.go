// Package lsp is a language server for workflow documents — the agent's
// {"result": …, "workflow": [steps…]} output — speaking the Language Server
// Protocol 3.17 over a byte stream (stdio in `validate-workflow lsp`).
//
// New returns a Server; Serve runs one session. The server offers:
//
//   - diagnostics of package compile on open and on change (after a
//     debounce, Options.Debounce), with codes, ranges, severities and links
//     to each code's documentation; a warning for a ${{secrets.KEY}} whose
//     name is not among the known secret names, when any are known;
//   - a quick fix (a code action) for each diagnostic with a did-you-mean;
//   - completion inside ${{ }}: the four namespaces, the kobana keys with
//     what they hold, secret names (Options.SecretNames, the client's
//     initializationOptions, or a SecretNamesFile in the workspace — names,
//     never values), steps.N for earlier steps only and then
//     response.status|body|headers, paths into a step's response body from an
//     example response (a W.responses.json or W.run.json next to W.json),
//     and email.attachments.N with .base64|.filename|.content_type|.size;
//     outside placeholders, step fields, methods and the step type;
//   - hover on a reference (what it resolves to, the rule behind it, and the
//     example's value) and on a step field;
//   - go-to-definition from steps.N to step N.
//
// Positions are exchanged in the encoding the client and server agree on:
// UTF-8, UTF-16 (the protocol's default) or UTF-32, with LSP 3.17's
// positionEncoding or the older offsetEncoding extension. Ranges inside JSON
// strings are mapped through escapes to the bytes of the document.
//
// The package depends only on the compiler and the standard library: no
// database driver and no MCP SDK, so the linter binary stays lean.
package lsp
