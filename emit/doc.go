// Package emit renders a compiled workflow step into the request that goes
// on the wire and, from the same walk, the redacted record that is
// persisted.
//
// Render is the entry point. The live Request streams its body: JSON with
// substituted values escaped where they stand, text as written, or
// multipart/form-data with our boundary whose file parts carry attachment
// bytes decoded from the original .eml as they are sent; attachment base64
// inside strings is encoded on the fly. The exact Content-Length is known
// before the first byte is sent, so no body is chunked, and memory does not
// grow with attachment size.
//
// The URL is made a valid URL after substitution, the way browsers make
// one: characters a URL may never hold are percent-encoded as UTF-8, a
// non-ASCII host is written in punycode, reserved characters and existing
// escapes stay as written, and the #fragment is dropped. The record's URL is
// the URL sent.
//
// The Record (a runrecord.Request) says what was sent, with no secret and no attachment byte.
// While rendering, each substituted secret is recorded as
// "[redacted secrets.KEY]" and each attachment is described (a file part as
// {"attachment":N,"filename":…,"content_type":…,"size":…}, base64 in a
// string as "[attachment N: name, type, size bytes]"): only the renderer
// knows which text came from a secret and which base64 run came from which
// attachment. Then, once, at the end, Redact passes the whole record
// through the run's resolve.Redactor, which removes any secret value still
// there in every form it covers (written literally in the workflow, or
// echoed back by an earlier step's response). See package resolve for the
// forms covered. An attachment read with repairs (package resolve/eml's
// defects) says so: the file part gains "defects":[{"code":…,"message":…}],
// the description "; repaired: code, …" before its closing bracket.
//
// If an attachment cannot be read while the body is being sent (the e-mail
// was truncated or rewritten mid-body), the body fails with a *StreamError
// before its Content-Length is reached: the HTTP transport then cuts the
// connection, so no receiver takes what it got for a complete request, and
// the body is never replayed.
//
// Given a step identity (Options.StepID), the request carries it in the
// platform's headers (runrecord.HeaderStepID, and an Idempotency-Key for a
// POST or PATCH whose step sets none), recorded like every other header.
//
// A header value that substitution gives a control character, or a URL
// that it gives one, fails the step before anything is sent (*Error);
// unresolvable references fail or skip it with the errors of package
// resolve.
package emit
