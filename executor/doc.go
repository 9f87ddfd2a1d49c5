// Package executor runs a compiled workflow Plan: step by step, behind the
// SSRF guard of package executor/guard, returning the redacted run record
// (package runrecord's Run).
//
// New builds an Executor from Options (guard, network, timeouts, capture
// limit) and Executor.Run runs one plan against an Env (secrets, run
// facts, the e-mail's attachments, the journal). Each step ends succeeded,
// failed (before sending: a missing secret or attachment, a null or
// missing path, a reference to its own or a later step's response, a
// control character after substitution, a denied address, a journal that
// cannot record it; a request that never reached its receiver whole: a
// refused connection, a failed TLS handshake, a connection lost or a
// timeout before its last byte was written; or an unexpected status),
// skipped (it uses the response of a step that failed or was skipped, or
// the run ended before it) or unknown (its request was written whole and
// no complete answer came — a reset, a close, half a response, a timeout
// — or the run was stopped, its context cancelled, while the request may
// have left: the receiver may have acted on it, so it is never recorded as
// failed, and a resume sends it again with its identity). Later
// independent steps still run after a failure, but nothing is sent after
// an unknown step (a resume sends the steps after it); the run fails if
// any step did not succeed.
//
// A step is sent once. The transport is guard.SendOnce's: net/http would
// send a GET, or a request with an Idempotency-Key, again by itself on a
// new connection after a reused one failed, and HTTP/2 would after a
// refused or reset stream; SendOnce stops every attempt after one that
// may have put a byte of the request on the wire.
//
// The executor stores nothing: it drives the run's runrecord.Journal
// (Env.Journal). Before a step's first byte leaves, Journal.Sending hears
// of it — an error refuses the request, so nothing is sent that the
// journal would not show — and once the step has its outcome, Journal.Done
// gets its final record (an error stops the run: later steps are not
// sent). Journal.Identity gives each step its identity, which the request
// carries (runrecord.HeaderStepID, and an Idempotency-Key on a POST or
// PATCH whose step sets none) and the record shows. The Inbox's pipeline
// implements the journal on its store; runrecord.DoneFunc prints progress.
//
// The run record says what was sent and received, with no secret value
// and no attachment byte: the request part is rendered and redacted by
// package emit (its URL is the URL sent), and every other byte of a step
// record — label, error, response headers and body — crosses the run's
// resolve.Redactor once, when the step ends, before the journal or anyone
// else sees it. A response body is redacted whole (a JSON body as JSON),
// then clipped to RecordBodyLimit; its size is the number of bytes
// received.
//
// A run that references the e-mail opens it when it starts and reads that
// one snapshot until it ends. If an attachment cannot be read in the middle
// of a step's body, the request is cut off before its Content-Length (the
// connection closes; the next step dials anew) and the step is recorded as
// failed with ReasonUploadAborted and PartialUpload: the receiver may have
// received part of the request, never a complete one.
//
// Env.Resume takes up an earlier run that did not end: the steps it ended
// are not sent again (their recorded responses answer references to them,
// as far as the record holds them whole; a step that needs one it does not
// fails before sending with runrecord.ReasonResponseUnavailable), and the
// run goes on from the step whose outcome was unknown.
//
// Executor.Run is the one way to run: it takes the Plan compile.Compile
// returned for a document without errors (a document with errors has no
// Plan, and nothing to send).
//
// Options.Network is the one network seam: the executor always builds its
// transport from the guard (guard.Guard.TransportVia), and a Network's own
// dialer is checked on the address each connection reached, so no option
// sends a request where the guard would not.
//
// An Executor is safe for concurrent use: many runs share one transport.
package executor
