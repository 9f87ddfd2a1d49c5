// Package resolve answers the references of a compiled workflow step against
// the run's Scope: workspace secrets, run facts (kobana.*), the responses of
// earlier steps and the attachments of the triggering e-mail.
//
// Scope.Resolve is the entry point. Its errors are typed so that the
// executor can tell a step to skip (*SkipError: it depends on a step that
// failed or was skipped) from a step that fails before anything is sent
// (*RefError: a missing secret, an undefined fact, a forward reference, a
// null or missing path, a missing attachment, an unreadable e-mail).
//
// Every source is an interface (Secrets, Facts, Attachments) so services plug
// in their own; a Secrets that can also list every value should implement
// SecretLister, so that redaction covers secrets a run never referenced; SecretMap, FactMap and package resolve/eml (EMLFile,
// EMLIndexed) are the ready-made implementations. The e-mail is opened once
// per run and is one snapshot for the whole run; before a step sends an
// attachment's bytes, Attachments.Check confirms they can still be read,
// else the step fails before sending. Scope.Close releases the e-mail.
//
// A step's state in a Result is package runrecord's word (runrecord.State),
// and a RefError's Reason is one of runrecord's reference reasons, so the
// executor, the dry run and the records say the same thing. Restore reads
// an earlier run's recorded response back for a run that resumes it: what
// the record holds whole answers references, and what it does not (a
// redacted or clipped body or header) fails the step that needs it with
// runrecord.ReasonResponseUnavailable — a redaction marker is never handed
// on as a value.
//
// # Response bodies
//
// A reference to a path inside an earlier step's body,
// ${{steps.N.response.body.PATH}}, needs that receiver to have answered with
// a JSON content type (application/json, or any type ending in +json such as
// application/problem+json); any other type — text/plain, none at all — fails
// the referencing step before it sends, with runrecord.ReasonNotJSON, even
// when the body happens to be JSON. ${{steps.N.response.body}} (no path) is
// the body as text, whatever its type. A body larger than the capture limit
// cannot be referenced (runrecord.ReasonNotCaptured).
//
// A path into a JSON response body is read as JavaScript's JSON.parse reads
// it: own properties only; of duplicate keys the last one wins; an object or
// array is JSON-encoded in place with each key once (at its first position,
// with its last value); a lone UTF-16 surrogate escape (\ud800 without its
// pair) is U+FFFD, which is also how the run record shows it.
//
// # Redaction
//
// A Redactor removes secret values from everything persisted or logged. It
// knows every secret of a SecretLister from the start, and learns each
// other secret as it is resolved. It is applied once, at the edge where a
// record is produced: emit.Render redacts the request record it returns,
// and the executor redacts the rest of each step record (label, error,
// response) before anyone sees it. A secret substituted into a request is
// recorded as "[redacted secrets.KEY]" where it stood; the edge catches the
// value wherever else it shows up — written literally in the workflow,
// echoed back by a receiver, inside an error message.
//
// For each secret value, these forms are covered:
//
//   - the value as written;
//   - percent-encoded, byte by byte (UTF-8 for non-ASCII), as %XX with
//     upper- or lower-case hex, a space also as '+', in any mix with bytes
//     left as written (my%20secret, my+secret, %6dy%20secret) — except that
//     a '%' or '\' of the value itself must be written the same way
//     throughout one occurrence (all as written, or all escaped), as
//     encoders write them;
//   - JSON-string escaped, character by character: \", \\, \/, \b, \f, \n,
//     \r, \t, \uXXXX in either case, and a surrogate pair for a character
//     beyond U+FFFF — in any text, not only in JSON;
//   - in a JSON document (Redactor.JSON: a JSON request or response body, a
//     form record), the forms above inside every string, keys included,
//     and a number or boolean whose text equals the value, which becomes
//     the marker as a string ({"pin":483920} → {"pin":"[redacted secrets.PIN]"}).
//
// Not covered: other encodings (base64, HTML entities, double
// percent-encoding, letter case changes) and a number written differently
// (4.8392e5 for 483920).
//
// Values of MinSubstring (4) bytes or more are redacted wherever they occur,
// even inside a word. Shorter values are redacted only where they stand as
// a whole word — with no letter, digit, non-ASCII character or marker right
// before or after them — and as a whole JSON number or boolean: a
// one-character secret "C" is redacted from "Bearer C" and {"k":"C"}, not
// from "Content-Type". Such values are too short to be secrets worth the
// name; the rule keeps them from rewriting text the platform wrote.
//
// Redaction never rewrites inside its own markers: a secret's
// "[redacted secrets.KEY]" (for every key the Redactor knows) and an
// attachment's description "[attachment N: name, type, size bytes]"
// (registered by emit, with the name and type already redacted), so a
// secret whose value is "secrets" cannot nest markers. Running it twice
// changes nothing. Values are matched longest first, so a secret that
// contains another is redacted whole.
package resolve
