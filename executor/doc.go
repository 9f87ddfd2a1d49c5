// Package executor runs a compiled workflow Plan: step by step, behind the
// SSRF guard of package executor/guard, returning the redacted run record.
//
// New builds an Executor from Options (guard, timeouts, capture limit) and
// Executor.Run runs one plan against an Env (secrets, run facts, the
// e-mail's attachments). Each step ends succeeded, failed (before sending:
// a missing secret or attachment, a null or missing path, a reference to
// its own or a later step's response, a control character after
// substitution, a denied address; or after: a transport error, an
// unexpected status) or skipped (it uses the response of a step that
// failed or was skipped). Later independent steps still run after a
// failure; the run fails if any step failed or was skipped.
//
// The run record says what was sent and received, with no secret value
// and no attachment byte: the request part is rendered and redacted by
// package emit (its URL is the URL sent), and every other byte of a step
// record — label, error, response headers and body — crosses the run's
// resolve.Redactor once, when the step ends, before OnStep or anyone else
// sees it. A response body is redacted whole (a JSON body as JSON), then
// clipped to RecordBodyLimit; its size is the number of bytes received.
//
// A run that references the e-mail opens it when it starts and reads that
// one snapshot until it ends. If an attachment cannot be read in the middle
// of a step's body, the request is cut off before its Content-Length (the
// connection closes; the next step dials anew) and the step is recorded as
// failed with ReasonUploadAborted and PartialUpload: the receiver may have
// received part of the request, never a complete one.
//
// Executor.RunDocument (and RunDocument) is the path from an agent's
// output to a DocumentRecord: it compiles the document, runs its workflow
// when it validates, and records a document that does not as a failed run
// that sent nothing, with its diagnostics.
//
// An Executor is safe for concurrent use: many runs share one transport.
package executor
