// Package sendurl turns the text of a step's URL, after its placeholders are
// substituted, into the URL that is actually sent, the way browsers do, and
// into the text the run record shows for it (docs/language.md, "The URL that
// is sent", says the same for users).
//
// Build is the entry point. It
//
//   - refuses control characters (U+0000–U+001F, U+007F) with a *ControlError:
//     the step fails before sending;
//   - percent-encodes, as UTF-8, the characters that may never appear in a
//     URL — space, ", <, >, \, ^, `, {, |, } and every non-ASCII byte — and a
//     '%' that does not start a %XX escape (as %25);
//   - leaves everything else as written: reserved characters
//     (/ ? # [ ] @ : & = + $ , ; …) and existing %XX escapes, so a whole URL
//     held in a secret keeps its structure;
//   - writes a non-ASCII host name in its ASCII (punycode) form, as
//     golang.org/x/net/idna's lookup profile gives it (*HostError when it has
//     none);
//   - drops the #fragment, which is never sent, from both the URL and the
//     record.
//
// The record is built from the same text, with the pieces the caller marks
// (a secret's value, an attachment's base64) replaced by what the record
// shows for them, so it says exactly what was sent, less those pieces.
//
// UnsafeByte and HostSpan let the linter find, in a document, the literal
// characters Build would change.
package sendurl
