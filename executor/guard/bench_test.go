package guard_test

import (
	"net/netip"
	"testing"

	"github.com/kobana/workflow/executor/guard"
)

var benchAllowed = []netip.Addr{
	netip.MustParseAddr("8.8.8.8"),
	netip.MustParseAddr("93.184.216.34"),
	netip.MustParseAddr("223.255.255.255"),
	netip.MustParseAddr("::ffff:1.1.1.1"),
	netip.MustParseAddr("2606:4700::1111"),
	netip.MustParseAddr("2a00:1450:4001:81c::200e"),
	netip.MustParseAddr("64:ff9b::808:808"),
	netip.MustParseAddr("2001:0:4136:e378:8000:63bf:f7f7:f7f7"),
}

var benchDenied = []netip.Addr{
	netip.MustParseAddr("127.0.0.1"),
	netip.MustParseAddr("10.1.2.3"),
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("240.0.0.1"),
	netip.MustParseAddr("::1"),
	netip.MustParseAddr("fd00::1"),
	netip.MustParseAddr("::ffff:192.168.1.1"),
	netip.MustParseAddr("64:ff9b::a00:1"),
}

var sink error

func benchAddrs(b *testing.B, g *guard.Guard, addrs []netip.Addr) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sink = g.CheckAddr(addrs[i%len(addrs)])
	}
}

func BenchmarkCheckAddr(b *testing.B) {
	var g guard.Guard
	mix := append(append([]netip.Addr{}, benchAllowed...), benchDenied...)
	b.Run("allowed", func(b *testing.B) { benchAddrs(b, &g, benchAllowed) })
	b.Run("allowed-v4", func(b *testing.B) { benchAddrs(b, &g, benchAllowed[:1]) })
	b.Run("allowed-v6", func(b *testing.B) { benchAddrs(b, &g, benchAllowed[4:5]) })
	b.Run("denied", func(b *testing.B) { benchAddrs(b, &g, benchDenied) })
	b.Run("mix", func(b *testing.B) { benchAddrs(b, &g, mix) })
	allow := &guard.Guard{Allow: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.0.0.0/8"),
	}}
	b.Run("mix-with-allow-list", func(b *testing.B) { benchAddrs(b, allow, mix) })
}

func BenchmarkControl(b *testing.B) {
	var g guard.Guard
	b.Run("allowed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = g.Control("tcp4", "93.184.216.34:443", nil)
		}
	})
	b.Run("denied", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = g.Control("tcp4", "127.0.0.1:8080", nil)
		}
	})
}

// TestCheckAddrAllocs holds the guard to zero allocations for allowed
// addresses, with and without an allow-list.
func TestCheckAddrAllocs(t *testing.T) {
	allow := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	check := func(g *guard.Guard, a netip.Addr) {
		if n := testing.AllocsPerRun(100, func() { sink = g.CheckAddr(a) }); n != 0 {
			t.Errorf("CheckAddr(%s) with Allow %v: %v allocations", a, g.Allow, n)
		}
	}
	for _, a := range benchAllowed {
		check(&guard.Guard{}, a)
		check(allow, a)
	}
	check(allow, netip.MustParseAddr("127.0.0.1"))
	check(allow, netip.MustParseAddr("::ffff:127.0.0.1"))
	var g guard.Guard
	if n := testing.AllocsPerRun(100, func() { sink = g.Control("tcp6", "[2606:4700::1111]:443", nil) }); n != 0 {
		t.Errorf("Control on an allowed address: %v allocations", n)
	}
}
