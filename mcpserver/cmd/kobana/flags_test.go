package main

import (
	"bytes"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAllow(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1/32", "127.0.0.1/32"},
		{"127.0.0.1/8", "127.0.0.0/8"}, // masked: the network, not the host
		{"10.1.2.3/16", "10.1.0.0/16"},
		{"::1/128", "::1/128"},
		{"fd12:3456::1/16", "fd12::/16"},
	} {
		p, err := parseAllow(tc.in)
		if err != nil || p != netip.MustParsePrefix(tc.want) {
			t.Errorf("parseAllow(%q) = %v, %v; want %s", tc.in, p, err, tc.want)
		}
	}
	for _, in := range []string{"127.0.0.1", "localhost", "10.0.0.0/33", "", "::1/129"} {
		if _, err := parseAllow(in); err == nil || !strings.Contains(err.Error(), "is not a network in CIDR notation") {
			t.Errorf("parseAllow(%q): %v", in, err)
		}
	}
	var a allowFlag
	for _, v := range []string{"127.0.0.1/8", "::1/128"} {
		if err := a.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if a.String() != "127.0.0.0/8,::1/128" {
		t.Errorf("allowFlag = %s", a.String())
	}
}

// TestAllowIsOneFlag: run and serve read -allow with the same function, so
// they accept, mask and refuse the same values with the same message.
func TestAllowIsOneFlag(t *testing.T) {
	wf := writeFile(t, "wf.json", `{"result": 1}`)
	for _, bad := range []string{"127.0.0.1", "10.0.0.0/33"} {
		var msgs []string
		for _, args := range [][]string{
			{"run", "-workflow", wf, "-allow", bad},
			{"serve", "-http", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "x.db"), "-allow", bad},
		} {
			var stderr bytes.Buffer
			c := &Command{Stdout: &bytes.Buffer{}, Stderr: &stderr}
			if code := c.Main(args); code != exitUsage {
				t.Errorf("%v: exit %d", args, code)
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			_, msg, _ := strings.Cut(first, ": ") // drop the "kobana run" / "kobana serve" prefix
			msgs = append(msgs, msg)
		}
		if msgs[0] != msgs[1] || !strings.Contains(msgs[0], "is not a network in CIDR notation") {
			t.Errorf("-allow %s: run says %q, serve says %q", bad, msgs[0], msgs[1])
		}
	}
}
