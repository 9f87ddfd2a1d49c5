package senderauth_test

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// relayed is a message as a Postfix relay hands it on: its Received field
// names the client it received the message from.
func relayed(clientIP string, extra string, msg string) string {
	return extra + "Received: from mx.sender.test (mx.sender.test [" + clientIP + "])\r\n" +
		"\tby relay.kobana.test (Postfix) with ESMTPS id 4ABC for <invoices@inbox.kobana.test>;\r\n" +
		"\tMon, 30 Nov 2026 10:00:01 +0000 (UTC)\r\n" + msg
}

func checkVia(t *testing.T, c *senderauth.Checker, ip, mailFrom, msg string) senderauth.Result {
	t.Helper()
	res, err := c.Check(context.Background(), senderauth.Input{RemoteIP: net.ParseIP(ip), Helo: "relay.kobana.test", MailFrom: mailFrom,
		Message: func() io.Reader { return strings.NewReader(msg) }})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Behind a trusted relay, SPF is judged for the client the relay's
// Received field names; from anyone else, a Received field means nothing.
func TestTrustedRelayIsLookedThrough(t *testing.T) {
	z := newZone(t)
	z.TXT("sender.test", "v=spf1 ip4:192.0.2.7 -all")
	plain := &senderauth.Checker{Resolver: senderauth.NewResolver(z.addr), LookupTimeout: 300 * time.Millisecond}
	relay := *plain
	relay.TrustedRelays = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
	msg := relayed("192.0.2.7", "", mail("billing@sender.test", "Invoice"))

	res := checkVia(t, &relay, "127.0.0.1", "billing@sender.test", msg)
	if res.SPF.Result != senderauth.Pass || res.Client.IP.String() != "192.0.2.7" || res.Client.Helo != "mx.sender.test" || res.Client.Relay.String() != "127.0.0.1" {
		t.Fatalf("through the relay: spf=%+v client=%+v, want pass for 192.0.2.7 via 127.0.0.1", res.SPF, res.Client)
	}
	if res.Authenticated != "billing@sender.test" {
		t.Fatalf("authenticated = %q, want the aligned SPF pass to authenticate", res.Authenticated)
	}
	// Without the relay declared, SPF is the relay's own (and fails).
	if res := checkVia(t, plain, "127.0.0.1", "billing@sender.test", msg); res.SPF.Result != senderauth.Fail || res.Client.Relay != nil {
		t.Fatalf("relay not declared: spf=%+v client=%+v, want fail for 127.0.0.1", res.SPF, res.Client)
	}
	// A client outside the trusted networks forging the same field.
	other := relay
	other.TrustedRelays = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	if res := checkVia(t, &other, "127.0.0.1", "billing@sender.test", msg); res.SPF.Result != senderauth.Fail || res.Client.IP.String() != "127.0.0.1" {
		t.Fatalf("forged Received from an untrusted client: spf=%+v client=%+v, want its own IP judged (fail)", res.SPF, res.Client)
	}
	// Two trusted hops: the first client outside them is judged.
	inner := "Received: from relay.kobana.test (relay.kobana.test [10.1.1.1])\r\n\tby mx2.kobana.test (Postfix) with ESMTP id 9XYZ;\r\n\tMon, 30 Nov 2026 10:00:02 +0000\r\n"
	if res := checkVia(t, &relay, "127.0.0.1", "billing@sender.test", relayed("192.0.2.7", inner, mail("billing@sender.test", "Invoice"))); res.SPF.Result != senderauth.Pass || res.Client.IP.String() != "192.0.2.7" {
		t.Fatalf("two trusted hops: spf=%+v client=%+v, want 192.0.2.7 judged", res.SPF, res.Client)
	}
	// IPv6 literals, as Postfix writes them.
	z.TXT("six.test", "v=spf1 ip6:2001:db8::7 -all")
	if res := checkVia(t, &relay, "127.0.0.1", "a@six.test", relayed("IPv6:2001:db8::7", "", mail("a@six.test", "x"))); res.SPF.Result != senderauth.Pass {
		t.Fatalf("IPv6 client: spf=%+v client=%+v, want pass", res.SPF, res.Client)
	}
}

// A trusted relay's Authentication-Results, for a configured authserv-id
// and above its Received field, stand for SPF; the same field in the
// sender's own header (below it), or with another authserv-id, does not.
func TestTrustedAuthservIDReportsSPF(t *testing.T) {
	z := newZone(t)
	z.TXT("sender.test", "v=spf1 ip4:192.0.2.7 -all")
	c := &senderauth.Checker{Resolver: senderauth.NewResolver(z.addr), LookupTimeout: 300 * time.Millisecond,
		TrustedRelays: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, TrustedAuthservIDs: []string{"relay.kobana.test"}}
	ar := "Authentication-Results: relay.kobana.test;\r\n\tspf=pass (sender SPF authorized) smtp.mailfrom=billing@sender.test\r\n"
	// The relay saw 198.51.100.9 (which sender.test does not authorize) and
	// yet reports pass: its report is what counts.
	res := checkVia(t, c, "127.0.0.1", "billing@sender.test", relayed("198.51.100.9", ar, mail("billing@sender.test", "Invoice")))
	if res.SPF.Result != senderauth.Pass || res.SPF.By != "relay.kobana.test" || res.SPF.Domain != "sender.test" || res.Authenticated == "" {
		t.Fatalf("reported: spf=%+v authenticated=%q, want pass by relay.kobana.test", res.SPF, res.Authenticated)
	}
	forged := relayed("198.51.100.9", "", strings.Replace(ar, "\t", " ", 1)+mail("billing@sender.test", "Invoice"))
	if res := checkVia(t, c, "127.0.0.1", "billing@sender.test", forged); res.SPF.Result != senderauth.Fail || res.SPF.By != "" {
		t.Fatalf("the sender's own field: spf=%+v, want it ignored and SPF checked here (fail)", res.SPF)
	}
	otherID := strings.Replace(ar, "relay.kobana.test;", "elsewhere.test;", 1)
	if res := checkVia(t, c, "127.0.0.1", "billing@sender.test", relayed("198.51.100.9", otherID, mail("billing@sender.test", "Invoice"))); res.SPF.By != "" {
		t.Fatalf("another authserv-id: spf=%+v, want it ignored", res.SPF)
	}
}

func TestAuthenticationResultsField(t *testing.T) {
	r := senderauth.Result{
		Client: senderauth.Client{IP: net.ParseIP("192.0.2.7"), Helo: "mx.sender.test"},
		SPF:    senderauth.SPFResult{Result: senderauth.Pass, Domain: "sender.test"},
		DKIM: []senderauth.DKIMResult{{Result: senderauth.Pass, Domain: "sender.test", Selector: "k1"},
			{Result: senderauth.Fail, Domain: "evil\r\nX-Injected: yes;", Selector: "s"}},
		DMARC: senderauth.DMARCResult{Result: senderauth.Pass, Domain: "sender.test", Policy: "reject"},
	}
	got := r.AuthenticationResults("mx.kobana.test", "\r\n")
	want := "Authentication-Results: mx.kobana.test;\r\n" +
		"\tspf=pass smtp.mailfrom=sender.test;\r\n" +
		"\tdkim=pass header.d=sender.test header.s=k1;\r\n" +
		"\tdkim=fail header.d=\"evil??X-Injected: yes;\" header.s=s;\r\n" +
		"\tdmarc=pass (p=reject) header.from=sender.test\r\n"
	if got != want {
		t.Fatalf("field:\n%s\nwant:\n%s", got, want)
	}
	// No SMTP client (HTTP): no SPF; a bounce: the HELO name.
	if got := (senderauth.Result{DMARC: senderauth.DMARCResult{Result: senderauth.None, Domain: "a.test"}}).AuthenticationResults("mx", "\n"); got != "Authentication-Results: mx;\n\tdkim=none;\n\tdmarc=none header.from=a.test\n" {
		t.Fatalf("without a client: %q", got)
	}
	bounce := senderauth.Result{Client: senderauth.Client{IP: net.ParseIP("192.0.2.7")}, SPF: senderauth.SPFResult{Result: senderauth.None, Domain: "mx.sender.test", Helo: true}}
	if got := bounce.AuthenticationResults("mx", "\n"); !strings.Contains(got, "spf=none smtp.helo=mx.sender.test;") {
		t.Fatalf("a bounce: %q", got)
	}
}

// countingDNS answers TXT from a table and counts the questions.
type countingDNS struct {
	emptyDNS
	txt   map[string][]string
	asked int
	fail  bool
}

func (d *countingDNS) LookupTXT(_ context.Context, name string) ([]string, error) {
	d.asked++
	if d.fail {
		return nil, &net.DNSError{Err: "i/o timeout", Name: name, IsTimeout: true, IsTemporary: true}
	}
	if v, ok := d.txt[name]; ok {
		return v, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// Answers and "no such name" are remembered; failures are asked again.
func TestCachingResolver(t *testing.T) {
	ctx := context.Background()
	d := &countingDNS{txt: map[string][]string{"sender.test": {"v=spf1 -all"}}}
	r := senderauth.NewCachingResolver(d, time.Minute)
	for range 3 {
		if v, err := r.LookupTXT(ctx, "sender.test"); err != nil || len(v) != 1 {
			t.Fatalf("answer: %v %v", v, err)
		}
		if _, err := r.LookupTXT(ctx, "_dmarc.sender.test"); err == nil {
			t.Fatal("a name that does not exist was answered")
		}
	}
	if d.asked != 2 {
		t.Fatalf("%d questions for two names asked thrice, want 2", d.asked)
	}
	d.fail = true
	for range 2 {
		if _, err := r.LookupTXT(ctx, "timeout.test"); err == nil {
			t.Fatal("a timeout was answered")
		}
	}
	if d.asked != 4 {
		t.Fatalf("%d questions: a failure must be asked again each time", d.asked)
	}
}
