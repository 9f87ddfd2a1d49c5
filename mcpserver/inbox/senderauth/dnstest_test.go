package senderauth_test

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// zone is a DNS server on loopback answering from a table: TXT and A
// records by name; names under "timeout." subdomains are never answered
// (a server that does not reply), names under "servfail." get SERVFAIL.
type zone struct {
	mu   sync.Mutex
	txt  map[string][]string
	a    map[string][]net.IP
	fail map[string]bool // names answered SERVFAIL (ServFail)
	addr string
}

func newZone(t *testing.T) *zone {
	t.Helper()
	z := &zone{txt: map[string][]string{}, a: map[string][]net.IP{}, fail: map[string]bool{}}
	pc, ln := listenPair(t)
	z.addr = pc.LocalAddr().String()
	udp := &dns.Server{PacketConn: pc, Handler: z}
	tcp := &dns.Server{Listener: ln, Handler: z}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return z
}

// listenPair binds UDP and TCP on one loopback port, as a DNS server does.
// The kernel picks a free UDP port; its TCP twin may be taken by another
// process, so a taken pair is given back and another port tried.
func listenPair(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	var last error
	for range 50 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		pc.Close()
		last = err
	}
	t.Fatalf("no loopback port free for both UDP and TCP: %v", last)
	return nil, nil
}

func (z *zone) TXT(name string, values ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.txt[dns.Fqdn(strings.ToLower(name))] = append(z.txt[dns.Fqdn(strings.ToLower(name))], values...)
}

// ServFail makes the server fail every query for name.
func (z *zone) ServFail(name string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.fail[dns.Fqdn(strings.ToLower(name))] = true
}

func (z *zone) A(name string, ip string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.a[dns.Fqdn(name)] = append(z.a[dns.Fqdn(name)], net.ParseIP(ip))
}

func (z *zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	if len(req.Question) != 1 {
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	if strings.Contains(name, "timeout.") {
		return // no answer at all
	}
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	z.mu.Lock()
	failing := z.fail[name]
	z.mu.Unlock()
	if failing || strings.Contains(name, "servfail.") {
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
		return
	}
	z.mu.Lock()
	txt, hasTXT := z.txt[name]
	ips, hasA := z.a[name]
	z.mu.Unlock()
	switch q.Qtype {
	case dns.TypeTXT:
		for _, v := range txt {
			// One TXT record of 255-byte strings, as a real zone splits them.
			var parts []string
			for len(v) > 255 {
				parts, v = append(parts, v[:255]), v[255:]
			}
			parts = append(parts, v)
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: parts})
		}
	case dns.TypeA:
		for _, ip := range ips {
			if ip4 := ip.To4(); ip4 != nil {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: ip4})
			}
		}
	}
	if len(m.Answer) == 0 && !hasTXT && !hasA {
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
}
