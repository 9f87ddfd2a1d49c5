package confirm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/confirm"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func claims(now time.Time) confirm.Claims {
	return confirm.Claims{Tool: "webhooks_test", ArgsDigest: "d", Person: "p", Organization: "o", Workspace: "w", Nonce: "n", Expires: now.Add(confirm.TTL).UnixMilli()}
}

func TestSealOpen(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	c := claims(now)
	s, err := confirm.Seal("k1", secret, c)
	if err != nil {
		t.Fatal(err)
	}
	if kid, _ := confirm.KeyID(s); kid != "k1" {
		t.Errorf("kid = %q", kid)
	}
	got, err := confirm.Open(s, secret, now)
	if err != nil || got != c {
		t.Fatalf("open = %+v %v", got, err)
	}
	if _, err := confirm.Open(s, []byte("another key, another key, another"), now); err != confirm.ErrBadMAC {
		t.Errorf("other key: %v", err)
	}
	if _, err := confirm.Open(s, secret, now.Add(confirm.TTL)); err != confirm.ErrExpired {
		t.Errorf("expired: %v", err)
	}
	// Changing the key id breaks the MAC (the id is signed).
	if _, err := confirm.Open(strings.Replace(s, ".k1.", ".k2.", 1), secret, now); err != confirm.ErrBadMAC {
		t.Errorf("swapped kid: %v", err)
	}
	for _, bad := range []string{"", "ks1", "ks1.k1.x", "ks2.k1.e30.AAAA", "ks1..e30.AAAA", strings.Repeat("a", 5000)} {
		if _, err := confirm.Open(bad, secret, now); err == nil {
			t.Errorf("Open(%.20q) succeeded", bad)
		}
	}
}

func TestMatches(t *testing.T) {
	c := claims(time.Now())
	for name, mut := range map[string]func(*confirm.Claims){
		"tool": func(x *confirm.Claims) { x.Tool = "other" }, "args": func(x *confirm.Claims) { x.ArgsDigest = "e" },
		"person": func(x *confirm.Claims) { x.Person = "q" }, "org": func(x *confirm.Claims) { x.Organization = "x" },
		"workspace": func(x *confirm.Claims) { x.Workspace = "x" },
	} {
		o := c
		mut(&o)
		if o.Matches(c) {
			t.Errorf("%s differs but matches", name)
		}
	}
	o := c
	o.Nonce, o.Expires = "other", 1
	if !o.Matches(c) {
		t.Error("nonce and expiry must not take part in matching")
	}
}

func TestCanonical(t *testing.T) {
	same := [][]string{
		{`{"b":1,"a":[1.0,{"y":true,"x":null}]}`, ` { "a" : [1, {"x":null,"y":true}], "b": 1e0 } `},
		{``, `null`, `{}`, ` {} `},
		{`{"s":"\u00e9<"}`, `{"s":"é\u003c"}`},
		{`{"n":-0}`, `{"n":0}`},
	}
	for _, group := range same {
		want, err := confirm.Canonical([]byte(group[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range group[1:] {
			got, err := confirm.Canonical([]byte(g))
			if err != nil || string(got) != string(want) {
				t.Errorf("Canonical(%s) = %s, want %s (%v)", g, got, want, err)
			}
		}
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} {}`, `{`, `{"a":1e999}`} {
		if _, err := confirm.Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%s) accepted", bad)
		}
	}
	d1, _ := confirm.Digest([]byte(`{"id":"whk_1"}`))
	d2, _ := confirm.Digest([]byte(`{"id":"whk_2"}`))
	if d1 == d2 {
		t.Error("different arguments, same digest")
	}
}
