package dnstest_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/dnstest"
)

// resolver is senderauth.Resolver's method set (that package sits above
// this one, so the test does not import it).
type resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	LookupAddr(ctx context.Context, addr string) ([]string, error)
}

// Every lookup of NoDNS is "not found" for the name asked.
func TestNoDNSFindsNothing(t *testing.T) {
	t.Parallel()
	var r resolver = dnstest.NoDNS{}
	ctx := context.Background()
	check := func(what string, n int, err error) {
		t.Helper()
		var de *net.DNSError
		if n != 0 || !errors.As(err, &de) || !de.IsNotFound || de.Name != "example.test" {
			t.Errorf("%s: %d answers, %v; want none and not-found for example.test", what, n, err)
		}
	}
	txt, err := r.LookupTXT(ctx, "example.test")
	check("TXT", len(txt), err)
	mx, err := r.LookupMX(ctx, "example.test")
	check("MX", len(mx), err)
	ips, err := r.LookupIPAddr(ctx, "example.test")
	check("IP", len(ips), err)
	names, err := r.LookupAddr(ctx, "example.test")
	check("PTR", len(names), err)
}
