// Package dnstest holds the tests' resolver that knows no records: NoDNS
// answers every lookup at once with "not found", as for a sender whose
// domain publishes nothing (so SPF, DKIM and DMARC find no policy and a
// test never waits on, or reaches, a real DNS server). It has the methods
// of senderauth.Resolver; embed it to answer some names from a table.
// Serve runs a DNS server on loopback with a table of TXT records, for a
// server under test that resolves over the network (kobana serve -dns).
// Any test package may import it (it imports nothing of the module).
package dnstest

import (
	"context"
	"net"
)

// NoDNS is a resolver with no records: every lookup fails at once with a
// *net.DNSError whose IsNotFound is set.
type NoDNS struct{}

func notFound(name string) error {
	return &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// LookupTXT finds no TXT record for name.
func (NoDNS) LookupTXT(_ context.Context, name string) ([]string, error) {
	return nil, notFound(name)
}

// LookupMX finds no MX record for name.
func (NoDNS) LookupMX(_ context.Context, name string) ([]*net.MX, error) {
	return nil, notFound(name)
}

// LookupIPAddr finds no address for host.
func (NoDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	return nil, notFound(host)
}

// LookupAddr finds no name for addr.
func (NoDNS) LookupAddr(_ context.Context, addr string) ([]string, error) {
	return nil, notFound(addr)
}
