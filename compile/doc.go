// Package compile validates an agent's output document — {"result": …,
// "workflow": [steps…]} — and turns its workflow into an immutable Plan.
//
// Compile is the entry point: it reads the document once, parses every
// string that may hold placeholders with package lang, enforces every static
// rule of the workflow language (fields, types, methods, reserved and invalid
// headers, body/form exclusivity, expected_status, the step limit, unknown
// fields, duplicate keys, kobana keys, placeholders where they are not
// allowed) and reports all problems at once as Diagnostics. A reference to
// the response of the step itself or of a later step is a warning, not an
// error: that step fails at run time before sending (Step.Forward), and the
// rest of the workflow runs. Each Diagnostic has a severity, a stable code, a message that
// says what is allowed, a JSON pointer and an exact source range in the
// original document (mapped back through JSON string escapes).
//
// A Plan exists only for a document without errors; warnings do not prevent
// it. Plans are read-only after Compile returns and safe to share between
// goroutines.
package compile
