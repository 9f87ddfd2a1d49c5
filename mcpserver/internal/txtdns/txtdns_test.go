package txtdns

import (
	"context"
	"errors"
	"net"
	"testing"
)

// A resolver pointed at the server finds the table's TXT records, by any
// case and with or without the final dot, and "no such host" for others.
func TestStartAnswersTheTable(t *testing.T) {
	addr, stop, err := Start(map[string]string{"Mail.Example.": "v=spf1 ip4:127.0.0.1 -all", "_dmarc.mail.example": "v=DMARC1; p=reject"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
	for name, want := range map[string]string{"mail.example": "v=spf1 ip4:127.0.0.1 -all", "_DMARC.mail.example.": "v=DMARC1; p=reject"} {
		got, err := r.LookupTXT(t.Context(), name)
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	_, err = r.LookupTXT(t.Context(), "other.example")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("other.example: %v, want not found", err)
	}
}
