package server_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/server"
)

// closedByServer reads conn until the server closes it (true), or until
// within passes (false).
func closedByServer(t *testing.T, conn net.Conn, within time.Duration) bool {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true // EOF or a reset: the server closed it
}

// The HTTP listener closes what clients leave open: a connection that
// finished its request (here a 401) and sends nothing more, after
// IdleTimeout; one that takes too long to send its request, after
// ReadTimeout. Before, neither was ever closed: 2,000 such connections
// stayed open.
func TestHTTPClosesIdleAndSlowConnections(t *testing.T) {
	st, path := openStore(t)
	addrs, stop := start(t, server.Config{Store: st, StorePath: path,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0", IdleTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond}})
	defer stop()
	addr := addrs["http"].String()

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Close {
		t.Fatalf("a request without a token: %s (close %v), want a kept-alive 401", resp.Status, resp.Close)
	}
	if !closedByServer(t, idle, 10*time.Second) {
		t.Error("a connection idle after its 401 is still open after 10s (IdleTimeout 300ms)")
	}

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":")
	if !closedByServer(t, slow, 10*time.Second) {
		t.Error("a request whose body never arrives is still open after 10s (ReadTimeout 500ms)")
	}
}
