package txtdns

import (
	"fmt"
	"net"
	"strings"

	"github.com/miekg/dns"
)

// Start runs a DNS server on 127.0.0.1 (UDP, a free port) answering the TXT
// records of txt (by name, with or without the final dot; one record each),
// and returns its address for a resolver (kobana serve -dns) and the
// function that stops it.
func Start(txt map[string]string) (addr string, stop func(), err error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("txtdns: listening on loopback: %w", err)
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
	return pc.LocalAddr().String(), func() { srv.Shutdown() }, nil
}
