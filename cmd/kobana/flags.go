package main

import (
	"fmt"
	"net/netip"
	"strings"
)

// parseAllow reads a value of -allow: a network in CIDR notation, masked to
// its network address (127.0.0.1/8 is 127.0.0.0/8), so the network the
// guard lets through is the one every message and record names.
func parseAllow(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a network in CIDR notation (such as 127.0.0.1/32 or ::1/128)", s)
	}
	return p.Masked(), nil
}

// allowFlag is the repeatable -allow flag of run and serve: networks the
// SSRF guard lets through although its deny-list covers them.
type allowFlag []netip.Prefix

const allowHelp = "a network (CIDR) the SSRF guard lets through although its deny-list covers it, e.g. 127.0.0.1/32 for a local receiver (repeatable)"

func (a *allowFlag) String() string {
	if a == nil {
		return ""
	}
	s := make([]string, len(*a))
	for i, p := range *a {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Set implements flag.Value.
func (a *allowFlag) Set(s string) error {
	p, err := parseAllow(s)
	if err != nil {
		return err
	}
	*a = append(*a, p)
	return nil
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set implements flag.Value.
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
