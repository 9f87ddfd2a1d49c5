package guard_test

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/kobana/workflow/executor/guard"
)

// twin returns the IPv4-mapped form of an IPv4 address and the IPv4 form
// of an IPv4-mapped one; ok is false for other addresses.
func twin(a netip.Addr) (netip.Addr, bool) {
	switch {
	case a.Is4():
		return netip.AddrFrom16(a.As16()), true
	case a.Is4In6():
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// FuzzCheckAddr feeds the guard addresses built from arbitrary bytes and
// strings. Properties:
//   - nothing panics (CheckAddr, Control, CheckURL);
//   - a refusal is a *DeniedError carrying the address and a class, with
//     the documented message;
//   - an address and its IPv4-mapped twin get the same verdict, with and
//     without an allow-list;
//   - a zone never changes the verdict;
//   - Control on "ip:port" and CheckURL on a literal agree with CheckAddr;
//   - an allow-list prefix always wins for the addresses inside it.
func FuzzCheckAddr(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::a00:1", "2002:c0a8:101::",
		"2001:0:4136:e378:8000:63bf:f5ff:fffe", "fe80::1%eth0", "8.8.8.8", "2606:4700::1111",
		"::", "::1", "ff02::1", "255.255.255.255", "0x7f.1", "2130706433",
	} {
		a, _ := netip.ParseAddr(s)
		var raw []byte
		if a.IsValid() {
			raw = a.AsSlice()
		}
		f.Add(raw, s, uint8(8))
	}
	f.Add(make([]byte, 16), "", uint8(0))
	f.Add([]byte{0x7f, 0, 0, 1}, "0177.0.0.1", uint8(32))

	var deny guard.Guard
	f.Fuzz(func(t *testing.T, raw []byte, s string, bits uint8) {
		var addrs []netip.Addr
		if a, ok := netip.AddrFromSlice(raw); ok {
			addrs = append(addrs, a)
		}
		if len(raw) >= 16 {
			addrs = append(addrs, netip.AddrFrom16([16]byte(raw[:16])), netip.AddrFrom4([4]byte(raw[:4])))
		}
		if a, err := netip.ParseAddr(s); err == nil {
			addrs = append(addrs, a)
		}
		// Strings reach CheckURL and Control as they are.
		if u, err := url.Parse("http://" + s + "/"); err == nil {
			_ = deny.CheckURL(u)
		}
		_ = deny.Control("tcp", s, nil)
		_ = deny.CheckAddr(netip.Addr{})

		for _, a := range addrs {
			err := deny.CheckAddr(a)
			if err != nil {
				var de *guard.DeniedError
				if !errors.As(err, &de) || de.Addr != a || de.Class == "" {
					t.Fatalf("CheckAddr(%s) = %#v, want a *DeniedError for it", a, err)
				}
				if want := "address " + a.String() + " is denied: "; !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("message %q", err)
				}
			}
			if tw, ok := twin(a); ok {
				if terr := deny.CheckAddr(tw); (terr == nil) != (err == nil) {
					t.Fatalf("%s → %v but its twin %s → %v", a, err, tw, terr)
				}
			}
			if a.Is6() && !a.Is4In6() {
				if zerr := deny.CheckAddr(a.WithZone("eth0")); (zerr == nil) != (err == nil) {
					t.Fatalf("%s → %v but with a zone → %v", a, err, zerr)
				}
			}
			if cerr := deny.Control("tcp", netip.AddrPortFrom(a, 443).String(), nil); (cerr == nil) != (err == nil) {
				t.Fatalf("CheckAddr(%s) = %v but Control = %v", a, err, cerr)
			}
			host := a.String()
			if a.Is6() {
				host = "[" + strings.ReplaceAll(host, "%", "%25") + "]"
			}
			if u, perr := url.Parse("http://" + host + ":8080/"); perr == nil {
				if uerr := deny.CheckURL(u); (uerr == nil) != (err == nil) {
					t.Fatalf("CheckAddr(%s) = %v but CheckURL(%s) = %v", a, err, u, uerr)
				}
			}

			// The allow-list wins for every address inside it, and for its twin.
			p, perr := a.WithZone("").Prefix(int(bits) % (a.BitLen() + 1))
			if perr != nil {
				t.Fatalf("Prefix: %v", perr)
			}
			allow := &guard.Guard{Allow: []netip.Prefix{p}}
			if aerr := allow.CheckAddr(a); aerr != nil {
				t.Fatalf("Allow %s, CheckAddr(%s) = %v", p, a, aerr)
			}
			if tw, ok := twin(a); ok {
				if aerr := allow.CheckAddr(tw); aerr != nil {
					t.Fatalf("Allow %s, CheckAddr(twin %s) = %v", p, tw, aerr)
				}
			}
			// An allow-list never denies.
			if err == nil {
				if aerr := allow.CheckAddr(a); aerr != nil {
					t.Fatalf("allow-list turned %s into a refusal: %v", a, aerr)
				}
			}
		}
	})
}
