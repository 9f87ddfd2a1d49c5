package guard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"testing"
)

// Classes as the tests expect them, spelled out once.
const (
	cLoopback  = "loopback"
	cPrivate   = "private (RFC 1918)"
	cLinkLocal = "link-local"
	cCGNAT     = "carrier-grade NAT (RFC 6598)"
	cThisNet   = "this network (0.0.0.0/8)"
	cMulticast = "multicast"
	cBroadcast = "broadcast"
	cReserved4 = "reserved (240.0.0.0/4)"
	cBench     = "benchmarking (RFC 2544)"
	cDoc4      = "documentation (RFC 5737)"
	cIETF4     = "IETF protocol assignments (RFC 6890)"
	cRelay     = "6to4 relay anycast (RFC 7526, deprecated)"
	cUnspec6   = "IPv6 unspecified"
	cULA       = "IPv6 unique local"
	cSiteLocal = "IPv6 site-local (RFC 3879, deprecated)"
	cReserved6 = "IPv6 reserved (outside global unicast 2000::/3)"
)

func mapped(v4, class string) string {
	return "IPv4-mapped IPv6 address embedding " + v4 + ", which is " + class
}
func compat(v4, class string) string {
	return "IPv4-compatible IPv6 address embedding " + v4 + ", which is " + class
}
func nat64(v4, class string) string {
	return "NAT64 address (64:ff9b::/96) embedding " + v4 + ", which is " + class
}
func sixToFour(v4, class string) string {
	return "6to4 address (2002::/16) embedding " + v4 + ", which is " + class
}
func teredo(role, v4, class string) string {
	return "Teredo address (2001::/32) embedding " + role + " " + v4 + ", which is " + class
}

// teredoAddr builds a Teredo address from its server and client IPv4,
// obfuscating the client (XOR 0xffffffff) as RFC 4380 §4 does.
func teredoAddr(server, client string) string {
	s := netip.MustParseAddr(server).As4()
	c := netip.MustParseAddr(client).As4()
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	copy(b[4:8], s[:])
	b[8], b[9] = 0x80, 0x00   // flags: cone NAT
	b[10], b[11] = 0x63, 0xbf // port 40000 obfuscated
	for i := range 4 {
		b[12+i] = ^c[i]
	}
	return netip.AddrFrom16(b).String()
}

// addrCases lists addresses in every spelling netip accepts, with the
// class the guard must give them ("" = allowed).
var addrCases = []struct{ in, class string }{
	// IPv4 loopback, and its IPv6 embeddings.
	{"127.0.0.1", cLoopback},
	{"127.0.0.0", cLoopback},
	{"127.1.2.3", cLoopback},
	{"127.255.255.255", cLoopback},
	{"::ffff:127.0.0.1", mapped("127.0.0.1", cLoopback)},
	{"::ffff:7f00:1", mapped("127.0.0.1", cLoopback)},
	{"::FFFF:7F00:0001", mapped("127.0.0.1", cLoopback)},
	{"0:0:0:0:0:ffff:7f00:1", mapped("127.0.0.1", cLoopback)},
	{"0000:0000:0000:0000:0000:ffff:127.0.0.1", mapped("127.0.0.1", cLoopback)},
	{"::127.0.0.1", compat("127.0.0.1", cLoopback)},
	{"::7f00:1", compat("127.0.0.1", cLoopback)},
	{"64:ff9b::127.0.0.1", nat64("127.0.0.1", cLoopback)},
	{"64:ff9b::7f00:1", nat64("127.0.0.1", cLoopback)},
	{"2002:7f00:1::", sixToFour("127.0.0.1", cLoopback)},
	{"2002:7f00:0001:ffff:ffff:ffff:ffff:ffff", sixToFour("127.0.0.1", cLoopback)},
	{teredoAddr("65.54.227.120", "127.0.0.1"), teredo("client", "127.0.0.1", cLoopback)},

	// IPv6 loopback and unspecified.
	{"::1", cLoopback},
	{"0:0:0:0:0:0:0:1", cLoopback},
	{"0000:0000:0000:0000:0000:0000:0000:0001", cLoopback},
	{"::1%lo", cLoopback},
	{"::", cUnspec6},
	{"0:0:0:0:0:0:0:0", cUnspec6},

	// RFC 1918, with the edges of each block.
	{"10.0.0.0", cPrivate},
	{"10.0.0.1", cPrivate},
	{"10.255.255.255", cPrivate},
	{"9.255.255.255", ""},
	{"11.0.0.0", ""},
	{"172.16.0.0", cPrivate},
	{"172.31.255.255", cPrivate},
	{"172.15.255.255", ""},
	{"172.32.0.0", ""},
	{"192.168.0.0", cPrivate},
	{"192.168.1.1", cPrivate},
	{"192.168.255.255", cPrivate},
	{"192.167.255.255", ""},
	{"192.169.0.0", ""},
	{"::ffff:10.0.0.1", mapped("10.0.0.1", cPrivate)},
	{"::ffff:a00:1", mapped("10.0.0.1", cPrivate)},
	{"::ffff:c0a8:101", mapped("192.168.1.1", cPrivate)},
	{"::10.0.0.1", compat("10.0.0.1", cPrivate)},
	{"::a00:1", compat("10.0.0.1", cPrivate)},
	{"64:ff9b::a00:1", nat64("10.0.0.1", cPrivate)},
	{"64:ff9b::10.0.0.1", nat64("10.0.0.1", cPrivate)},
	{"64:ff9b::c0a8:101", nat64("192.168.1.1", cPrivate)},
	{"2002:c0a8:0101::", sixToFour("192.168.1.1", cPrivate)},
	{"2002:c0a8:101::1", sixToFour("192.168.1.1", cPrivate)},
	{"2002:a00:1:1::1", sixToFour("10.0.0.1", cPrivate)},
	{"2002:ac10:1::", sixToFour("172.16.0.1", cPrivate)},
	{teredoAddr("65.54.227.120", "10.0.0.1"), teredo("client", "10.0.0.1", cPrivate)},
	{"2001:0:4136:e378:8000:63bf:f5ff:fffe", teredo("client", "10.0.0.1", cPrivate)},
	{teredoAddr("65.54.227.120", "192.168.0.5"), teredo("client", "192.168.0.5", cPrivate)},
	{teredoAddr("10.1.2.3", "8.8.8.8"), teredo("server", "10.1.2.3", cPrivate)},

	// Carrier-grade NAT.
	{"100.64.0.0", cCGNAT},
	{"100.100.100.200", cCGNAT}, // a cloud metadata address
	{"100.127.255.255", cCGNAT},
	{"100.63.255.255", ""},
	{"100.128.0.0", ""},
	{"::ffff:100.64.0.1", mapped("100.64.0.1", cCGNAT)},
	{"64:ff9b::6440:1", nat64("100.64.0.1", cCGNAT)},

	// This network.
	{"0.0.0.0", cThisNet},
	{"0.1.2.3", cThisNet},
	{"0.255.255.255", cThisNet},
	{"::ffff:0.0.0.0", mapped("0.0.0.0", cThisNet)},
	{"::2", compat("0.0.0.2", cThisNet)},
	{"::ffff", compat("0.0.255.255", cThisNet)},

	// Link-local, including the cloud metadata service.
	{"169.254.169.254", cLinkLocal},
	{"169.254.0.0", cLinkLocal},
	{"169.254.255.255", cLinkLocal},
	{"169.253.255.255", ""},
	{"169.255.0.0", ""},
	{"::ffff:169.254.169.254", mapped("169.254.169.254", cLinkLocal)},
	{"::ffff:a9fe:a9fe", mapped("169.254.169.254", cLinkLocal)},
	{"64:ff9b::a9fe:a9fe", nat64("169.254.169.254", cLinkLocal)},
	{"2002:a9fe:a9fe::", sixToFour("169.254.169.254", cLinkLocal)},
	{teredoAddr("65.54.227.120", "169.254.169.254"), teredo("client", "169.254.169.254", cLinkLocal)},
	{"fe80::1", cLinkLocal},
	{"fe80::1%eth0", cLinkLocal},
	{"fe80::1%25", cLinkLocal},
	{"FE80::FC:FF:FE00:1", cLinkLocal},
	{"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", cLinkLocal},

	// Multicast and broadcast.
	{"224.0.0.1", cMulticast},
	{"239.255.255.250", cMulticast},
	{"255.255.255.255", cBroadcast},
	{"::ffff:255.255.255.255", mapped("255.255.255.255", cBroadcast)},
	{"64:ff9b::e000:1", nat64("224.0.0.1", cMulticast)},
	{"ff02::1", cMulticast},
	{"ff05::1:3", cMulticast},
	{"ff0e::1", cMulticast},

	// Reserved 240/4.
	{"240.0.0.1", cReserved4},
	{"255.255.255.254", cReserved4},
	{"2002:f000:1::", sixToFour("240.0.0.1", cReserved4)},

	// Benchmarking.
	{"198.18.0.1", cBench},
	{"198.19.255.255", cBench},
	{"198.17.255.255", ""},
	{"198.20.0.0", ""},
	{"::ffff:198.18.0.1", mapped("198.18.0.1", cBench)},

	// Beyond the named classes: documentation, IETF assignments, 6to4 relay.
	{"192.0.2.1", cDoc4},
	{"198.51.100.7", cDoc4},
	{"203.0.113.9", cDoc4},
	{"192.0.0.8", cIETF4},
	{"192.0.0.170", cIETF4},
	{"192.88.99.1", cRelay},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", teredo("client", "192.0.2.45", cDoc4)}, // RFC 4380's example

	// IPv6 classes that embed no IPv4.
	{"fc00::1", cULA},
	{"fd00::2", cULA},
	{"fd12:3456:789a::1", cULA},
	{"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", cULA},
	{"fec0::1", cSiteLocal},
	{"64:ff9b:1::1", "NAT64 local-use (RFC 8215)"},
	{"64:ff9b:1::a00:1", "NAT64 local-use (RFC 8215)"},
	{"100::1", "discard-only (RFC 6666)"},
	{"2001:2::1", "benchmarking (RFC 5180)"},
	{"2001:10::1", "ORCHID (RFC 4843, deprecated)"},
	{"2001:db8::1", "documentation (RFC 3849)"},
	{"2001:db8:ffff::", "documentation (RFC 3849)"},
	{"3fff::1", "documentation (RFC 9637)"},
	{"3fff:fff:ffff::1", "documentation (RFC 9637)"},
	{"2001:1::3", "IETF protocol assignments (2001::/23)"},
	{"2001:1::", "IETF protocol assignments (2001::/23)"},
	{"2001:1ff::1", "IETF protocol assignments (2001::/23)"},
	{"2001:4:111::1", "IETF protocol assignments (2001::/23)"},
	{"2001:4:113::", "IETF protocol assignments (2001::/23)"},
	{"2001:40::1", "IETF protocol assignments (2001::/23)"},
	{"2001:1f:ffff::1", "ORCHID (RFC 4843, deprecated)"},
	{"192.0.0.11", cIETF4},
	{"192.0.0.0", cIETF4},
	{"::ffff:0:7f00:1", cReserved6}, // SIIT "IPv4-translated" (RFC 2765, obsolete)
	{"1::1", cReserved6},
	{"100:0:0:1::1", cReserved6},
	{"4000::1", cReserved6},
	{"5f00::1", cReserved6},
	{"8000::1", cReserved6},
	{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", cReserved6},

	// Public addresses: allowed.
	{"8.8.8.8", ""},
	{"1.1.1.1", ""},
	{"93.184.216.34", ""},
	{"1.0.0.0", ""},
	{"223.255.255.255", ""},
	{"192.0.1.1", ""},    // outside 192.0.0.0/24 and 192.0.2.0/24
	{"192.31.196.1", ""}, // AS112, globally reachable
	{"192.52.193.1", ""}, // AMT, globally reachable
	{"192.175.48.1", ""}, // AS112, globally reachable
	// Rows of IANA's special-purpose registries marked globally reachable,
	// inside blocks that are not.
	{"192.0.0.9", ""},            // Port Control Protocol anycast (RFC 7723)
	{"192.0.0.10", ""},           // TURN anycast (RFC 8155)
	{"::ffff:192.0.0.9", ""},     // and its IPv4-mapped form
	{"2001:1::1", ""},            // Port Control Protocol anycast (RFC 7723)
	{"2001:1::2", ""},            // TURN anycast (RFC 8155)
	{"2001:3::1", ""},            // AMT (RFC 7450)
	{"2001:3:ffff:ffff::1", ""},  // the end of 2001:3::/32
	{"2001:4:112::1", ""},        // AS112-v6 (RFC 7535)
	{"2001:4:112:ffff::1", ""},   // the end of 2001:4:112::/48
	{"2001:20::1", ""},           // ORCHIDv2 (RFC 7343)
	{"2001:2f:ffff:ffff::1", ""}, // the end of 2001:20::/28
	{"2001:30::1", ""},           // DRIP entity tags (RFC 9374)
	{"2001:3f:ffff:ffff::1", ""}, // the end of 2001:30::/28
	{"2620:4f:8000::1", ""},      // AS112 direct delegation (RFC 7534)
	{"::ffff:8.8.8.8", ""},       // a public address and its mapped form agree
	{"::ffff:808:808", ""},
	{"::8.8.8.8", ""},            // IPv4-compatible, public inside
	{"64:ff9b::8.8.8.8", ""},     // NAT64 of a public address: how IPv6-only hosts reach IPv4
	{"64:ff9b::5db8:d822", ""},   // 93.184.216.34
	{"2002:808:808::1", ""},      // 6to4 of a public address
	{"2606:4700::1111", ""},      // Cloudflare DNS
	{"2606:4700:4700::1111", ""}, // Cloudflare DNS
	{"2001:4860:4860::8888", ""}, // Google DNS
	{"2a00:1450:4001:81c::200e", ""},
	{"2001:200::1", ""}, // just outside 2001::/23
	{"2606:4700::1111%eth0", ""},
	{"3ffe::1", ""},
	{"3fff:1000::1", ""}, // just outside 3fff::/20
	{teredoAddr("65.54.227.120", "8.8.8.8"), ""},
	{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", ""},
}

func TestCheckAddrTable(t *testing.T) {
	var g Guard
	for _, tc := range addrCases {
		t.Run(tc.in, func(t *testing.T) {
			a := netip.MustParseAddr(tc.in)
			err := g.CheckAddr(a)
			if tc.class == "" {
				if err != nil {
					t.Fatalf("CheckAddr(%s) = %v, want allowed", tc.in, err)
				}
				return
			}
			var de *DeniedError
			if !errors.As(err, &de) {
				t.Fatalf("CheckAddr(%s) = %v, want *DeniedError %q", tc.in, err, tc.class)
			}
			if de.Class != tc.class {
				t.Errorf("CheckAddr(%s) class %q, want %q", tc.in, de.Class, tc.class)
			}
			if de.Addr != a {
				t.Errorf("DeniedError.Addr = %v, want %v", de.Addr, a)
			}
			if want := "address " + a.String() + " is denied: " + tc.class; err.Error() != want {
				t.Errorf("message %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestCheckAddrMessages(t *testing.T) {
	var g Guard
	for in, want := range map[string]string{
		"127.0.0.1":       "address 127.0.0.1 is denied: loopback",
		"::1":             "address ::1 is denied: loopback",
		"10.1.2.3":        "address 10.1.2.3 is denied: private (RFC 1918)",
		"169.254.169.254": "address 169.254.169.254 is denied: link-local",
		"::ffff:7f00:1":   "address ::ffff:127.0.0.1 is denied: IPv4-mapped IPv6 address embedding 127.0.0.1, which is loopback",
		"64:ff9b::a00:1":  "address 64:ff9b::a00:1 is denied: NAT64 address (64:ff9b::/96) embedding 10.0.0.1, which is private (RFC 1918)",
		"2001:0:4136:e378:8000:63bf:f5ff:fffe": "address 2001:0:4136:e378:8000:63bf:f5ff:fffe is denied: " +
			"Teredo address (2001::/32) embedding client 10.0.0.1, which is private (RFC 1918)",
		"fe80::1%eth0": "address fe80::1%eth0 is denied: link-local",
	} {
		if got := g.CheckAddr(netip.MustParseAddr(in)); got == nil || got.Error() != want {
			t.Errorf("CheckAddr(%s) = %v\nwant %s", in, got, want)
		}
	}
	if err := g.CheckAddr(netip.Addr{}); err == nil || err.Error() != "address invalid IP is denied: not an IP address" {
		t.Errorf("CheckAddr(zero Addr) = %v", err)
	}
}

// TestEveryIPv4RuleAtItsEdges walks the IPv4 table: the first and last
// address of every entry are denied with that entry's class (or a more
// specific one listed earlier), the mapped form agrees, and the address
// just outside a block gets another verdict.
func TestEveryIPv4RuleAtItsEdges(t *testing.T) {
	var g Guard
	u32 := func(v uint32) netip.Addr {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], v)
		return netip.AddrFrom4(b)
	}
	for _, r := range denied4 {
		first, last := r.net, r.net|^r.mask
		for _, v := range []uint32{first, last, first + (last-first)/2} {
			a := u32(v)
			got := classify(a)
			if got == "" {
				t.Errorf("%s (in the %q block) is allowed", a, r.class)
				continue
			}
			if got != r.class && r.class != cReserved4 {
				t.Errorf("%s: class %q, want %q", a, got, r.class)
			}
			if err := g.CheckAddr(netip.AddrFrom16(a.As16())); err == nil {
				t.Errorf("mapped %s allowed", a)
			}
		}
		for _, v := range []uint32{first - 1, last + 1} {
			if (v == first-1 && first == 0) || (v == last+1 && last == ^uint32(0)) {
				continue
			}
			if got := classify(u32(v)); got == r.class {
				t.Errorf("%s, just outside the %q block, has its class", u32(v), r.class)
			}
		}
	}
}

func TestEveryIPv6RuleAtItsEdges(t *testing.T) {
	u64 := func(hi, lo uint64) netip.Addr {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], hi)
		binary.BigEndian.PutUint64(b[8:], lo)
		return netip.AddrFrom16(b)
	}
	for _, rules := range [][]rule6{denied6Global, denied6Other} {
		for _, r := range rules {
			first, last := u64(r.net, 0), u64(r.net|^r.mask, ^uint64(0))
			for _, a := range []netip.Addr{first, last} {
				got := classify(a)
				if strings.HasPrefix(got, "Teredo address") && r.class == "IETF protocol assignments (2001::/23)" {
					continue // 2001::/32 inside 2001::/23 is judged by its embedded IPv4
				}
				if got != r.class {
					t.Errorf("%s (edge of %q) class %q", a, r.class, got)
				}
			}
		}
	}
	// The global unicast rules are inside 2000::/3, the others outside.
	for _, r := range denied6Global {
		if r.net>>61 != 1 {
			t.Errorf("%q is not inside 2000::/3", r.class)
		}
	}
	for _, r := range denied6Other {
		if r.net>>61 == 1 {
			t.Errorf("%q is inside 2000::/3", r.class)
		}
	}
}

func TestAllowList(t *testing.T) {
	p := netip.MustParsePrefix
	cases := []struct {
		allow   []netip.Prefix
		addr    string
		allowed bool
	}{
		{[]netip.Prefix{p("127.0.0.0/8")}, "127.0.0.1", true},
		{[]netip.Prefix{p("127.0.0.0/8")}, "127.9.9.9", true},
		{[]netip.Prefix{p("127.0.0.0/8")}, "::ffff:127.0.0.1", true}, // the mapped twin
		{[]netip.Prefix{p("127.0.0.0/8")}, "::1", false},
		{[]netip.Prefix{p("127.0.0.0/8")}, "10.0.0.1", false},
		{[]netip.Prefix{p("127.0.0.0/8")}, "64:ff9b::7f00:1", false}, // embedded, not the dialled address
		{[]netip.Prefix{p("127.0.0.1/32")}, "127.0.0.2", false},
		{[]netip.Prefix{p("127.0.0.1/8")}, "127.0.0.2", true}, // unmasked prefix still matches its block
		{[]netip.Prefix{p("::ffff:127.0.0.0/104")}, "127.0.0.1", true},
		{[]netip.Prefix{p("::ffff:127.0.0.0/104")}, "::ffff:127.0.0.1", true},
		{[]netip.Prefix{p("::1/128")}, "::1", true},
		{[]netip.Prefix{p("::1/128")}, "127.0.0.1", false},
		{[]netip.Prefix{p("fe80::/10")}, "fe80::1%eth0", true}, // zones do not hide an address from the list
		{[]netip.Prefix{p("64:ff9b::/96")}, "64:ff9b::a00:1", true},
		{[]netip.Prefix{p("10.0.0.0/8"), p("192.168.0.0/16")}, "192.168.3.4", true},
		{[]netip.Prefix{p("0.0.0.0/0")}, "169.254.169.254", true},
		{[]netip.Prefix{p("0.0.0.0/0")}, "::1", false},
		{[]netip.Prefix{{}}, "127.0.0.1", false}, // invalid prefix matches nothing
		{nil, "127.0.0.1", false},
		{nil, "8.8.8.8", true},
	}
	for _, tc := range cases {
		g := &Guard{Allow: tc.allow}
		err := g.CheckAddr(netip.MustParseAddr(tc.addr))
		if (err == nil) != tc.allowed {
			t.Errorf("Allow %v, CheckAddr(%s) = %v, want allowed=%v", tc.allow, tc.addr, err, tc.allowed)
		}
	}
}

func TestNilGuard(t *testing.T) {
	var g *Guard
	if err := g.CheckAddr(netip.MustParseAddr("127.0.0.1")); err == nil {
		t.Error("nil guard allowed loopback")
	}
	if err := g.CheckAddr(netip.MustParseAddr("8.8.8.8")); err != nil {
		t.Errorf("nil guard denied a public address: %v", err)
	}
	if err := g.Control("tcp4", "127.0.0.1:80", nil); err == nil {
		t.Error("nil guard's Control allowed loopback")
	}
	if g.Client() == nil || g.Transport() == nil || g.Dialer() == nil {
		t.Error("nil guard cannot build a client")
	}
}

func TestControl(t *testing.T) {
	var g Guard
	cases := []struct {
		network, address string
		denied           string // class of a *DeniedError, or "" for allowed, or "error" for another error
	}{
		{"tcp4", "127.0.0.1:80", cLoopback},
		{"tcp", "127.0.0.1:8080", cLoopback},
		{"tcp6", "[::1]:443", cLoopback},
		{"tcp6", "[fe80::1%eth0]:443", cLinkLocal},
		{"tcp6", "[::ffff:10.0.0.1]:80", mapped("10.0.0.1", cPrivate)},
		{"tcp4", "169.254.169.254:80", cLinkLocal},
		{"tcp4", "8.8.8.8:443", ""},
		{"tcp6", "[2606:4700::1111]:443", ""},
		{"tcp4", "8.8.8.8:0", ""},
		{"udp", "8.8.8.8:53", "error"},
		{"udp4", "127.0.0.1:53", "error"},
		{"unix", "/var/run/docker.sock", "error"},
		{"ip4:icmp", "127.0.0.1", "error"},
		{"tcp", "localhost:80", "error"}, // Control always sees an IP; a name means something is wrong
		{"tcp", "2130706433:80", "error"},
		{"tcp", "127.0.0.1", "error"},
		{"tcp", "", "error"},
	}
	for _, tc := range cases {
		err := g.Control(tc.network, tc.address, nil)
		var de *DeniedError
		switch tc.denied {
		case "":
			if err != nil {
				t.Errorf("Control(%s, %s) = %v, want nil", tc.network, tc.address, err)
			}
		case "error":
			if err == nil || errors.As(err, &de) {
				t.Errorf("Control(%s, %s) = %v, want a non-DeniedError refusal", tc.network, tc.address, err)
			}
		default:
			if !errors.As(err, &de) || de.Class != tc.denied {
				t.Errorf("Control(%s, %s) = %v, want denied %q", tc.network, tc.address, err, tc.denied)
			}
		}
	}
}

func TestCheckURL(t *testing.T) {
	// want: "" allowed, "scheme:X" a *SchemeError for scheme X, "nohost"
	// ErrNoHost, anything else the class of a *DeniedError.
	type want = string
	schemeErr := func(s string) want { return "scheme:" + s }
	denied := func(c string) want { return c }
	noHost := "nohost"
	cases := []struct {
		url  string
		want want
	}{
		{"ftp://example.com/file", schemeErr("ftp")},
		{"file:///etc/passwd", schemeErr("file")},
		{"gopher://127.0.0.1:70/_GET", schemeErr("gopher")},
		{"javascript:alert(1)", schemeErr("javascript")},
		{"ws://example.com/", schemeErr("ws")},
		{"dict://127.0.0.1:11211/stat", schemeErr("dict")},
		{"//example.com/no-scheme", schemeErr("")},
		{"example.com/no-scheme", schemeErr("")},
		{"http:///path", noHost},
		{"http://:8080/path", noHost},
		{"https://user:pass@/x", noHost},
		{"http:opaque", noHost},
		{"http://127.0.0.1/", denied(cLoopback)},
		{"http://127.0.0.1:8080/x?y=1", denied(cLoopback)},
		{"https://[::1]:8443/", denied(cLoopback)},
		{"http://[::ffff:127.0.0.1]/", denied(mapped("127.0.0.1", cLoopback))},
		{"http://[::ffff:7f00:1]/", denied(mapped("127.0.0.1", cLoopback))},
		{"http://[fe80::1%25eth0]/", denied(cLinkLocal)},
		{"http://[64:ff9b::a9fe:a9fe]/", denied(nat64("169.254.169.254", cLinkLocal))},
		{"http://169.254.169.254/latest/meta-data/", denied(cLinkLocal)},
		{"http://10.0.0.1:9200/_search", denied(cPrivate)},
		{"http://0.0.0.0:8080/", denied(cThisNet)},
		// Legacy spellings a C resolver turns into 127.0.0.1.
		{"http://2130706433/", denied(cLoopback)},
		{"http://0x7f.1/", denied(cLoopback)},
		{"http://0X7F.0X1/", denied(cLoopback)},
		{"http://0177.0.0.1/", denied(cLoopback)},
		{"http://0177.1/", denied(cLoopback)},
		{"http://127.1/", denied(cLoopback)},
		{"http://127.0.1/", denied(cLoopback)},
		{"http://0x7f000001/", denied(cLoopback)},
		{"http://017700000001/", denied(cLoopback)},
		{"http://0x7f.0.0.0x1/", denied(cLoopback)},
		{"http://127.0.0.1./", denied(cLoopback)},
		{"http://0/", denied(cThisNet)},
		{"http://0xa9fea9fe/", denied(cLinkLocal)},
		{"http://2852039166/", denied(cLinkLocal)}, // 169.254.169.254
		{"http://10.1/", denied(cPrivate)},
		// Allowed at URL time.
		{"http://example.com/", ""},
		{"HTTPS://EXAMPLE.COM/", ""}, // url.Parse lower-cases the scheme
		{"https://8.8.8.8/", ""},
		{"http://134744072/", ""}, // 8.8.8.8
		{"http://[2606:4700::1111]:443/", ""},
		{"http://localhost/", ""},   // a name: refused at dial time, not here
		{"http://1.2.3.4.5/", ""},   // not an address: a name
		{"http://256.0.0.1/", ""},   // not an address: a name
		{"http://08.0.0.1/", ""},    // 8 is not octal: a name
		{"http://0x.1/", ""},        // empty hex part: a name
		{"http://4294967296/", ""},  // more than 32 bits: a name
		{"http://1.2.3.0x100/", ""}, // last of four parts over 255: a name
		{"https://1e100.net/", ""},
	}
	var g Guard
	for _, tc := range cases {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", tc.url, err)
		}
		err = g.CheckURL(u)
		var se *SchemeError
		var de *DeniedError
		switch {
		case strings.HasPrefix(tc.want, "scheme:"):
			if !errors.As(err, &se) || se.Scheme != strings.TrimPrefix(tc.want, "scheme:") {
				t.Errorf("CheckURL(%s) = %v, want *SchemeError{%q}", tc.url, err, tc.want)
			}
		case tc.want == noHost:
			if !errors.Is(err, ErrNoHost) {
				t.Errorf("CheckURL(%s) = %v, want ErrNoHost", tc.url, err)
			}
		case tc.want != "":
			if !errors.As(err, &de) || de.Class != tc.want {
				t.Errorf("CheckURL(%s) = %v, want denied %q", tc.url, err, tc.want)
			}
		default:
			if err != nil {
				t.Errorf("CheckURL(%s) = %v, want nil", tc.url, err)
			}
		}
		if err != nil && strings.Contains(err.Error(), "meta-data") {
			t.Errorf("CheckURL error repeats the URL: %v", err)
		}
	}
	if err := g.CheckURL(nil); err == nil {
		t.Error("CheckURL(nil) = nil")
	}
	if got, want := (&SchemeError{Scheme: "ftp"}).Error(), `URL scheme "ftp" is not allowed: only http and https are`; got != want {
		t.Errorf("SchemeError: %q, want %q", got, want)
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	for in, want := range map[string]string{
		"2130706433":      "127.0.0.1",
		"0x7f.1":          "127.0.0.1",
		"0177.0.0.1":      "127.0.0.1",
		"127.1":           "127.0.0.1",
		"127.0.1":         "127.0.0.1",
		"1.2.3.4":         "1.2.3.4",
		"1.2.3.4.":        "1.2.3.4",
		"0":               "0.0.0.0",
		"00":              "0.0.0.0",
		"0x0":             "0.0.0.0",
		"4294967295":      "255.255.255.255",
		"0xffffffff":      "255.255.255.255",
		"037777777777":    "255.255.255.255",
		"1.16777215":      "1.255.255.255",
		"1.2.65535":       "1.2.255.255",
		"0xc0.0xa8.0x1.1": "192.168.1.1",
		"0300.0250.1.1":   "192.168.1.1",
	} {
		a, ok := parseLegacyIPv4(in)
		if !ok || a != netip.MustParseAddr(want) {
			t.Errorf("parseLegacyIPv4(%q) = %v, %v; want %s", in, a, ok, want)
		}
	}
	for _, in := range []string{
		"", ".", "..", "1..2", "1.2.3.4.5", "256.1.1.1", "1.256.1.1", "1.2.256.1", "1.2.3.256",
		"4294967296", "1.16777216", "1.2.65536", "0x", "0x.1", "08", "09.1.1.1", "+1", "-1", "1.-1",
		"0x+1", "example.com", "1.2.3.4a", "1_000", "0x1_0", " 1", "1.2.3.4..",
		strings.Repeat("1", 100),
	} {
		if a, ok := parseLegacyIPv4(in); ok {
			t.Errorf("parseLegacyIPv4(%q) = %v, want not an address", in, a)
		}
	}
}

// FuzzParseLegacyIPv4 writes an IPv4 address in a random legacy form and
// checks it reads back the same; any string never panics.
func FuzzParseLegacyIPv4(f *testing.F) {
	f.Add(uint32(0x7f000001), uint8(0), "0x7f.1")
	f.Add(uint32(0xa9fea9fe), uint8(7), "2130706433")
	f.Fuzz(func(t *testing.T, v uint32, form uint8, s string) {
		parseLegacyIPv4(s)
		b := [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		parts := int(form%4) + 1
		var vals []uint32
		for i := range parts - 1 {
			vals = append(vals, uint32(b[i]))
		}
		vals = append(vals, v&(^uint32(0)>>(8*(parts-1))))
		var out []string
		for i, x := range vals {
			switch (int(form) >> 2 >> i) % 3 {
			case 0:
				out = append(out, fmt.Sprintf("%d", x))
			case 1:
				out = append(out, fmt.Sprintf("0x%x", x))
			case 2:
				out = append(out, fmt.Sprintf("0%o", x))
			}
		}
		in := strings.Join(out, ".")
		a, ok := parseLegacyIPv4(in)
		if !ok || a != netip.AddrFrom4(b) {
			t.Fatalf("parseLegacyIPv4(%q) = %v, %v; want %v", in, a, ok, netip.AddrFrom4(b))
		}
	})
}

// TestGloballyReachableRowsAtTheirEdges: each row of the registries marked
// globally reachable inside a denied block is allowed from its first to its
// last address (and so is its IPv4-mapped form), while the addresses just
// outside it keep the enclosing block's class.
func TestGloballyReachableRowsAtTheirEdges(t *testing.T) {
	var g Guard
	for _, r := range reachable4 {
		first, last := r.net, r.net|^r.mask
		for _, v := range []uint32{first, last} {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], v)
			a := netip.AddrFrom4(b)
			if err := g.CheckAddr(a); err != nil {
				t.Errorf("%s (%s): %v", a, r.class, err)
			}
			if err := g.CheckAddr(netip.AddrFrom16(a.As16())); err != nil {
				t.Errorf("mapped %s (%s): %v", a, r.class, err)
			}
		}
		for _, v := range []uint32{first - 1, last + 1} {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], v)
			if a := netip.AddrFrom4(b); !match4(reachable4, v) && classify(a) != classIETF4 {
				t.Errorf("%s, next to %s, has class %q", a, r.class, classify(a))
			}
		}
	}
	for _, p := range reachable6 {
		first := p.Masked().Addr()
		b := first.As16()
		for i := p.Bits(); i < 128; i++ {
			b[i/8] |= 0x80 >> (i % 8)
		}
		last := netip.AddrFrom16(b)
		for _, a := range []netip.Addr{first, last} {
			if err := g.CheckAddr(a); err != nil {
				t.Errorf("%s (in %s): %v", a, p, err)
			}
		}
		for _, a := range []netip.Addr{first.Prev(), last.Next()} {
			if !reachable(a) && classify(a) == "" {
				t.Errorf("%s, next to %s, is allowed", a, p)
			}
		}
	}
}

// TestDocListsTheTables: every block of the tables is in the package
// documentation, so the two cannot drift apart silently.
func TestDocListsTheTables(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var prefixes []string
	p4 := func(r rule4) string {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], r.net)
		return netip.PrefixFrom(netip.AddrFrom4(b), bits.OnesCount32(r.mask)).String()
	}
	for _, r := range append(append([]rule4(nil), denied4...), reachable4...) {
		prefixes = append(prefixes, p4(r))
	}
	for _, rules := range [][]rule6{denied6Global, denied6Other} {
		for _, r := range rules {
			var b [16]byte
			binary.BigEndian.PutUint64(b[:8], r.net)
			prefixes = append(prefixes, netip.PrefixFrom(netip.AddrFrom16(b), bits.OnesCount64(r.mask)).String())
		}
	}
	for _, p := range reachable6 {
		prefixes = append(prefixes, p.String())
	}
	for _, p := range prefixes {
		if !strings.Contains(string(doc), "//\t"+p+" ") && !strings.Contains(string(doc), " "+p+" ") {
			t.Errorf("doc.go does not list %s", p)
		}
	}
}
