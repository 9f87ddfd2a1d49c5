package senderauth_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// signer is a DKIM key published in the zone for a domain and selector.
type signer struct {
	domain, selector string
	key              ed25519.PrivateKey
}

func publish(t *testing.T, z *zone, domain, selector string) signer {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	z.TXT(selector+"._domainkey."+domain, "v=DKIM1; k=ed25519; p="+base64.StdEncoding.EncodeToString(pub))
	return signer{domain, selector, priv}
}

func (s signer) sign(t *testing.T, msg string) string {
	t.Helper()
	var out bytes.Buffer
	err := dkim.Sign(&out, strings.NewReader(msg), &dkim.SignOptions{Domain: s.domain, Selector: s.selector, Signer: s.key,
		HeaderKeys: []string{"From", "To", "Subject", "Date", "Message-ID"}})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func mail(from, subject string) string {
	return "From: " + from + "\r\nTo: invoices@inbox.kobana.test\r\nSubject: " + subject +
		"\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\nMessage-ID: <1@x>\r\nContent-Type: text/plain\r\n\r\nPlease find the invoice attached.\r\n"
}

func check(t *testing.T, z *zone, ip, helo, mailFrom, msg string) senderauth.Result {
	t.Helper()
	c := &senderauth.Checker{Resolver: senderauth.NewResolver(z.addr), LookupTimeout: 300 * time.Millisecond}
	res, err := c.Check(context.Background(), senderauth.Input{RemoteIP: net.ParseIP(ip), Helo: helo, MailFrom: mailFrom,
		Message: func() io.Reader { return strings.NewReader(msg) }})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func dkimResults(r senderauth.Result) string {
	var s []string
	for _, d := range r.DKIM {
		s = append(s, d.Domain+"="+d.Result)
	}
	return strings.Join(s, ",")
}

func TestPass(t *testing.T) {
	z := newZone(t)
	z.TXT("example.org", "v=spf1 ip4:127.0.0.1 -all")
	z.TXT("_dmarc.example.org", "v=DMARC1; p=reject; adkim=s; aspf=s")
	s := publish(t, z, "example.org", "k1")
	res := check(t, z, "127.0.0.1", "mx.example.org", "billing@example.org", s.sign(t, mail("Billing <billing@example.org>", "Invoice 42")))
	if res.SPF.Result != senderauth.Pass || dkimResults(res) != "example.org=pass" || res.DMARC.Result != senderauth.Pass {
		t.Fatalf("spf=%s dkim=%s dmarc=%+v, want all pass", res.SPF.Result, dkimResults(res), res.DMARC)
	}
	if res.DKIM[0].Selector != "k1" {
		t.Errorf("dkim selector = %q, want k1", res.DKIM[0].Selector)
	}
	if !res.DMARC.SPFAligned || !res.DMARC.DKIMAligned || res.DMARC.Policy != "reject" {
		t.Fatalf("dmarc = %+v, want both aligned under p=reject", res.DMARC)
	}
	if res.Authenticated != "billing@example.org" || res.Trust() != senderauth.Authenticated {
		t.Fatalf("authenticated = %q (trust %v), want billing@example.org", res.Authenticated, res.Trust())
	}
}

func TestForgedFromFails(t *testing.T) {
	z := newZone(t)
	// The attacker's own domain passes SPF and DKIM; the From: is the bank's.
	z.TXT("attacker.test", "v=spf1 ip4:127.0.0.1 -all")
	z.TXT("_dmarc.bank.test", "v=DMARC1; p=reject")
	s := publish(t, z, "attacker.test", "s1")
	res := check(t, z, "127.0.0.1", "mx.attacker.test", "bounce@attacker.test", s.sign(t, mail("CEO <ceo@bank.test>", "Pay this now")))
	if res.SPF.Result != senderauth.Pass || dkimResults(res) != "attacker.test=pass" {
		t.Fatalf("spf=%s dkim=%s: the attacker's own domain should pass", res.SPF.Result, dkimResults(res))
	}
	if res.DMARC.Result != senderauth.Fail || res.DMARC.SPFAligned || res.DMARC.DKIMAligned {
		t.Fatalf("dmarc = %+v, want fail, nothing aligned", res.DMARC)
	}
	if res.From != "ceo@bank.test" || res.Authenticated != "" || res.Trust() != senderauth.Unauthenticated {
		t.Fatalf("from=%q authenticated=%q trust=%v: a forged From: must not authenticate", res.From, res.Authenticated, res.Trust())
	}
}

func TestAlteredBodyAndWrongIPFail(t *testing.T) {
	z := newZone(t)
	z.TXT("example.org", "v=spf1 ip4:192.0.2.10 -all")
	z.TXT("_dmarc.example.org", "v=DMARC1; p=quarantine")
	s := publish(t, z, "example.org", "k1")
	signed := s.sign(t, mail("billing@example.org", "Invoice 42"))
	tampered := strings.Replace(signed, "Please find", "Please pay", 1)
	res := check(t, z, "127.0.0.1", "mx.example.org", "billing@example.org", tampered)
	if res.SPF.Result != senderauth.Fail {
		t.Errorf("spf = %+v, want fail (the IP is not listed)", res.SPF)
	}
	if len(res.DKIM) != 1 || res.DKIM[0].Result != senderauth.Fail || res.DKIM[0].Error == "" {
		t.Errorf("dkim = %+v, want one fail with a reason (body hash)", res.DKIM)
	}
	if res.DMARC.Result != senderauth.Fail || res.DMARC.Policy != "quarantine" || res.Authenticated != "" {
		t.Errorf("dmarc = %+v authenticated=%q, want fail under quarantine, unauthenticated", res.DMARC, res.Authenticated)
	}
}

func TestNoDMARCRecordStillAuthenticatesAlignedDKIM(t *testing.T) {
	z := newZone(t)
	s := publish(t, z, "example.net", "k1")
	res := check(t, z, "127.0.0.1", "mx.example.net", "", s.sign(t, mail("ops@example.net", "Report")))
	if res.SPF.Result != senderauth.None {
		t.Errorf("spf = %+v, want none (no record for the HELO name)", res.SPF)
	}
	if res.DMARC.Result != senderauth.Pass || res.DMARC.Policy != "" || !res.DMARC.DKIMAligned {
		t.Errorf("dmarc = %+v, want pass by aligned DKIM with no published policy", res.DMARC)
	}
	if res.Authenticated != "ops@example.net" {
		t.Errorf("authenticated = %q, want ops@example.net", res.Authenticated)
	}
	// Unsigned and without SPF: nothing vouches, and no policy says fail.
	res = check(t, z, "127.0.0.1", "mx.example.net", "ops@example.net", mail("ops@example.net", "Report"))
	if res.DMARC.Result != senderauth.None || res.Authenticated != "" || res.Trust() != senderauth.Unauthenticated {
		t.Errorf("unsigned: dmarc=%+v authenticated=%q trust=%v, want none, unauthenticated", res.DMARC, res.Authenticated, res.Trust())
	}
}

func TestAlignmentRelaxedAndStrict(t *testing.T) {
	z := newZone(t)
	// Relaxed (the default): a subdomain's From: is aligned with a signature
	// of its organizational domain, whose policy applies.
	z.TXT("_dmarc.example.org", "v=DMARC1; p=reject")
	org := publish(t, z, "example.org", "k1")
	res := check(t, z, "127.0.0.1", "mx", "", org.sign(t, mail("billing@mail.example.org", "Invoice")))
	if res.DMARC.Result != senderauth.Pass || res.DMARC.Domain != "example.org" || res.Authenticated != "billing@mail.example.org" {
		t.Errorf("relaxed: dmarc=%+v authenticated=%q, want pass found at example.org", res.DMARC, res.Authenticated)
	}
	// Strict: the same shape fails.
	z.TXT("_dmarc.strict.test", "v=DMARC1; p=reject; adkim=s; sp=quarantine")
	st := publish(t, z, "strict.test", "k1")
	res = check(t, z, "127.0.0.1", "mx", "", st.sign(t, mail("billing@mail.strict.test", "Invoice")))
	if res.DMARC.Result != senderauth.Fail || res.DMARC.DKIMAligned || res.Authenticated != "" {
		t.Errorf("strict: dmarc=%+v authenticated=%q, want fail, not aligned", res.DMARC, res.Authenticated)
	}
	if res.DMARC.Policy != "quarantine" {
		t.Errorf("strict: policy = %q, want the subdomain policy quarantine", res.DMARC.Policy)
	}
}

func TestDNSTimeoutIsTemperror(t *testing.T) {
	z := newZone(t)
	start := time.Now()
	res := check(t, z, "127.0.0.1", "mx.timeout.test", "a@timeout.test", mail("a@timeout.test", "Hello"))
	if res.SPF.Result != senderauth.TempError {
		t.Errorf("spf = %+v, want temperror", res.SPF)
	}
	if res.DMARC.Result != senderauth.TempError {
		t.Errorf("dmarc = %+v, want temperror", res.DMARC)
	}
	if res.Trust() != senderauth.Unknown || res.Authenticated != "" {
		t.Errorf("trust = %v authenticated=%q, want unknown", res.Trust(), res.Authenticated)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the checks took %v with a 300ms lookup timeout", d)
	}
	// A failing DNS server (SERVFAIL) is as temporary as a silent one; with
	// no aligned pass to weigh, no answer could authenticate the sender.
	res = check(t, z, "127.0.0.1", "mx", "", mail("a@servfail.test", "Hello"))
	if res.DMARC.Result != senderauth.TempError || res.Trust() != senderauth.Unauthenticated {
		t.Errorf("servfail: dmarc = %+v trust=%v, want temperror, unauthenticated", res.DMARC, res.Trust())
	}
	// With a pass of a subdomain, relaxed alignment (the default) would
	// authenticate and strict would not: the DMARC record decides.
	z.ServFail("_dmarc.flaky.test")
	sub := publish(t, z, "mail.flaky.test", "k1")
	res = check(t, z, "127.0.0.1", "mx", "", sub.sign(t, mail("a@flaky.test", "Hello")))
	if res.DMARC.Result != senderauth.TempError || dkimResults(res) != "mail.flaky.test=pass" || res.Trust() != senderauth.Unknown {
		t.Errorf("DMARC unreadable, a subdomain's pass: dmarc = %+v dkim=%s trust=%v, want temperror, pass, unknown", res.DMARC, dkimResults(res), res.Trust())
	}
	// A pass of the From: domain itself is aligned under either mode.
	same := publish(t, z, "flaky.test", "k1")
	res = check(t, z, "127.0.0.1", "mx", "", same.sign(t, mail("a@flaky.test", "Hello")))
	if res.DMARC.Result != senderauth.TempError || res.Trust() != senderauth.Authenticated || res.Authenticated != "a@flaky.test" {
		t.Errorf("DMARC unreadable, the From domain's own pass: dmarc = %+v trust=%v, want temperror, authenticated", res.DMARC, res.Trust())
	}
	// A DKIM key that cannot be fetched is a DKIM temperror; it matters when
	// the signature is the From: domain's.
	s := signer{domain: "timeout.test", selector: "k1"}
	_, s.key, _ = ed25519.GenerateKey(rand.Reader)
	res = check(t, z, "127.0.0.1", "mx", "", s.sign(t, mail("a@timeout.test", "Hello")))
	if len(res.DKIM) != 1 || res.DKIM[0].Result != senderauth.TempError || res.Trust() != senderauth.Unknown {
		t.Errorf("dkim = %+v trust=%v, want one temperror, unknown", res.DKIM, res.Trust())
	}
}

// A DNS timeout on the key of a signature that is not aligned with From:
// cannot change DMARC's outcome: a forgery signed by a domain whose key
// server does not answer is refused (before: Unknown, answered 451 with
// nothing recorded, the forger holding the connection for the timeout).
func TestUnalignedDKIMTimeoutCannotDelayAForgery(t *testing.T) {
	z := newZone(t)
	z.TXT("_dmarc.bank.test", "v=DMARC1; p=reject")
	s := signer{domain: "key.timeout.test", selector: "k1"}
	_, s.key, _ = ed25519.GenerateKey(rand.Reader)
	res := check(t, z, "127.0.0.1", "mx.attacker.test", "", s.sign(t, mail("CEO <ceo@bank.test>", "Pay now")))
	if len(res.DKIM) != 1 || res.DKIM[0].Result != senderauth.TempError {
		t.Fatalf("dkim = %+v, want the unaligned signature's temperror", res.DKIM)
	}
	if res.DMARC.Result != senderauth.Fail || res.Trust() != senderauth.Unauthenticated {
		t.Fatalf("dmarc = %+v trust = %v, want fail and unauthenticated", res.DMARC, res.Trust())
	}
}

func TestNoOrManyFromAddresses(t *testing.T) {
	z := newZone(t)
	for _, from := range []string{"", "a@example.org, b@example.org", "not an address"} {
		msg := mail(from, "x")
		if from == "" {
			msg = strings.Replace(msg, "From: \r\n", "", 1)
		}
		res := check(t, z, "127.0.0.1", "mx", "", msg)
		if res.DMARC.Result != senderauth.PermError || res.Authenticated != "" {
			t.Errorf("From %q: dmarc=%+v authenticated=%q, want permerror, unauthenticated", from, res.DMARC, res.Authenticated)
		}
	}
}

// A whole check is bounded by CheckTimeout, whatever the lookups add up
// to: with a DNS server that never answers, SPF, the DKIM keys and DMARC
// each wait out the lookup timeout (3 s each: 9 s before CheckTimeout),
// holding the message's reply; past the bound what is not answered is a
// temperror.
func TestCheckTimeoutBoundsTheWholeCheck(t *testing.T) {
	z := newZone(t)
	msg := mail("a@timeout.test", "Hello")
	for i := range 5 {
		s := signer{domain: "k" + strconv.Itoa(i) + ".timeout.test", selector: "s"}
		_, s.key, _ = ed25519.GenerateKey(rand.Reader)
		msg = s.sign(t, msg)
	}
	c := &senderauth.Checker{Resolver: senderauth.NewResolver(z.addr), LookupTimeout: 3 * time.Second, CheckTimeout: time.Second}
	start := time.Now()
	res, err := c.Check(context.Background(), senderauth.Input{RemoteIP: net.ParseIP("127.0.0.1"), Helo: "mx.timeout.test", MailFrom: "a@timeout.test",
		Message: func() io.Reader { return strings.NewReader(msg) }})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the check took %v with a bound of 1 s", d)
	}
	if res.SPF.Result != senderauth.TempError || res.DMARC.Result != senderauth.TempError || len(res.DKIM) != 5 {
		t.Fatalf("spf %+v, dmarc %+v, dkim %+v: want temperrors", res.SPF, res.DMARC, res.DKIM)
	}
	for _, d := range res.DKIM {
		if d.Result != senderauth.TempError {
			t.Errorf("dkim %+v, want temperror", d)
		}
	}
	if res.Trust() != senderauth.Unknown {
		t.Errorf("trust %v, want unknown", res.Trust())
	}
}
