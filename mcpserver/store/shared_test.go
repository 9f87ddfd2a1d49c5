package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSealerBindsWorkspaceAndName(t *testing.T) {
	s, err := NewSealer(bytes.Repeat([]byte{1}, SecretKeySize))
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal("w1", "API_KEY", "v\x00é")
	if bytes.Contains(sealed, []byte("v\x00é")) {
		t.Error("the sealed value holds the plaintext")
	}
	if again := s.Seal("w1", "API_KEY", "v\x00é"); bytes.Equal(again, sealed) {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	if got, err := s.Open("w1", "API_KEY", sealed); err != nil || got != "v\x00é" {
		t.Errorf("Open = %q %v", got, err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	for name, c := range map[string]struct {
		ws, name string
		sealed   []byte
	}{
		"another workspace": {"w2", "API_KEY", sealed},
		"another name":      {"w1", "OTHER", sealed},
		"w1\\x00API + _KEY": {"w1\x00API", "_KEY", sealed},
		"tampered":          {"w1", "API_KEY", tampered},
		"too short":         {"w1", "API_KEY", sealed[:10]},
	} {
		if got, err := s.Open(c.ws, c.name, c.sealed); !errors.Is(err, ErrUnsealable) || got != "" {
			t.Errorf("%s: Open = %q %v, want ErrUnsealable", name, got, err)
		}
	}
	if _, err := NewSealer([]byte("short")); err == nil || !strings.Contains(err.Error(), "32 bytes") {
		t.Errorf("short key: %v", err)
	}
}

func TestNormalizeScopes(t *testing.T) {
	for in, want := range map[string]string{"read": "read", "write": "read,write", "read write": "read,write", "write read write": "read,write"} {
		got, err := NormalizeScopes(strings.Fields(in))
		if err != nil || got != want {
			t.Errorf("NormalizeScopes(%q) = %q %v, want %q", in, got, err, want)
		}
		if again, _ := NormalizeScopes(ParseScopes(got)); again != got {
			t.Errorf("stored form %q does not round-trip: %q", got, again)
		}
	}
	for _, bad := range [][]string{nil, {}, {"admin"}, {"read", "Read"}} {
		if got, err := NormalizeScopes(bad); err == nil {
			t.Errorf("NormalizeScopes(%q) = %q, want an error", bad, got)
		}
	}
}

func TestMillis(t *testing.T) {
	at := time.Date(2026, 11, 1, 12, 0, 0, 1_234_567, time.FixedZone("BRT", -3*3600))
	if got := FromMillis(Millis(at)); !got.Equal(at.Truncate(time.Millisecond)) || got.Location() != time.UTC {
		t.Errorf("round trip = %v, want %v in UTC", got, at.Truncate(time.Millisecond))
	}
	if Millis(time.Time{}) != 0 || !FromMillis(0).IsZero() {
		t.Error("the zero time is not kept as 0")
	}
}

func TestEffectiveLimit(t *testing.T) {
	for in, want := range map[int]int{-1: DefaultLimit, 0: DefaultLimit, 1: 1, MaxLimit: MaxLimit, MaxLimit + 1: MaxLimit} {
		if got := (Query{Limit: in}).EffectiveLimit(); got != want {
			t.Errorf("limit %d → %d, want %d", in, got, want)
		}
	}
}

func TestTokenValues(t *testing.T) {
	tok, id := NewTokenValue()
	tok2, id2 := NewTokenValue()
	if !strings.HasPrefix(tok, TokenPrefix) || len(tok) != len(TokenPrefix)+64 || tok == tok2 || id == id2 || !strings.HasPrefix(id, "tok_") {
		t.Errorf("tokens %q %q, ids %q %q", tok, tok2, id, id2)
	}
	if HashToken(tok) == HashToken(tok2) || len(HashToken(tok)) != 64 || strings.Contains(HashToken(tok), tok[len(TokenPrefix):]) {
		t.Error("HashToken")
	}
}
