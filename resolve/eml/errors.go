package eml

import (
	"errors"
	"fmt"
)

// ErrUnreadable reports that the .eml could not be read: its source failed
// to open, a read from it failed, or it ends before the size it was given
// (for example because the message was purged by retention before the run
// opened it). Match it with errors.Is; the underlying cause (such as
// fs.ErrNotExist) is wrapped beside it.
var ErrUnreadable = errors.New("email cannot be read")

// ErrMalformed reports a message beyond one of the safety limits MaxParts
// and MaxHeaderBytes. Anything else a message gets wrong is read leniently
// and recorded as a Defect.
var ErrMalformed = errors.New("malformed email")

// ErrChanged reports that the .eml is not the one first read: it was
// truncated, grew, or its bytes were rewritten (the attachment's bytes no
// longer match their CRC-32C, or a file's size or modification time
// differs).
var ErrChanged = errors.New("email changed after it was first read")

// ErrBadIndex reports an Index that cannot describe the message it was given
// with: another version, another size, or parts that do not fit.
var ErrBadIndex = errors.New("index does not fit the email")

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
