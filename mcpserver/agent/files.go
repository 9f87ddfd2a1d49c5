package agent

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve/eml"
)

// fileKinds are the media types a model may read as a file input, and the
// content part each is sent as: "file" (a document) or "image_url".
var fileKinds = map[string]string{
	"application/pdf": "file",
	"image/png":       "image_url",
	"image/jpeg":      "image_url",
	"image/gif":       "image_url",
	"image/webp":      "image_url",
}

// fileInput is an attachment sent to the model as a content part, its bytes
// streamed from the e-mail into the request body.
type fileInput struct {
	att  eml.Attachment
	kind string // "file" or "image_url"
	// placeholder stands for the part's data URL in the encoded params
	// until the body is streamed.
	placeholder string
}

// chooseFiles picks, in message order, the attachments sent as file inputs:
// documents of a kind a model reads, while their sizes add up to at most
// limit bytes. notes says, for each attachment, whether it is attached or
// why not, for the prompt.
func chooseFiles(atts []eml.Attachment, limit int64) (chosen []fileInput, notes map[int]string) {
	notes = make(map[int]string, len(atts))
	nonce := make([]byte, 16)
	rand.Read(nonce)
	var total int64
	for _, a := range atts {
		kind, ok := fileKinds[a.ContentType]
		switch {
		case !ok:
			notes[a.Index] = fmt.Sprintf("not attached: the model reads PDF and image files, not %s", a.ContentType)
		case total+a.Size > limit:
			notes[a.Index] = fmt.Sprintf("not attached: it would pass this agent's limit of %d bytes of files", limit)
		default:
			total += a.Size
			notes[a.Index] = "attached for you to read"
			chosen = append(chosen, fileInput{att: a, kind: kind,
				placeholder: fmt.Sprintf("kobana-file-%s-%d", hex.EncodeToString(nonce), a.Index)})
		}
	}
	return chosen, notes
}

// dataURLPrefix is what the data URL of a file input starts with.
func (f fileInput) dataURLPrefix() string { return "data:" + f.att.ContentType + ";base64," }

// streamedBody is a request body whose file inputs are read from the
// e-mail as the body is sent: params is the encoded request, each file's
// placeholder (a JSON string) replaced by the file's data URL.
type streamedBody struct {
	r    io.Reader
	size int64
}

// newStreamedBody lays out the body of params with files streamed from msg.
func newStreamedBody(params []byte, files []fileInput, msg *eml.Message) (*streamedBody, error) {
	var readers []io.Reader
	rest := params
	var size int64
	for _, f := range files {
		quoted := []byte(`"` + f.placeholder + `"`)
		i := bytes.Index(rest, quoted)
		if i < 0 {
			return nil, fmt.Errorf("file input %d is missing from the encoded request", f.att.Index)
		}
		head := append(rest[:i:i], `"`+f.dataURLPrefix()...)
		readers = append(readers, bytes.NewReader(head), &attachmentReader{msg: msg, att: f.att}, strings.NewReader(`"`))
		size += int64(len(head)) + int64(base64.StdEncoding.EncodedLen(int(f.att.Size))) + 1
		rest = rest[i+len(quoted):]
	}
	readers = append(readers, bytes.NewReader(rest))
	size += int64(len(rest))
	return &streamedBody{r: io.MultiReader(readers...), size: size}, nil
}

func (b *streamedBody) Read(p []byte) (int, error) { return b.r.Read(p) }

// AttachmentError says an attachment could not be read while it was being
// sent to the model; the request was cut short, so the model never saw a
// body that looked complete.
type AttachmentError struct {
	Index int
	Err   error
}

func (e *AttachmentError) Error() string {
	return fmt.Sprintf("attachment %d could not be read for the model: %v", e.Index, e.Err)
}

func (e *AttachmentError) Unwrap() error { return e.Err }

// attachmentReader is the base64 of one attachment, opened when first read
// and encoded as it is read; it fails if the attachment does not yield
// exactly the bytes its size says.
type attachmentReader struct {
	msg  *eml.Message
	att  eml.Attachment
	src  io.ReadCloser
	in   [3 * 1024]byte
	enc  [4 * 1024]byte
	out  []byte
	n    int64
	done bool
}

func (r *attachmentReader) Read(p []byte) (int, error) {
	if len(r.out) == 0 {
		if r.done {
			return 0, io.EOF
		}
		if err := r.fill(); err != nil {
			r.close()
			r.done = true
			return 0, &AttachmentError{Index: r.att.Index, Err: err}
		}
		if len(r.out) == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

func (r *attachmentReader) fill() error {
	if r.src == nil {
		rc, err := r.msg.Open(r.att.Index)
		if err != nil {
			return err
		}
		r.src = rc
	}
	n, err := io.ReadFull(r.src, r.in[:])
	r.n += int64(n)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		r.close()
		r.done = true
		if r.n != r.att.Size {
			return fmt.Errorf("it gave %d bytes, not the %d its size says", r.n, r.att.Size)
		}
	default:
		return err
	}
	if r.n > r.att.Size {
		return fmt.Errorf("it gave more than the %d bytes its size says", r.att.Size)
	}
	r.out = base64.StdEncoding.AppendEncode(r.enc[:0], r.in[:n])
	return nil
}

func (r *attachmentReader) close() {
	if r.src != nil {
		r.src.Close()
		r.src = nil
	}
}

// openMessage reads the attachments of an e-mail's stored message.
func openMessage(m inbox.Message) (*eml.Message, error) {
	return eml.New(m, m.Size())
}
