package eml

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
)

// decodedBody returns a reader of a leaf's bytes with its
// Content-Transfer-Encoding undone. The bytes are never converted between
// charsets: a text attachment comes out exactly as the sender encoded it.
func decodedBody(l *leaf, encoding string) (io.Reader, error) {
	switch encoding {
	case "", "7bit", "8bit", "binary":
		return l.body, nil
	case "quoted-printable":
		return quotedprintable.NewReader(l.body), nil
	case "base64":
		return newBase64Reader(l.body), nil
	default:
		return nil, fmt.Errorf("%w: unknown Content-Transfer-Encoding %q", ErrMalformed, encoding)
	}
}

// bodyError explains why decoding a leaf's body failed: an I/O error of the
// source is ErrUnreadable, a truncated message or broken structure and
// invalid encoded data are ErrMalformed.
func (w *walker) bodyError(l *leaf, encoding string, err error) error {
	if w.src.err != nil || l.body.err != nil {
		if l.body.err != nil {
			err = l.body.err
		}
		return w.cause("reading the part", err)
	}
	var corrupt base64.CorruptInputError
	switch {
	case errors.As(err, &corrupt):
		return fmt.Errorf("%w: invalid base64 at character %d of the encoded data (line breaks and blanks not counted)", ErrMalformed, int64(corrupt))
	case encoding == "base64" && errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: base64 data ends in the middle of a 4-character group (truncated?)", ErrMalformed)
	case encoding == "quoted-printable":
		return fmt.Errorf("%w: invalid quoted-printable: %v", ErrMalformed, err)
	default:
		return fmt.Errorf("%w: decoding the part: %v", ErrMalformed, err)
	}
}
