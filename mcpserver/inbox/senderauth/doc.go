// Package senderauth tells who really sent an incoming e-mail: it checks
// SPF (the connecting IP against the envelope sender's domain), DKIM (the
// message's signatures) and DMARC (the From: domain's policy and alignment),
// and derives the authenticated identity: the From: address when a passing
// SPF or DKIM result is aligned with its domain. An inbox's allowed senders
// are matched against that identity only, so a forged From: never passes.
//
// Entry points:
//
//   - Checker.Check runs the three checks on one message and returns a
//     Result: each mechanism's outcome ("pass", "fail", "softfail",
//     "neutral", "none", "temperror", "permerror"), the DMARC policy and
//     alignment, and Authenticated (the aligned From: address, or "").
//   - Resolver is the DNS the checks use; *net.Resolver satisfies it and
//     NewResolver points one at a given DNS server (a local one in tests).
//   - Result.Trust says what an inbox with allowed senders should do:
//     Authenticated, Unauthenticated, or Unknown (a DNS failure that could
//     have authenticated the sender: ask the sender to retry later; a
//     failure that could not, such as the key of a signature of another
//     domain than the From: one, does not delay the decision).
//   - Checker.TrustedRelays and Checker.TrustedAuthservIDs let a gateway in
//     front of the server (a Postfix) hand mail on: for mail from those
//     networks only, SPF is judged for the first client outside them that
//     their Received fields name (Result.Client), or taken from their
//     Authentication-Results for a trusted authserv-id; DKIM is always
//     verified here.
//   - Result.AuthenticationResults writes the results as the RFC 8601
//     header field the receiving server prepends to the stored message.
//
// SPF is blitiri.com.ar/go/spf; DKIM and DMARC
// records are github.com/emersion/go-msgauth; the organizational domain for
// relaxed alignment is golang.org/x/net/publicsuffix.
package senderauth
