// Package intake receives the Inbox's mail: an SMTP server for the inboxes'
// addresses and an HTTP endpoint where a service that already receives mail
// posts raw messages. It answers 250 (or HTTP 2xx) only once the message is
// stored durably and its records are committed; on any internal failure it
// answers 4xx so the sender retries, and nothing is left half-stored.
//
// Entry points:
//
//   - Server is the SMTP server (github.com/emersion/go-smtp): Serve on a
//     listener, Shutdown to stop. It accepts RCPT only for addresses its
//     Directory knows (anything else: 550 5.1.1 — it never relays), limits
//     message size (552, also while DATA streams), recipients per message,
//     line length and time (idle and total, per command and during DATA),
//     offers STARTTLS when given a certificate, and PIPELINING, 8BITMIME,
//     BINARYMIME (CHUNKING) and SMTPUTF8.
//   - Handler is the HTTP endpoint: POST /inboxes/{inbox_id}/messages with a
//     message/rfc822 body and a bearer token with the write scope in the
//     inbox's workspace.
//   - Both spool the message to a file (mailstore.Spool), check the sender
//     (senderauth) and hand a Delivery to a Recorder, which stores the raw
//     message, the e-mail record (accepted, or rejected with the reason and
//     a system event) and the first job in one transaction.
//   - Directory (address → inbox) and Recorder are interfaces; Recorder's
//     outcome decides the reply: receipts → 250, a refusal of every recipient
//     → 550 5.7.x, ErrTryLater or any other error → 451.
//
// Sender authentication (docs/pipeline.md): over SMTP SPF, DKIM and DMARC
// are checked and recorded; an inbox with allowed senders matches them
// against the authenticated identity only (an unauthenticated sender is
// refused and recorded; a DNS failure answers 451 so the sender retries); an
// open inbox records the results and accepts. Over HTTP there is no SMTP
// client to check SPF against: DKIM and DMARC are checked on the message.
package intake
