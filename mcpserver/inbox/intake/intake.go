package intake

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// DefaultMaxMessageBytes is the default message size limit (25 MiB).
const DefaultMaxMessageBytes = 25 << 20

// ErrUnknownAddress reports that no inbox receives at an address.
var ErrUnknownAddress = errors.New("intake: no inbox at this address")

// ErrTryLater reports a condition that may clear (a DNS failure while
// checking the sender of an inbox that restricts senders): nothing was
// recorded and the sender should retry.
var ErrTryLater = errors.New("intake: try again later")

// Recipient is an inbox a message is delivered to.
type Recipient struct {
	Workspace string
	InboxID   string
	// Address is the inbox's address, as the inbox spells it.
	Address string
}

// Directory finds inboxes.
type Directory interface {
	// ByAddress returns the inbox receiving at an address (compared without
	// regard to case); ErrUnknownAddress when there is none.
	ByAddress(ctx context.Context, address string) (Recipient, error)
	// ByID returns an inbox of a workspace; ErrUnknownAddress when the
	// workspace has no such inbox.
	ByID(ctx context.Context, workspace, inboxID string) (Recipient, error)
}

// Envelope is how a message arrived.
type Envelope struct {
	// Via is "smtp" or "http".
	Via string
	// MailFrom is the SMTP envelope sender ("" for a bounce, and over HTTP).
	MailFrom string
	// RcptTo are the accepted recipient addresses as the client wrote them.
	RcptTo []string
	// RemoteIP is the client's address; Helo its HELO/EHLO name.
	RemoteIP net.IP
	Helo     string
	// TLS reports whether the message came over an encrypted connection.
	TLS bool
	// Protocol is how the message came, as a Received field names it: SMTP,
	// ESMTP, ESMTPS, HTTP or HTTPS.
	Protocol string
	// Principal names the token holder for HTTP ("token:ID"), "" for SMTP.
	Principal string
}

// Delivery is one received message, spooled and checked, for one or more
// inboxes.
type Delivery struct {
	Recipients []Recipient
	Envelope   Envelope
	// Host is the receiving server's name: in the Received field it
	// prepends, and the authserv-id of its Authentication-Results.
	Host string
	// Message is the raw message as received (byte-exact).
	Message *mailstore.Spool
	// Auth is the sender check.
	Auth       senderauth.Result
	ReceivedAt time.Time
}

// Receipt is the outcome recorded for one recipient.
type Receipt struct {
	Recipient Recipient
	EmailID   string
	// Rejected is true when the inbox's rules refused the e-mail; it is
	// recorded all the same, with Reason.
	Rejected bool
	Reason   string
	// SenderRefused is true when the refusal is about the sender (not
	// authenticated, or not among the inbox's allowed senders).
	SenderRefused bool
	// DuplicateOf is set when the e-mail was recorded as another copy of
	// an e-mail the inbox had already received (not processed).
	DuplicateOf string
}

// Recorder records deliveries. Record stores the raw message, an e-mail
// record per recipient (accepted, or rejected with the reason and a system
// event) and, for accepted ones, the first job, all in one transaction: when
// it returns nil everything is durable, when it returns an error nothing is
// (ErrTryLater for a condition that may clear).
type Recorder interface {
	Record(ctx context.Context, d *Delivery) ([]Receipt, error)
}

// Spooler creates the spool files incoming messages are written to
// (mailstore.Dir and mailstore.LargeObjects are Spoolers).
type Spooler interface {
	NewSpool(limit int64) (*mailstore.Spool, error)
}

// normalizeAddress lowercases an address for lookup and checks its shape.
func normalizeAddress(a string) (string, error) {
	a = strings.TrimSpace(a)
	at := strings.LastIndexByte(a, '@')
	if at <= 0 || at == len(a)-1 || strings.ContainsAny(a, " \t\r\n<>") {
		return "", fmt.Errorf("intake: %q is not an address", a)
	}
	return strings.ToLower(a), nil
}
