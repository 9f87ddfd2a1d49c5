package dnstest

import (
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/txtdns"
)

// Serve runs a DNS server on loopback (UDP) until the test ends, answering
// the TXT records of txt (by name, without the final dot; one record
// each) and "no such name" for anything else, and returns its address for
// a resolver (kobana serve -dns, senderauth.NewResolver).
func Serve(tb testing.TB, txt map[string]string) string {
	tb.Helper()
	addr, stop, err := txtdns.Start(txt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return addr
}
