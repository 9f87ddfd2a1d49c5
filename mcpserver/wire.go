package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The framework answers some requests itself and must put on the wire what
// the SDK would have: these wrappers adjust the JSON of a result and are
// served in its place (they embed the result, so they remain mcp.Results).

// completeRead is a resources/read result on 2026-07-28: the framework
// serves reads itself (see Server.middleware), so it stamps the resultType
// the protocol requires there.
type completeRead struct{ *mcp.ReadResourceResult }

// MarshalJSON adds "resultType": "complete" (the embedded result has no
// resultType of its own: the SDK never saw it).
func (r completeRead) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.ReadResourceResult)
	if err != nil {
		return nil, err
	}
	return withMember(b, "resultType", `"complete"`), nil
}

// inputRequired is a tools/call result asking for input: the SDK writes its
// (necessarily empty) content as "content": null, which is no member of an
// InputRequiredResult; it is left out.
type inputRequired struct{ *mcp.CallToolResult }

// MarshalJSON drops the null content.
func (r inputRequired) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.CallToolResult)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, err
	}
	if c, ok := members["content"]; ok && bytes.Equal(bytes.TrimSpace(c), []byte("null")) {
		delete(members, "content")
	}
	return json.Marshal(members)
}

// withMember appends "key": value to the JSON object obj, which must not
// have that key yet.
func withMember(obj []byte, key, value string) []byte {
	end := bytes.LastIndexByte(obj, '}')
	if end < 0 {
		return obj
	}
	head := bytes.TrimSpace(obj[:end])
	out := make([]byte, 0, len(obj)+len(key)+len(value)+4)
	out = append(out, head...)
	if !bytes.Equal(head, []byte("{")) {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, value...)
	return append(out, '}')
}

// maxExactID is the largest integer id the SDK echoes exactly: it decodes
// a numeric id into a float64 and answers with that float64 as an int64,
// so 1.5 is answered as 1 and 2^63 as -2^63 (go-sdk
// internal/jsonrpc2.MakeID).
const maxExactID = 1 << 53

// messageKind is what a JSON-RPC message is, as checkMessage judges it.
type messageKind int

const (
	kindRequest      messageKind = iota + 1 // a call: method and id
	kindNotification                        // method, no id
	kindResponse                            // id and a result or an error
)

// message is a JSON-RPC 2.0 message checkMessage accepted.
type message struct {
	kind   messageKind
	method string
	// id is the id as sent and key the id as the SDK answers it: "s" and
	// the string, or "n" and the integer.
	id  json.RawMessage
	key string
}

// invalid is why a JSON-RPC message is refused: the error to answer, and
// the id to answer it with (nil: null, the id being unusable).
type invalid struct {
	code int
	msg  string
	id   json.RawMessage
}

func (e *invalid) Error() string { return e.msg }

// answer is the JSON-RPC error object e answers with.
func (e *invalid) answer() []byte {
	return errorAnswer(e.id, e.code, e.msg)
}

// errorAnswer is a JSON-RPC error response; a nil id is written null.
func errorAnswer(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}

const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
	codeInvalidParams  = -32602
)

// checkMessage judges one JSON value as a JSON-RPC 2.0 message the way the
// MCP specification reads it: an object with "jsonrpc": "2.0" (member names
// match exactly, not ignoring case), a request's id a string or an integer
// the server can echo exactly (never null), a response's a result or an
// error, never neither. What it refuses is an *invalid (-32600 Invalid
// Request).
func checkMessage(raw []byte) (message, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return message{}, &invalid{code: codeInvalidRequest, msg: "Invalid Request: a JSON-RPC message is a JSON object"}
	}
	var m message
	idRaw, hasID := members["id"]
	var idErr string
	if hasID {
		m.id, m.key, idErr = checkID(idRaw)
	}
	refuse := func(msg string) (message, error) {
		return message{}, &invalid{code: codeInvalidRequest, msg: "Invalid Request: " + msg, id: m.id}
	}
	if v, ok := members["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return refuse(`"jsonrpc" must be "2.0"`)
	}
	methodRaw, hasMethod := members["method"]
	_, hasResult := members["result"]
	_, hasError := members["error"]
	switch {
	case hasMethod:
		if json.Unmarshal(methodRaw, &m.method) != nil || bytes.TrimSpace(methodRaw)[0] != '"' {
			return refuse(`"method" must be a string`)
		}
		if hasResult || hasError {
			return refuse("a message is a request or a response, not both")
		}
		if p, ok := members["params"]; ok {
			if c := bytes.TrimSpace(p); len(c) == 0 || (c[0] != '{' && c[0] != '[') {
				return refuse(`"params" must be an object`)
			}
		}
		m.kind = kindNotification
		if hasID {
			m.kind = kindRequest
		}
	case hasResult && hasError:
		return refuse("a response has a result or an error, not both")
	case hasResult || hasError:
		if !hasID {
			return refuse("a response needs the id of its request")
		}
		m.kind = kindResponse
	case hasID:
		return refuse(`a message with an id and no "method" is neither a request nor a response`)
	default:
		return refuse(`no "method"`)
	}
	if idErr != "" {
		return refuse(idErr)
	}
	return m, nil
}

// checkID judges an id: echo is what to answer an error with (nil when the
// id is no string or number), key the id as the SDK answers it, and why
// the SDK cannot echo it (empty when it can).
func checkID(raw json.RawMessage) (echo json.RawMessage, key, why string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, "", "the id must be a string or an integer"
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, "", "the id must be a string or an integer"
		}
		return raw, "s" + s, ""
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) {
			return raw, "", "the id must be a string or an integer"
		}
		if f > maxExactID || f < -maxExactID {
			return raw, "", fmt.Sprintf("an integer id must lie within ±2^53 (%d)", int64(maxExactID))
		}
		// The text must be the integer itself: 1e2 and 1.0 are answered 100
		// and 1, which a client comparing ids as text would not pair.
		if n := int64(f); strconv.FormatInt(n, 10) != string(raw) && !(n == 0 && string(raw) == "-0") {
			return raw, "", "an integer id must be written as digits only"
		}
		return raw, "n" + strconv.FormatInt(int64(f), 10), ""
	case c == 'n':
		return nil, "", "the id of a request must not be null"
	}
	return nil, "", "the id must be a string or an integer"
}

// maxErrorMessage bounds the message of an error answer: a longer one is
// cut (it may echo the input).
const maxErrorMessage = 300

// fixAnswer makes the error of a JSON-RPC answer one a client can read: the
// SDK answers params it could not decode with "handling 'initialize': json:
// cannot unmarshal …" (Go's type names and the input, code 0 or -32602), a
// second initialize with code 0, and some errors with a message of any
// length, and the SDK leaves the id out of an error about a notification
// (JSON-RPC 2.0 wants null). A code 0 becomes -32602 Invalid params for params the SDK could
// not decode, -32600 Invalid Request for a second initialize and -32603
// Internal error otherwise; the message of params that could not be decoded
// names the member at fault only; a long message is cut. Anything else is
// returned as it is.
func fixAnswer(answer []byte) []byte {
	if !bytes.Contains(answer, []byte(`"error"`)) {
		return answer
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    *int64          `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &m) != nil || m.Error == nil {
		return answer
	}
	code, msg := int64(0), m.Error.Message
	if m.Error.Code != nil {
		code = *m.Error.Code
	}
	decoding := strings.HasPrefix(msg, "handling '")
	if code != 0 && !decoding && len(msg) <= maxErrorMessage && len(m.ID) > 0 {
		return answer
	}
	if c, plain := errorCodeOf(msg); code == 0 || decoding {
		if code == 0 {
			code = c
		}
		msg = plain
	}
	msg = clip(msg, maxErrorMessage)
	e := m.Error
	e.Code, e.Message = &code, msg
	if len(m.ID) == 0 {
		m.ID = json.RawMessage("null")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return answer
	}
	return b
}

// errorCodeOf gives an error the SDK answered with code 0 a code and a
// message without Go's type names or the input.
func errorCodeOf(msg string) (int64, string) {
	switch {
	case strings.HasPrefix(msg, "handling '"):
		method, _, _ := strings.Cut(strings.TrimPrefix(msg, "handling '"), "'")
		reason := "they do not match the method's schema"
		if i := strings.Index(msg, "Go struct field "); i >= 0 {
			field, _, _ := strings.Cut(msg[i+len("Go struct field "):], " ")
			if j := strings.LastIndexByte(field, '.'); j >= 0 && j+1 < len(field) {
				reason = fmt.Sprintf("%q has the wrong type", clip(field[j+1:], 80))
			}
		} else if strings.Contains(msg, "cannot unmarshal") {
			reason = "they have the wrong type"
		}
		return codeInvalidParams, fmt.Sprintf("Invalid params of %s: %s", clip(method, 80), reason)
	case strings.Contains(msg, `duplicate "initialize"`):
		return codeInvalidRequest, "Invalid Request: the session is initialized already"
	}
	return codeInternalError, "Internal error: " + clip(msg, 200)
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
