package dnstest

import (
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Serve runs a DNS server on loopback (UDP) until the test ends, answering
// the TXT records of txt (by name, without the final dot; one record
// each) and "no such name" for anything else, and returns its address for
// a resolver (kobana serve -dns, senderauth.NewResolver).
func Serve(tb testing.TB, txt map[string]string) string {
	tb.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	records := map[string]string{}
	for name, v := range txt {
		records[strings.ToLower(strings.TrimSuffix(name, "."))+"."] = v
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		if len(req.Question) == 1 {
			q := req.Question[0]
			if v, ok := records[strings.ToLower(q.Name)]; ok && q.Qtype == dns.TypeTXT {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
			} else if !ok {
				m.Rcode = dns.RcodeNameError
			}
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	tb.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}
