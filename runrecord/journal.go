package runrecord

import (
	"context"
	"strconv"
	"strings"
)

// Journal is told what a run does as it does it. The executor drives it;
// it stores nothing itself. A Journal belongs to one run.
type Journal interface {
	// Identity returns the identity of step i of the run, or "" to send
	// none. It must be the same for every attempt at the step, so that a
	// receiver can tell a second copy from new work.
	Identity(i int) string
	// Sending is called once step s's request is rendered and checked and
	// before its first byte leaves, with s as it stands then: state
	// Sending, its identity, its request record (redacted). An error
	// refuses the request: the step fails before sending, with
	// ReasonNotRecorded, so nothing is sent that the journal would not show.
	Sending(ctx context.Context, s Step) error
	// Done is called with every step's final record, redacted, whether it
	// was sent or not, in step order. An error stops the run: the steps
	// after it are not sent (skipped, ReasonNotRecorded).
	Done(ctx context.Context, s Step) error
}

// DoneFunc is a Journal that gives no identity, lets every request go and
// calls itself with each step's final record: progress lines, counters.
type DoneFunc func(s Step)

// Identity implements Journal: none.
func (DoneFunc) Identity(int) string { return "" }

// Sending implements Journal: every request may go.
func (DoneFunc) Sending(context.Context, Step) error { return nil }

// Done implements Journal.
func (f DoneFunc) Done(_ context.Context, s Step) error {
	f(s)
	return nil
}

// Names of the headers that carry a step's identity. Both are the
// platform's: a step may not set X-Kobana-* names (the compiler refuses
// them), and the Idempotency-Key it sets itself is sent as it wrote it.
const (
	// HeaderStepID carries the step's identity on every request that has one.
	HeaderStepID = "X-Kobana-Step-Id"
	// HeaderIdempotencyKey carries it too, as an Idempotency-Key (the IETF
	// httpapi draft: a structured-field string, quoted), on the requests
	// whose method is not idempotent (POST, PATCH), unless the step sets
	// one.
	HeaderIdempotencyKey = "Idempotency-Key"
)

// StepID is the identity of step i of the run whose id is run: "run/i".
func StepID(run string, i int) string { return run + "/" + strconv.Itoa(i) }

// NeedsIdempotencyKey reports whether a request with method is sent with
// an Idempotency-Key: the methods HTTP does not define as idempotent.
func NeedsIdempotencyKey(method string) bool {
	return strings.EqualFold(method, "POST") || strings.EqualFold(method, "PATCH")
}

// IdempotencyKey is the Idempotency-Key value of a step's identity: id as
// a structured-field string (RFC 8941 §3.3.3). An identity is printable
// ASCII; a quote or a backslash in it is escaped, anything else outside
// printable ASCII dropped.
func IdempotencyKey(id string) string {
	var b strings.Builder
	b.Grow(len(id) + 2)
	b.WriteByte('"')
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
