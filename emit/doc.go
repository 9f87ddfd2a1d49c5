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
// The Record holds no secret (every secret is "[redacted secrets.KEY]",
// wherever its value shows up) and no attachment byte (a file part is
// described as {"attachment":N,"filename":…,"content_type":…,"size":…},
// base64 in a string as "[attachment N: name, type, size bytes]"). An
// attachment read with repairs (package resolve/eml's defects) says so: the
// file part gains "defects":[{"code":…,"message":…}], the description
// "; repaired: code, …" before its closing bracket.
//
// If an attachment cannot be read while the body is being sent (the e-mail
// was truncated or rewritten mid-body), the body fails with a *StreamError
// before its Content-Length is reached: the HTTP transport then cuts the
// connection, so no receiver takes what it got for a complete request, and
// the body is never replayed.
//
// A header value or URL that substitution gives a CR, LF or NUL fails the
// step before anything is sent (*Error); unresolvable references fail or skip
// it with the errors of package resolve.
package emit
