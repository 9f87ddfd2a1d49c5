package senderauth_test

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// emptyDNS knows no records at all.
type emptyDNS struct{}

func (emptyDNS) nx(name string) error {
	return &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}
func (d emptyDNS) LookupTXT(_ context.Context, n string) ([]string, error) {
	return nil, d.nx(n)
}
func (d emptyDNS) LookupMX(_ context.Context, n string) ([]*net.MX, error) {
	return nil, d.nx(n)
}
func (d emptyDNS) LookupIPAddr(_ context.Context, n string) ([]net.IPAddr, error) {
	return nil, d.nx(n)
}
func (d emptyDNS) LookupAddr(_ context.Context, n string) ([]string, error) {
	return nil, d.nx(n)
}

// FuzzCheck: whatever the message and envelope, the checks do not fail on
// DNS, and with no DNS records nothing can vouch for a sender, so no
// message ever comes out authenticated.
func FuzzCheck(f *testing.F) {
	f.Add("From: a@example.org\r\nDKIM-Signature: v=1; a=ed25519-sha256; d=example.org; s=k; h=from; bh=x; b=y\r\n\r\nbody", "a@example.org", "mx.example.org")
	f.Add("From: =?x?q?bad?= <a@b.test>\r\n\r\n", "", "")
	f.Add("From: a@b.test, c@d.test\r\nFrom: e@f.test\r\n\r\n", "bounce@b.test", "h")
	f.Add("\r\n\r\n", "@", "[127.0.0.1]")
	c := &senderauth.Checker{Resolver: emptyDNS{}}
	f.Fuzz(func(t *testing.T, msg, mailFrom, helo string) {
		res, err := c.Check(context.Background(), senderauth.Input{RemoteIP: net.IPv4(127, 0, 0, 1), Helo: helo, MailFrom: mailFrom,
			Message: func() io.Reader { return strings.NewReader(msg) }})
		if err != nil {
			return // an unreadable header is reported, not guessed at
		}
		if res.Authenticated != "" || res.Trust() == senderauth.Authenticated {
			t.Fatalf("authenticated %q with no DNS records (spf %+v, dkim %+v, dmarc %+v)", res.Authenticated, res.SPF, res.DKIM, res.DMARC)
		}
		if res.SPF.Result == senderauth.Pass {
			t.Fatalf("SPF pass with no records: %+v", res.SPF)
		}
		// The results' header field is one field whatever the message
		// held: every line but the first is a continuation, no bare CR or
		// LF, nothing but printable ASCII.
		field := res.AuthenticationResults("mx.kobana.test", "\r\n")
		lines := strings.Split(strings.TrimSuffix(field, "\r\n"), "\r\n")
		for i, l := range lines {
			if i > 0 && !strings.HasPrefix(l, "\t") {
				t.Fatalf("line %d of %q is not a continuation", i, field)
			}
			for _, c := range []byte(l) {
				if c != '\t' && (c < 0x20 || c > 0x7e) {
					t.Fatalf("byte %#x in %q", c, field)
				}
			}
		}
	})
}
