// Package compile validates an agent's output document — {"result": …,
// "workflow": [steps…]} — and turns its workflow into an immutable Plan.
//
// Compile is the entry point: it reads the document once, parses every
// string that may hold placeholders with package lang, enforces every static
// rule of the workflow language (fields, types, methods, reserved and invalid
// headers — including those the HTTP transport would drop or rewrite —
// body/form exclusivity, expected_status, the step limit, unknown fields,
// duplicate keys, kobana keys, placeholders where they are not allowed, URLs
// with a control character or, as far as their literal text shows, without
// a host) and reports all problems at once as Diagnostics.
//
// Some problems are warnings, not errors: the workflow still runs. A
// reference to the response of the step itself or of a later step makes
// that step fail at run time before sending (Step.Forward) while the rest
// runs; characters a URL may not hold as written are sent percent-encoded.
//
// Each Diagnostic has a severity, a stable code (AllCodes lists them), a
// message that says what is allowed, a JSON pointer and an exact source
// range in the original document (mapped back through JSON string escapes).
//
// A Plan exists only for a document without errors; warnings do not prevent
// it. Plans are read-only after Compile returns and safe to share between
// goroutines. The rule tables (Methods, StepFields, ReservedHeaders,
// TransportHeaders, AllCodes) are handed out as copies.
package compile
