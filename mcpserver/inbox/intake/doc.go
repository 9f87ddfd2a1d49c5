// Package intake receives the Inbox's mail: an SMTP server for the inboxes'
// addresses and an HTTP endpoint where a service that already receives mail
// posts raw messages. It answers 250 (or HTTP 202) only for a message that
// arrived whole, once it is stored durably and its records are committed;
// on any internal failure it answers 4xx (HTTP 503) so the sender retries,
// and nothing is left half-stored.
//
// Entry points:
//
//   - Server is the SMTP server (github.com/emersion/go-smtp): Serve on a
//     listener, Shutdown to stop. It accepts RCPT only for addresses its
//     Directory knows (anything else: 550 5.1.1 — it never relays), limits
//     message size (552, also while DATA streams), recipients per message,
//     command lines (message lines have no limit), time (idle and total,
//     per command and during DATA) and connections (421), offers STARTTLS
//     when given a certificate, and PIPELINING, 8BITMIME, BINARYMIME
//     (CHUNKING) and SMTPUTF8. Each connection passes through a wire that
//     frames the stream as go-smtp does, so that a message cut inside a BDAT
//     chunk is refused, out-of-sequence commands are answered 503 and replies
//     are printable ASCII (docs/go-smtp-upstream.md); the wire runs STARTTLS.
//   - Handler is the HTTP endpoint: POST /inboxes/{inbox_id}/messages with a
//     message/rfc822 body and a bearer token with the write scope in the
//     inbox's workspace (Tokens; IdentityTokens adapts the store's lookup).
//   - Both spool the message (mailstore.Spool), check the sender
//     (senderauth) and hand a Delivery to a Recorder.
//   - StoreRecorder is the Recorder over the store: it prepends the trace
//     fields (Return-Path, Received, Authentication-Results), reads the
//     message once (its part index, eml.ReadIndex, and from it each
//     recipient's e-mail record, inbox.ReadEmailIndexed; the text of an
//     HTML-only message), screens it (inbox.Screen, a paused inbox, the
//     plan's monthly e-mails counted with store.Counters), claims it for the
//     inbox (KindEmailDedup: another copy within DedupWindow is recorded as
//     a duplicate and runs nothing), and writes in one store transaction the
//     raw message (mailstore.Store: Prepare before the transaction, KeepTx
//     inside it), the e-mail record (accepted, a duplicate, or rejected with
//     the reason), its system event (email.received, email.duplicate or
//     email.rejected), its part index (KindEmailIndex, read back with
//     LoadIndex) and, for an accepted e-mail, its agent job
//     (queue.AgentArgs). Deliveries arriving together share one transaction
//     (group commit, Batches at once). Its Events hook runs in that
//     transaction with each event (the pipeline adds the events' webhook
//     deliveries there).
//   - StoreDirectory finds inboxes by address (LOCAL@LABEL.in.kobana.email,
//     LABEL the workspace's slug or id) and by id.
//   - Sweep removes what a crash leaves in the raw store: spools of cut-off
//     receipts and, with files, messages no record names.
//
// Replies: receipts → 250 (HTTP 202); every recipient refused for its
// sender → 550 5.7.1 (recorded all the same); ErrTryLater → 451 4.7.0;
// any other error → 451 4.3.0 (HTTP 503 with Retry-After).
//
// Sender authentication (docs/pipeline.md): over SMTP SPF, DKIM and DMARC
// are checked and recorded (through a trusted relay, SPF for the client it
// received the message from); an inbox with allowed senders matches them
// against the authenticated identity only (an unauthenticated sender is
// refused and recorded; a DNS failure that could authenticate the sender
// answers 451 so the sender retries); an open inbox records the results and
// accepts. Over HTTP there is no SMTP client to check SPF against: DKIM and
// DMARC are checked on the message.
package intake
