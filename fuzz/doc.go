// Package fuzz holds the cross-package fuzz targets of the workflow engine:
// a document goes through compile, resolve, emit and executor exactly as a
// run does, against a receiver in the same process.
//
// FuzzWorkflow takes an arbitrary workflow document, a secret value and the
// body the receiver answers with. Every request, whatever its host, is
// dialled through the SSRF guard (127.0.0.1 is its only exception) to a
// loopback receiver — plain HTTP or TLS as the URL's scheme says — which
// attributes each request to the step in flight. It checks that:
//
//   - a document with an error diagnostic has no Plan, so nothing is sent;
//   - a step that failed before sending (a reference that does not resolve,
//     an invalid request, a denied address) or was skipped sent nothing, and
//     a step with a response sent something;
//   - every request sent is well-formed: a declared Content-Length equal to
//     the bytes received and never a chunked body; a JSON body (an object or
//     array in the step) parses; a form step is multipart/form-data with our
//     boundary, one part per field in order, file parts carrying exactly
//     the attachment's bytes;
//   - the run record (decoded, every string and key) never holds a secret
//     value, as written or percent-encoded (the fuzzed secret behind a fixed
//     prefix, so that it is at least resolve.MinSubstring bytes and cannot
//     match the record's own keys or timestamps), an attachment's marker
//     text or the base64 of an attachment.
//
// The corpus it starts from (f.Add) is every document in examples/workflows and
// examples/workflows/invalid plus hostile cases written here (secrets in
// URLs, labels and keys, CR/LF in secrets, attachments inlined as base64,
// denied addresses, chains of references into fuzzed responses).
//
// `go test ./fuzz` runs that corpus as a test; fuzz with
//
//	go test ./fuzz -run '^$' -fuzz FuzzWorkflow -fuzztime 20s
//
// Each execution is bounded by short step and run deadlines.
package fuzz
