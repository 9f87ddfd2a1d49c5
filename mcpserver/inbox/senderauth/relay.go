package senderauth

import (
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/emersion/go-message/textproto"
	"github.com/emersion/go-msgauth/authres"
)

// maxHops bounds the Received fields read to find the client behind a
// trusted relay.
const maxHops = 30

// trusted reports whether ip is in one of the trusted relays' networks.
func (c *Checker) trusted(ip net.IP) bool {
	if ip == nil || len(c.TrustedRelays) == 0 {
		return false
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	a = a.Unmap()
	for _, p := range c.TrustedRelays {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// throughRelay finds, for mail handed over by a trusted relay, the client
// to judge: the first one outside the trusted networks that the Received
// fields name, from the top (each trusted hop prepends the field that
// names its own client). The Authentication-Results fields above that
// Received field were added by trusted hops; the SPF result of one with a
// trusted authserv-id is returned as reported. When no field names a
// client outside (mail from inside the trusted networks), the earliest hop
// named is judged; when none can be read, the relay itself.
func (c *Checker) throughRelay(hdr textproto.Header, in Input) (Client, *SPFResult) {
	client := Client{IP: in.RemoteIP, Helo: in.Helo, Relay: in.RemoteIP}
	var above []string // Authentication-Results values above the current field
	hops := 0
	fields := hdr.Fields()
	for fields.Next() && hops < maxHops {
		switch strings.ToLower(fields.Key()) {
		case "authentication-results":
			above = append(above, fields.Value())
		case "received":
			hops++
			helo, ip := receivedFrom(fields.Value())
			if ip == nil {
				// A field this reader cannot follow: trust stops here.
				return client, nil
			}
			client.IP, client.Helo = ip, helo
			if !c.trusted(ip) {
				return client, c.reportedSPF(above)
			}
		}
	}
	return client, nil
}

// reportedSPF is the SPF result in the first of the fields whose
// authserv-id is trusted.
func (c *Checker) reportedSPF(values []string) *SPFResult {
	if len(c.TrustedAuthservIDs) == 0 {
		return nil
	}
	for _, v := range values {
		id, results, err := authres.Parse(stripComments(v))
		if err != nil || !slices.ContainsFunc(c.TrustedAuthservIDs, func(t string) bool { return strings.EqualFold(t, id) }) {
			continue
		}
		for _, r := range results {
			s, ok := r.(*authres.SPFResult)
			if !ok {
				continue
			}
			domain := s.From
			if at := strings.LastIndexByte(domain, '@'); at >= 0 {
				domain = domain[at+1:]
			}
			res := SPFResult{By: id}
			if domain == "" {
				domain, res.Helo = s.Helo, true
			}
			res.Result, res.Domain = string(s.Value), strings.ToLower(strings.TrimSuffix(domain, "."))
			switch res.Result {
			case Pass, Fail, SoftFail, Neutral, None, TempError, PermError:
			default:
				res.Error, res.Result = "the relay reported spf="+res.Result, PermError
			}
			return &res
		}
	}
	return nil
}

// receivedFrom reads the client a Received field names: the HELO name
// after "from" and the address in square brackets in the from clause
// ("from mx.example.org (mx.example.org [192.0.2.1])", Postfix's and
// Exim's forms, IPv6 as "[IPv6:2001:db8::1]"); nil when it names none.
func receivedFrom(v string) (helo string, ip net.IP) {
	v = strings.Join(strings.Fields(v), " ")
	if len(v) < 5 || !strings.EqualFold(v[:5], "from ") {
		return "", nil
	}
	clause := v[5:]
	if i := strings.Index(strings.ToLower(clause), " by "); i >= 0 {
		clause = clause[:i]
	}
	if f := strings.Fields(clause); len(f) > 0 {
		helo = strings.Trim(f[0], "[]")
	}
	for s := clause; ; {
		open := strings.IndexByte(s, '[')
		if open < 0 {
			return "", nil
		}
		end := strings.IndexByte(s[open:], ']')
		if end < 0 {
			return "", nil
		}
		lit := s[open+1 : open+end]
		if len(lit) > 5 && strings.EqualFold(lit[:5], "ipv6:") {
			lit = lit[5:]
		}
		if a, err := netip.ParseAddr(lit); err == nil {
			return helo, net.IP(a.Unmap().AsSlice())
		}
		s = s[open+end+1:]
	}
}

// stripComments removes the comments (RFC 5322 CFWS, nested parentheses,
// quoted pairs) of a header value outside quoted strings, which the
// Authentication-Results parser does not skip.
func stripComments(v string) string {
	var b strings.Builder
	depth, quoted := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && (depth > 0 || quoted) && i+1 < len(v):
			if depth == 0 {
				b.WriteByte(c)
				b.WriteByte(v[i+1])
			}
			i++
		case quoted:
			b.WriteByte(c)
			if c == '"' {
				quoted = false
			}
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteByte(' ')
			}
		case depth > 0:
		default:
			if c == '"' {
				quoted = true
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}
