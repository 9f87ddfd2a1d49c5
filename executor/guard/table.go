package guard

import (
	"encoding/binary"
	"net/netip"
)

// rule4 is one IPv4 deny-list entry, kept as a masked 32-bit network so
// that the check is an AND and a compare.
type rule4 struct {
	net, mask uint32
	class     string
}

func r4(prefix, class string) rule4 {
	p := netip.MustParsePrefix(prefix)
	a := p.Masked().Addr().As4()
	mask := ^uint32(0)
	if p.Bits() < 32 {
		mask = ^(^uint32(0) >> p.Bits())
	}
	return rule4{net: binary.BigEndian.Uint32(a[:]), mask: mask, class: class}
}

// denied4 is the IPv4 deny-list. Order matters only where entries nest:
// the first match names the class. See the package documentation for the
// reason behind each entry.
var denied4 = []rule4{
	r4("0.0.0.0/8", "this network (0.0.0.0/8)"),
	r4("10.0.0.0/8", "private (RFC 1918)"),
	r4("100.64.0.0/10", "carrier-grade NAT (RFC 6598)"),
	r4("127.0.0.0/8", "loopback"),
	r4("169.254.0.0/16", "link-local"),
	r4("172.16.0.0/12", "private (RFC 1918)"),
	r4("192.0.0.0/24", classIETF4), // but see reachable4
	r4("192.0.2.0/24", "documentation (RFC 5737)"),
	r4("192.88.99.0/24", "6to4 relay anycast (RFC 7526, deprecated)"),
	r4("192.168.0.0/16", "private (RFC 1918)"),
	r4("198.18.0.0/15", "benchmarking (RFC 2544)"),
	r4("198.51.100.0/24", "documentation (RFC 5737)"),
	r4("203.0.113.0/24", "documentation (RFC 5737)"),
	r4("224.0.0.0/4", "multicast"),
	r4("255.255.255.255/32", "broadcast"), // before 240.0.0.0/4, which holds it
	r4("240.0.0.0/4", "reserved (240.0.0.0/4)"),
}

const classIETF4 = "IETF protocol assignments (RFC 6890)"

// reachable4 lists the rows of the IANA IPv4 Special-Purpose Address
// Registry marked globally reachable that lie inside a denied block
// (192.0.0.0/24): they are allowed. The class names the row.
var reachable4 = []rule4{
	r4("192.0.0.9/32", "Port Control Protocol anycast (RFC 7723)"),
	r4("192.0.0.10/32", "TURN anycast (RFC 8155)"),
}

// class4 names the deny-list class of an IPv4 address given as 4 bytes, or
// returns "" when it is allowed.
func class4(b [4]byte) string {
	v := binary.BigEndian.Uint32(b[:])
	for i := range denied4 {
		if v&denied4[i].mask == denied4[i].net {
			if denied4[i].class == classIETF4 && match4(reachable4, v) {
				return ""
			}
			return denied4[i].class
		}
	}
	return ""
}

func match4(rules []rule4, v uint32) bool {
	for i := range rules {
		if v&rules[i].mask == rules[i].net {
			return true
		}
	}
	return false
}

// rule6 is one IPv6 deny-list entry. Every entry is /64 or shorter, so it
// is kept as a mask over the high 64 bits.
type rule6 struct {
	net, mask uint64
	class     string
}

func r6(prefix, class string) rule6 {
	p := netip.MustParsePrefix(prefix)
	if p.Bits() > 64 || !p.Addr().Is6() {
		panic("guard: IPv6 rule longer than /64: " + prefix)
	}
	a := p.Masked().Addr().As16()
	return rule6{
		net:   binary.BigEndian.Uint64(a[:8]),
		mask:  ^(^uint64(0) >> p.Bits()),
		class: class,
	}
}

// The IPv6 deny-list for addresses that embed no IPv4 address (the
// embedding forms are decoded first, in class6), in two parts: inside the
// global unicast space 2000::/3, and outside it, where anything not named
// is reserved. Nested entries are listed most specific first.
var (
	denied6Global = []rule6{
		r6("2001:2::/48", "benchmarking (RFC 5180)"),
		r6("2001:10::/28", "ORCHID (RFC 4843, deprecated)"),
		r6("2001:db8::/32", "documentation (RFC 3849)"),
		r6("2001::/23", classIETF6), // but see reachable6
		r6("3fff::/20", "documentation (RFC 9637)"),
	}
	denied6Other = []rule6{
		r6("64:ff9b:1::/48", "NAT64 local-use (RFC 8215)"),
		r6("100::/64", "discard-only (RFC 6666)"),
		r6("fc00::/7", "IPv6 unique local"),
		r6("fe80::/10", "link-local"),
		r6("fec0::/10", "IPv6 site-local (RFC 3879, deprecated)"),
		r6("ff00::/8", "multicast"),
	}
)

const classIETF6 = "IETF protocol assignments (2001::/23)"

// reachable6 lists the rows of the IANA IPv6 Special-Purpose Address
// Registry marked globally reachable that lie inside a denied block
// (2001::/23): they are allowed.
var reachable6 = []netip.Prefix{
	netip.MustParsePrefix("2001:1::1/128"),   // Port Control Protocol anycast (RFC 7723)
	netip.MustParsePrefix("2001:1::2/128"),   // TURN anycast (RFC 8155)
	netip.MustParsePrefix("2001:3::/32"),     // AMT (RFC 7450)
	netip.MustParsePrefix("2001:4:112::/48"), // AS112-v6 (RFC 7535)
	netip.MustParsePrefix("2001:20::/28"),    // ORCHIDv2 (RFC 7343)
	netip.MustParsePrefix("2001:30::/28"),    // Drone Remote ID Protocol entity tags (RFC 9374)
}

func reachable(a netip.Addr) bool {
	a = a.WithZone("")
	for _, p := range reachable6 {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func match6(rules []rule6, hi uint64) string {
	for i := range rules {
		if hi&rules[i].mask == rules[i].net {
			return rules[i].class
		}
	}
	return ""
}

const classReserved6 = "IPv6 reserved (outside global unicast 2000::/3)"

// class6 names the deny-list class of an IPv6 address that is not
// IPv4-mapped, or returns "" when it is allowed. Only the 16 bytes are
// looked at, so a zone makes no difference.
func class6(a netip.Addr) string {
	b := a.As16()
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	switch {
	case hi == 0 && lo == 0:
		return "IPv6 unspecified"
	case hi == 0 && lo == 1:
		return "loopback"
	case hi == 0 && lo>>32 == 0:
		// ::a.b.c.d, IPv4-compatible (RFC 4291 §2.5.5.1, deprecated).
		return embedded("IPv4-compatible IPv6 address", "", [4]byte(b[12:16]))
	case hi == 0x0064_ff9b_0000_0000 && lo>>32 == 0:
		// 64:ff9b::a.b.c.d, the NAT64 well-known prefix (RFC 6052): a
		// translator on the path turns it into a connection to a.b.c.d.
		return embedded("NAT64 address (64:ff9b::/96)", "", [4]byte(b[12:16]))
	case b[0] == 0x20 && b[1] == 0x02:
		// 2002:AABB:CCDD::/48, 6to4 (RFC 3056): the site's IPv4 in bits 16–47.
		return embedded("6to4 address (2002::/16)", "", [4]byte(b[2:6]))
	case hi>>32 == 0x2001_0000:
		// 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC, Teredo (RFC 4380 §4): the
		// packets go to the client's IPv4, stored XOR 0xffffffff; the server's
		// IPv4 is stored as is.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		if c := embedded("Teredo address (2001::/32)", "client ", client); c != "" {
			return c
		}
		return embedded("Teredo address (2001::/32)", "server ", [4]byte(b[4:8]))
	}
	if b[0]&0xe0 == 0x20 { // 2000::/3, global unicast
		c := match6(denied6Global, hi)
		if c == classIETF6 && reachable(a) {
			return ""
		}
		return c
	}
	if c := match6(denied6Other, hi); c != "" {
		return c
	}
	return classReserved6
}

// embedded returns "" when the embedded IPv4 is allowed, and otherwise a
// class that names the outer form, the embedded address and its class.
// It allocates only for a denied address.
func embedded(kind, role string, v4 [4]byte) string {
	c := class4(v4)
	if c == "" {
		return ""
	}
	return kind + " embedding " + role + netip.AddrFrom4(v4).String() + ", which is " + c
}

// classify returns the deny-list class of a, or "" when the deny-list does
// not cover it. The zero Addr is denied.
func classify(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "not an IP address"
	case a.Is4():
		return class4(a.As4())
	case a.Is4In6():
		return embedded("IPv4-mapped IPv6 address", "", a.Unmap().As4())
	default:
		return class6(a)
	}
}
