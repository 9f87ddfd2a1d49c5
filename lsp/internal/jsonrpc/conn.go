package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Version is the only JSON-RPC version spoken.
const Version = "2.0"

// Standard error codes of JSON-RPC 2.0 and the Language Server Protocol.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
	CodeRequestCancelled     = -32800
)

// DefaultMaxMessage is the largest message body Read accepts unless the Conn
// is told otherwise.
const DefaultMaxMessage = 32 << 20

// Message is one JSON-RPC message: a request (ID and Method), a notification
// (Method, no ID) or a response (ID with Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest reports whether m expects a response.
func (m *Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// Error is the error object of a response.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FramingError is a malformed header block or body. After one the stream
// cannot be read any further: message boundaries are lost.
type FramingError struct {
	Reason string
}

func (e *FramingError) Error() string { return "jsonrpc: malformed message: " + e.Reason }

// Conn is a JSON-RPC connection over a byte stream.
type Conn struct {
	r *bufio.Reader
	// MaxMessage bounds the body of a message Read accepts, in bytes.
	MaxMessage int

	wmu sync.Mutex
	w   io.Writer
}

// NewConn returns a Conn reading from r and writing to w.
func NewConn(r io.Reader, w io.Writer) *Conn {
	return &Conn{r: bufio.NewReader(r), w: w, MaxMessage: DefaultMaxMessage}
}

// Read returns the next message. At the end of the stream it returns io.EOF
// (io.ErrUnexpectedEOF inside a message); a framing problem is a
// *FramingError. A body that is not a JSON-RPC message is returned as an
// *Error with CodeParseError or CodeInvalidRequest: the stream is intact and
// the caller should answer it and read on.
func (c *Conn) Read() (*Message, error) {
	length := -1
	first := true
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && first && line == "" {
				return nil, io.EOF
			}
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		first = false
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, &FramingError{Reason: fmt.Sprintf("header line %q has no colon", line)}
		}
		value = strings.TrimSpace(value)
		switch {
		case strings.EqualFold(strings.TrimSpace(name), "Content-Length"):
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return nil, &FramingError{Reason: fmt.Sprintf("Content-Length %q is not a length", value)}
			}
			length = n
		case strings.EqualFold(strings.TrimSpace(name), "Content-Type"):
			if !strings.Contains(strings.ToLower(value), "json") {
				return nil, &FramingError{Reason: fmt.Sprintf("Content-Type %q is not JSON", value)}
			}
		}
	}
	if length < 0 {
		return nil, &FramingError{Reason: "no Content-Length header"}
	}
	if length > c.MaxMessage {
		return nil, &FramingError{Reason: fmt.Sprintf("a message of %d bytes is over the limit of %d", length, c.MaxMessage)}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return decode(body)
}

// decode reads one message body.
func decode(body []byte) (*Message, error) {
	var m Message
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, Errorf(CodeInvalidRequest, "invalid message: %v", err)
		}
		return nil, Errorf(CodeParseError, "the message is not JSON: %v", err)
	}
	if dec.More() {
		return nil, Errorf(CodeParseError, "the message holds more than one JSON value")
	}
	if m.JSONRPC != Version {
		return nil, Errorf(CodeInvalidRequest, "invalid message: jsonrpc is %q, want %q", m.JSONRPC, Version)
	}
	if string(m.ID) == "null" && m.Method == "" {
		return &m, nil // a response to a message whose id could not be read
	}
	if len(m.ID) > 0 && !validID(m.ID) {
		return nil, Errorf(CodeInvalidRequest, "invalid message: an id is a number or a string, not %s", m.ID)
	}
	if m.Method == "" && len(m.ID) == 0 {
		return nil, Errorf(CodeInvalidRequest, "invalid message: neither a method nor an id")
	}
	return &m, nil
}

// validID reports whether id is a JSON number or string (null is treated as
// no id).
func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"':
		return true
	case 'n':
		return false
	}
	_, err := strconv.ParseFloat(string(id), 64)
	return err == nil
}

// Reply answers the request with the given id: with result, or with err when
// it is not nil. A nil id answers a message whose id could not be read.
func (c *Conn) Reply(id json.RawMessage, result any, err *Error) error {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if err != nil {
		return c.write(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *Error          `json:"error"`
		}{Version, id, err})
	}
	return c.write(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{Version, id, result})
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.write(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{Version, method, params})
}

// Request sends a request with the given id; the answer arrives through Read.
func (c *Conn) Request(id int64, method string, params any) error {
	return c.write(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{Version, id, method, params})
}

func (c *Conn) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("jsonrpc: encoding a message: %w", err)
	}
	msg := make([]byte, 0, len(body)+32)
	msg = append(msg, "Content-Length: "...)
	msg = strconv.AppendInt(msg, int64(len(body)), 10)
	msg = append(msg, "\r\n\r\n"...)
	msg = append(msg, body...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(msg)
	return err
}
