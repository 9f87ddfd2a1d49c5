package guard

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// Guard decides which IP addresses outgoing requests may connect to.
//
// The zero value applies the deny-list only (see the package
// documentation); so does a nil *Guard. A Guard is safe for concurrent use
// as long as its fields are not modified after first use, like
// [net/http.Server].
type Guard struct {
	// Allow lists prefixes whose addresses are allowed even though the
	// deny-list covers them, e.g. 127.0.0.0/8 and ::1/128 in tests, or one
	// internal service an operator must reach. An IPv4 prefix also allows
	// the IPv4-mapped form of its addresses, and ::ffff:a.b.c.d prefixes
	// also allow the plain IPv4 addresses. Invalid prefixes match nothing.
	Allow []netip.Prefix
}

// DeniedError reports an address the guard refuses to connect to.
type DeniedError struct {
	// Addr is the address as checked (with its zone, if it had one).
	Addr netip.Addr
	// Class says, for a person, why: "loopback", "private (RFC 1918)",
	// "IPv4-mapped IPv6 address embedding 10.0.0.1, which is private (RFC
	// 1918)". It is not meant to be matched by programs.
	Class string
}

func (e *DeniedError) Error() string {
	return "address " + e.Addr.String() + " is denied: " + e.Class
}

// SchemeError reports a URL whose scheme is not http or https.
type SchemeError struct {
	Scheme string // as written in the URL, possibly empty
}

func (e *SchemeError) Error() string {
	if e.Scheme == "" {
		return "URL has no scheme: only http and https are allowed"
	}
	return fmt.Sprintf("URL scheme %q is not allowed: only http and https are", e.Scheme)
}

// ErrNoHost is returned by [Guard.CheckURL] for a URL without a host name.
var ErrNoHost = errors.New("URL has no host")

// CheckAddr returns nil if a may be connected to, and a *[DeniedError]
// otherwise. It does not allocate for allowed addresses.
func (g *Guard) CheckAddr(a netip.Addr) error {
	if g.allows(a) {
		return nil
	}
	if class := classify(a); class != "" {
		return &DeniedError{Addr: a, Class: class}
	}
	return nil
}

// allows reports whether a, or its IPv4-mapped / unmapped twin, lies in a
// prefix of the allow-list.
func (g *Guard) allows(a netip.Addr) bool {
	if g == nil || len(g.Allow) == 0 || !a.IsValid() {
		return false
	}
	a = a.WithZone("") // a zoned address never matches a prefix
	v4, v6 := a, a
	if a.Is4() {
		v6 = netip.AddrFrom16(a.As16())
	} else if a.Is4In6() {
		v4 = a.Unmap()
	}
	for _, p := range g.Allow {
		if p.Contains(v4) || p.Contains(v6) {
			return true
		}
	}
	return false
}

// CheckURL is the early check of a URL about to be requested: the scheme
// must be http or https (*[SchemeError]), there must be a host
// ([ErrNoHost]), and a host that is an IP literal — including the legacy
// IPv4 spellings that C resolvers accept, such as 2130706433, 0x7f.1 and
// 0177.0.0.1 — must pass [Guard.CheckAddr] (*[DeniedError]).
//
// Host names are not resolved here: a name may resolve differently when the
// connection is made (DNS rebinding), so the authoritative check is
// [Guard.Control], at dial time. The errors never include the URL itself,
// which may be a secret.
func (g *Guard) CheckURL(u *url.URL) error {
	if u == nil {
		return ErrNoHost
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &SchemeError{Scheme: u.Scheme}
	}
	host := u.Hostname()
	if host == "" {
		return ErrNoHost
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return g.CheckAddr(a)
	}
	if a, ok := parseLegacyIPv4(host); ok {
		return g.CheckAddr(a)
	}
	return nil
}

// parseLegacyIPv4 parses the IPv4 forms of inet_aton(3), which getaddrinfo
// and therefore many resolvers accept for a host name: one to four parts
// separated by dots, each decimal, octal (leading 0) or hexadecimal (0x), the
// last part filling the remaining bytes (2130706433, 127.1, 0x7f.1,
// 0177.0.0.1). A single trailing dot, as in a fully qualified name, is
// accepted too.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 64 {
		return netip.Addr{}, false
	}
	var parts [4]uint64
	n := 0
	for part := range strings.SplitSeq(s, ".") {
		if n == 4 {
			return netip.Addr{}, false
		}
		base, digits := 10, part
		switch {
		case len(part) > 1 && (part[:2] == "0x" || part[:2] == "0X"):
			base, digits = 16, part[2:]
		case len(part) > 1 && part[0] == '0':
			base, digits = 8, part[1:]
		}
		if digits == "" || digits[0] == '+' || digits[0] == '-' {
			return netip.Addr{}, false
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		parts[n] = v
		n++
	}
	// Every part but the last is one byte; the last fills what remains.
	var v uint64
	for i := range n - 1 {
		if parts[i] > 0xff {
			return netip.Addr{}, false
		}
		v |= parts[i] << (8 * (3 - i))
	}
	last := parts[n-1]
	if last >= 1<<(8*(4-(n-1))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// Control is a [net.Dialer] Control hook. It is called for every
// connection attempt after name resolution, with the IP address and port
// about to be connected to, and refuses (with a *[DeniedError]) any address
// that [Guard.CheckAddr] refuses. Networks other than tcp, tcp4 and tcp6,
// and addresses that are not an IP and a port, are refused too.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return fmt.Errorf("guard: refusing to dial network %q: only tcp is allowed", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("guard: refusing to dial %q: not an IP address and port", address)
	}
	return g.CheckAddr(ap.Addr())
}
