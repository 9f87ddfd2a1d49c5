package eml

import (
	"errors"
	"fmt"
)

// ErrUnreadable reports that the .eml could not be read at all: its source
// failed to open or a read from it failed (for example because the message was
// purged by retention). Match it with errors.Is; the underlying cause (such as
// fs.ErrNotExist) is wrapped beside it.
var ErrUnreadable = errors.New("email cannot be read")

// ErrMalformed reports that the .eml is not a MIME message this package can
// read safely: a truncated message (a multipart that ends without its closing
// boundary counts as one, since its last part may be cut short), a broken
// boundary, an attachment whose transfer encoding is invalid or unknown, or a
// message beyond one of the limits MaxParts, MaxDepth and MaxHeaderBytes.
// Text body parts are never decoded, so their encoding errors do not count.
var ErrMalformed = errors.New("malformed email")

// ErrChanged reports that the .eml read by Message.Open is not the one that
// was read when the Message was made: its size, its structure or the size of
// the requested attachment differ.
var ErrChanged = errors.New("email changed after it was first read")

// IndexError reports a reference to an attachment the e-mail does not have.
type IndexError struct {
	Index int // the attachment asked for
	Count int // how many attachments the e-mail has
}

// Error says how many attachments there are and which one is missing.
func (e *IndexError) Error() string {
	switch e.Count {
	case 0:
		return fmt.Sprintf("email has no attachments; attachment %d does not exist", e.Index)
	case 1:
		return fmt.Sprintf("email has 1 attachment; attachment %d does not exist", e.Index)
	default:
		return fmt.Sprintf("email has %d attachments; attachment %d does not exist", e.Count, e.Index)
	}
}
