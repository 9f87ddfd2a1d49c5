// Package plan is the dry run of a workflow: for each step, the request
// that would be sent — method, URL, headers, body or multipart layout with
// sizes — and whether the step would be sent, fail before sending, or be
// skipped, and why. It opens no connection: nothing is sent, no name is
// looked up unless the caller passes Inputs.Lookup.
//
// Make is the entry point. It compiles the document with package compile
// and renders each step with package emit — the renderer the executor sends
// with — so a plan shows exactly what a run would send. What is not known
// before a run is shown as what it stands for: a secret as its marker
// "[redacted secrets.KEY]" (a plan never sees a secret's value, only, when
// given, the workspace's secret names), a reference to an earlier step's
// response as the reference itself unless Inputs.Responses has an example
// response for that step, a kobana.* fact as its reference unless
// Inputs.Facts are given, an attachment as its reference unless
// Inputs.Email is. Body sizes count the bytes known; the values still
// unknown are listed beside them.
//
// A step fails in the plan for the reasons a run fails it before sending: a
// secret name the workspace lacks (when the names are given), an attachment
// the e-mail lacks, a forward reference, a missing or null path in an
// example response, a fact with a CR or LF that would inject a header, a
// URL the SSRF guard refuses — judged with the guard's own address
// classification on the host as written (an IP literal, a legacy spelling
// such as 0x7f.1, a localhost name) or, with Inputs.Lookup, on the
// addresses a name resolves to. A step using the response of a step that
// fails, or whose example response does not have the expected status, is
// skipped, as in a run.
//
// Reasons are the run record's words (package runrecord), the finer causes
// of a reference included. Given Inputs.StepID — the identities a run's
// journal gives its steps (the Inbox's runs have them) — each step shows
// the identity headers the run sends, X-Kobana-Step-Id and, on a POST or
// PATCH whose step sets none, Idempotency-Key.
//
// WriteText prints a plan for people; a Plan encodes as JSON for tools (the
// schema is documented in docs/plan.md). ParseResponses and
// ParseSecretNames read the example-responses and secret-names files the
// language server reads too.
//
// The package depends on the compiler, the renderer and the SSRF guard
// only: no database driver, no MCP SDK, so it builds for WebAssembly and
// runs in the browser playground.
package plan
