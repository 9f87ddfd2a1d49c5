package egress

import "testing"

// FuzzParse: a pattern that parses prints in a form that parses to the
// same pattern, and matches the host it names.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"erp.example.com", "*.example.com:8443", "[2001:db8::1]", "192.0.2.7:80", "*", "bücher.example", "a..b", "x:0", "[::1", "*.*.a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		q, err := Parse(p.String())
		if err != nil || q != p {
			t.Fatalf("Parse(%q) = %v; its form %q parses to %v, %v", s, p, p.String(), q, err)
		}
		if p.any || p.wildcard {
			return
		}
		port := p.port
		if port == "" {
			port = "443"
		}
		if tg := (Target{Host: p.host, Port: port}); !p.Matches(tg) {
			t.Fatalf("%s does not match its own host %v", p, tg)
		}
	})
}
