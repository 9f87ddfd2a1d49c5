package confirm_test

import (
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/confirm"
)

// FuzzRequestState feeds arbitrary requestState strings to the decoder: it
// must never panic, and it must accept only what Seal produced with the key.
func FuzzRequestState(f *testing.F) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	valid, _ := confirm.Seal("key_1", secret, claims(now))
	for _, s := range []string{valid, "", "ks1", "ks1.key_1..", "ks1.key_1.e30.", "ks1.key_1.eyJ0b29sIjoieCJ9.AAAA",
		valid[:len(valid)-1], valid + "A", "ks1.key_1.!!!.???", "ks1.a.b.c.d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := confirm.Open(s, secret, now)
		if err != nil {
			return
		}
		// Anything accepted re-seals to exactly the same token: no
		// alternative encodings of a valid state exist.
		kid, _ := confirm.KeyID(s)
		again, err := confirm.Seal(kid, secret, c)
		if err != nil || again != s {
			t.Fatalf("accepted %q, which re-seals to %q", s, again)
		}
	})
}

// FuzzCanonical checks that canonical JSON is a fixed point.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.0,{"y":true}]}`, `null`, `{"s":"\u00e9"}`, `[1e300, -0, 0.1]`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := confirm.Canonical(b)
		if err != nil {
			return
		}
		again, err := confirm.Canonical(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("Canonical(%q) = %q, again %q (%v)", b, c, again, err)
		}
	})
}
