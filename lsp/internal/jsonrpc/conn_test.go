package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func frame(body string) string {
	return "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestReadMessages(t *testing.T) {
	second := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	third := `{"jsonrpc":"2.0","id":"a","result":1}`
	in := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":1}}`) +
		"content-length: " + itoa(len(second)) + "\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + second +
		"Content-Length:  " + itoa(len(third)) + "\n\n" + third
	c := NewConn(strings.NewReader(in), io.Discard)
	m, err := c.Read()
	if err != nil || !m.IsRequest() || m.Method != "initialize" || string(m.ID) != "1" || string(m.Params) != `{"x":1}` {
		t.Fatalf("first: %+v %v", m, err)
	}
	m, err = c.Read()
	if err != nil || !m.IsNotification() || m.Method != "initialized" {
		t.Fatalf("second: %+v %v", m, err)
	}
	m, err = c.Read()
	if err != nil || m.IsRequest() || m.IsNotification() || string(m.ID) != `"a"` || string(m.Result) != "1" {
		t.Fatalf("third: %+v %v", m, err)
	}
	if _, err := c.Read(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		in      string
		framing bool  // a *FramingError
		code    int64 // else an *Error with this code, or 0 for another error
		eof     bool  // io.ErrUnexpectedEOF
	}{
		{"Content-Type: application/json\r\n\r\n{}", true, 0, false},
		{"Content-Length: x\r\n\r\n{}", true, 0, false},
		{"Content-Length: -1\r\n\r\n", true, 0, false},
		{"Content-Length 2\r\n\r\n{}", true, 0, false},
		{"Content-Length: 2\r\nContent-Type: text/plain\r\n\r\n{}", true, 0, false},
		{"Content-Length: 999999999\r\n\r\n", true, 0, false},
		{"Content-Length: 10\r\n\r\n{}", false, 0, true},
		{"Content-Length: 10\r\n", false, 0, true},
		{frame(`{"jsonrpc":"2.0","id":1,"method":`), false, CodeParseError, false},
		{frame(`{"jsonrpc":"2.0","method":"a"} {}`), false, CodeParseError, false},
		{frame(`[]`), false, CodeInvalidRequest, false},
		{frame(`{"id":1,"method":"a"}`), false, CodeInvalidRequest, false},
		{frame(`{"jsonrpc":"2.0","id":true,"method":"a"}`), false, CodeInvalidRequest, false},
		{frame(`{"jsonrpc":"2.0","id":null,"method":"a"}`), false, CodeInvalidRequest, false},
		{frame(`{"jsonrpc":"2.0"}`), false, CodeInvalidRequest, false},
	}
	for _, tc := range tests {
		c := NewConn(strings.NewReader(tc.in), io.Discard)
		c.MaxMessage = 1 << 20
		_, err := c.Read()
		var fe *FramingError
		var re *Error
		switch {
		case tc.framing:
			if !errors.As(err, &fe) {
				t.Errorf("%q: %v, want a framing error", tc.in, err)
			}
		case tc.eof:
			if err != io.ErrUnexpectedEOF {
				t.Errorf("%q: %v, want io.ErrUnexpectedEOF", tc.in, err)
			}
		default:
			if !errors.As(err, &re) || re.Code != tc.code {
				t.Errorf("%q: %v, want code %d", tc.in, err, tc.code)
			}
		}
	}
}

func TestWriteMessages(t *testing.T) {
	var b bytes.Buffer
	c := NewConn(strings.NewReader(""), &b)
	c.Reply(json.RawMessage(`7`), nil, nil)
	c.Reply(json.RawMessage(`"x"`), map[string]int{"a": 1}, nil)
	c.Reply(nil, nil, Errorf(CodeParseError, "bad %s", "json"))
	c.Notify("window/logMessage", map[string]any{"type": 3, "message": "é"})
	c.Request(9, "shutdown", nil)
	want := frame(`{"jsonrpc":"2.0","id":7,"result":null}`) +
		frame(`{"jsonrpc":"2.0","id":"x","result":{"a":1}}`) +
		frame(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad json"}}`) +
		frame(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"message":"é","type":3}}`) +
		frame(`{"jsonrpc":"2.0","id":9,"method":"shutdown"}`)
	if b.String() != want {
		t.Errorf("wrote\n%q\nwant\n%q", b.String(), want)
	}
	// What was written reads back.
	r := NewConn(&b, io.Discard)
	for i := 0; i < 5; i++ {
		if _, err := r.Read(); err != nil {
			t.Fatalf("reading back message %d: %v", i, err)
		}
	}
}

// FuzzRead checks that any byte stream yields messages or errors, never a
// panic, and that a message read is a request, a notification or a response.
func FuzzRead(f *testing.F) {
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)))
	f.Add([]byte("Content-Length: 3\r\n\r\n{}}"))
	f.Add([]byte("Content-Length: 2\r\n\r\n{}Content-Length: 0\r\n\r\n"))
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":null,"result":1}`)))
	f.Fuzz(func(t *testing.T, in []byte) {
		c := NewConn(bytes.NewReader(in), io.Discard)
		c.MaxMessage = 1 << 16
		for range 64 {
			m, err := c.Read()
			var re *Error
			if errors.As(err, &re) {
				continue
			}
			if err != nil {
				return
			}
			if m.JSONRPC != Version || !(m.IsRequest() || m.IsNotification() || m.Method == "" && len(m.ID) > 0) {
				t.Fatalf("read %+v", m)
			}
		}
	})
}
