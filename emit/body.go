package emit

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	simd "github.com/segmentio/asm/base64"

	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
)

// chunk is a piece of a body: bytes known now, or an attachment streamed
// when the body is read (raw, or base64-encoded on the fly).
type chunk struct {
	data   []byte
	stream bool
	att    int   // attachment index of a stream
	size   int64 // decoded size of a stream
	base64 bool
}

func (c chunk) length() int64 {
	if !c.stream {
		return int64(len(c.data))
	}
	if c.base64 {
		return int64(base64.StdEncoding.EncodedLen(int(c.size)))
	}
	return c.size
}

// body is a request body laid out in chunks, replayable until an
// attachment stream fails.
type body struct {
	chunks []chunk
	atts   resolve.Attachments
	length int64
	failed atomic.Pointer[StreamError] // the first stream failure
}

// replay returns a fresh reader over the body, or the stream failure that
// cut a previous one short: a body is never sent again after part of it
// may have reached a receiver.
func (b *body) replay() (io.ReadCloser, error) {
	if se := b.failed.Load(); se != nil {
		return nil, se
	}
	return b.open(), nil
}

// builder appends bytes and streams to a body.
type builder struct {
	chunks []chunk
	buf    []byte
}

func (b *builder) flush() {
	if len(b.buf) > 0 {
		b.chunks = append(b.chunks, chunk{data: b.buf})
		b.buf = nil
	}
}

func (b *builder) stream(att int, size int64, b64 bool) {
	b.flush()
	b.chunks = append(b.chunks, chunk{stream: true, att: att, size: size, base64: b64})
}

// streams reports whether any chunk is an attachment stream.
func (b *builder) streams() bool {
	for _, c := range b.chunks {
		if c.stream {
			return true
		}
	}
	return false
}

func (b *builder) body(atts resolve.Attachments) *body {
	b.flush()
	out := &body{chunks: b.chunks, atts: atts}
	for _, c := range b.chunks {
		out.length += c.length()
	}
	return out
}

// inMemory returns the whole body when it has no attachment stream (one
// data chunk, since the builder merges adjacent bytes), else nil.
func (b *body) inMemory() []byte {
	if len(b.chunks) == 1 && !b.chunks[0].stream {
		return b.chunks[0].data
	}
	return nil
}

// open returns a fresh reader over the whole body.
func (b *body) open() io.ReadCloser {
	return &bodyReader{b: b}
}

// bodyReader reads the chunks in order, opening attachment streams lazily
// and checking that each yields exactly the bytes announced.
type bodyReader struct {
	b    *body
	i    int // current chunk
	off  int // offset in a data chunk
	cur  io.Reader
	rc   io.Closer
	left int64 // bytes the current stream must still yield
	sent int64 // bytes of the body returned so far
	err  error
}

// ErrBodyChanged reports an attachment stream that yielded more or fewer
// bytes than announced in the Content-Length: the request is aborted rather
// than sent short or long.
var ErrBodyChanged = errors.New("attachment size changed while sending")

// StreamError reports that an attachment could not be read while the body
// that carries it was being sent (the e-mail was truncated, rewritten or
// became unreadable mid-body). The body stops before its Content-Length, so
// the HTTP transport cuts the connection and no receiver can take what it
// got for a complete request; but the receiver may have seen the headers
// and part of the body. The body is never replayed after it.
type StreamError struct {
	// Attachment is the attachment whose stream failed.
	Attachment int
	// Sent is how many bytes of the body had been handed to the transport.
	Sent int64
	// Length is the Content-Length that was announced.
	Length int64
	Err    error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("attachment %d could not be read after %d of the %d body bytes were handed to the connection: %v",
		e.Attachment, e.Sent, e.Length, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for r.i < len(r.b.chunks) {
		c := r.b.chunks[r.i]
		if !c.stream {
			if r.off < len(c.data) {
				n := copy(p, c.data[r.off:])
				r.off += n
				r.sent += int64(n)
				return n, nil
			}
			r.i++
			r.off = 0
			continue
		}
		if r.cur == nil {
			if r.b.atts == nil {
				r.fail(c.att, fmt.Errorf("%w: no e-mail to read it from", eml.ErrUnreadable))
				return 0, r.err
			}
			rc, err := r.b.atts.Open(c.att)
			if err != nil {
				r.fail(c.att, err)
				return 0, r.err
			}
			r.rc = rc
			r.cur = rc
			if c.base64 {
				r.cur = newBase64Reader(rc)
			}
			r.left = c.length()
		}
		if len(p) == 0 {
			return 0, nil
		}
		if int64(len(p)) > r.left+1 {
			p = p[:r.left+1] // one byte more than due reveals a longer stream
		}
		n, err := r.cur.Read(p)
		if int64(n) > r.left {
			r.fail(c.att, fmt.Errorf("%w: more bytes than its size %d", ErrBodyChanged, c.size))
			return 0, r.err
		}
		r.left -= int64(n)
		if err == io.EOF {
			if r.left != 0 {
				// Never hand over the last bytes of a body that is short:
				// hold back what this read returned.
				r.fail(c.att, fmt.Errorf("%w: %d bytes missing", ErrBodyChanged, r.left))
				return 0, r.err
			}
			r.closeCur()
			r.i++
			if n > 0 {
				r.sent += int64(n)
				return n, nil
			}
			continue
		}
		if err != nil {
			r.fail(c.att, err)
			r.sent += int64(n)
			return n, r.err
		}
		if n == 0 {
			continue
		}
		r.sent += int64(n)
		return n, nil
	}
	return 0, io.EOF
}

// fail stops the body for good: the stream error is kept (also on the body,
// so it is never replayed) and returned by every later Read.
func (r *bodyReader) fail(att int, err error) {
	se := &StreamError{Attachment: att, Sent: r.sent, Length: r.b.length, Err: err}
	r.b.failed.CompareAndSwap(nil, se)
	r.err = se
	r.closeCur()
}

func (r *bodyReader) closeCur() {
	if r.rc != nil {
		r.rc.Close()
	}
	r.rc, r.cur = nil, nil
}

// Close releases an open attachment stream.
func (r *bodyReader) Close() error {
	r.closeCur()
	if r.err == nil {
		r.err = errors.New("emit: read after close")
	}
	return nil
}

// base64Reader encodes what it reads from src as standard base64 with
// padding, in blocks, without a goroutine or a pipe.
type base64Reader struct {
	src  io.Reader
	in   []byte
	out  []byte
	pos  int // next byte of out to serve
	end  int // bytes of out holding data
	done bool
	err  error
}

const base64Block = 3 * 16 * 1024 // a multiple of 3, so only the end is padded

func newBase64Reader(src io.Reader) *base64Reader {
	return &base64Reader{
		src: src,
		in:  make([]byte, base64Block),
		out: make([]byte, base64.StdEncoding.EncodedLen(base64Block)),
	}
}

func (r *base64Reader) Read(p []byte) (int, error) {
	for r.pos == r.end {
		if r.done {
			if r.err != nil {
				return 0, r.err
			}
			return 0, io.EOF
		}
		n, err := io.ReadFull(r.src, r.in)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			r.done = true
		} else if err != nil {
			r.done, r.err = true, err
		}
		if n > 0 {
			simd.StdEncoding.Encode(r.out, r.in[:n]) // encoding/base64's output, with AVX2 where the CPU has it
			r.pos, r.end = 0, base64.StdEncoding.EncodedLen(n)
		}
	}
	n := copy(p, r.out[r.pos:r.end])
	r.pos += n
	return n, nil
}
