package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

func testPasskeys(t *testing.T, e *env) {
	s, clk := e.clocked(t)
	ctx := context.Background()
	SeedIdentity(t, s)
	cred := json.RawMessage(`{"id":"AQID","authenticator":{"signCount":0}}`)
	must(t, s.CreatePasskey(ctx, store.Passkey{ID: "AQID", Person: "p1", Workspace: "w1", Name: "laptop", Credential: cred}))
	clk.Add(time.Second)
	must(t, s.CreatePasskey(ctx, store.Passkey{ID: "BAUG", Person: "p1", Workspace: "w1", Name: "phone", Credential: cred}))
	must(t, s.CreatePasskey(ctx, store.Passkey{ID: "BwgJ", Person: "p2", Workspace: "", Name: "zed's", Credential: cred}))

	if err := s.CreatePasskey(ctx, store.Passkey{ID: "AQID", Person: "p2", Name: "taken", Credential: cred}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second passkey with a taken id: %v, want ErrConflict", err)
	}
	if err := s.CreatePasskey(ctx, store.Passkey{ID: "CgsM", Person: "nobody", Name: "x", Credential: cred}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a passkey of an unknown person: %v, want ErrNotFound", err)
	}

	ps, err := s.ListPasskeys(ctx, "p1")
	must(t, err)
	if len(ps) != 2 || ps[0].ID != "AQID" || ps[1].ID != "BAUG" || ps[0].Name != "laptop" || ps[0].Workspace != "w1" || ps[0].Person != "p1" {
		t.Fatalf("p1's passkeys: %+v", ps)
	}
	if !ps[0].Created.Equal(clk.Now().Add(-time.Second).Truncate(time.Millisecond)) || !ps[0].LastUsed.IsZero() {
		t.Fatalf("created %v (clock %v), last used %v", ps[0].Created, clk.Now(), ps[0].LastUsed)
	}
	if string(ps[0].Credential) != string(cred) {
		t.Fatalf("credential %s, want %s", ps[0].Credential, cred)
	}

	used := clk.Now().Add(time.Minute).Truncate(time.Millisecond)
	next := json.RawMessage(`{"id":"AQID","authenticator":{"signCount":7}}`)
	must(t, s.UsePasskey(ctx, "AQID", next, used))
	p, err := s.GetPasskey(ctx, "AQID")
	must(t, err)
	if string(p.Credential) != string(next) || !p.LastUsed.Equal(used) || p.Person != "p1" {
		t.Fatalf("after use: %+v", p)
	}
	if _, err := s.GetPasskey(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown passkey: %v", err)
	}

	// A person removes only their own.
	if err := s.DeletePasskey(ctx, "p2", "AQID"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another person's passkey removed: %v", err)
	}
	must(t, s.DeletePasskey(ctx, "p1", "AQID"))
	if err := s.UsePasskey(ctx, "AQID", next, used); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("using a removed passkey: %v", err)
	}
	if ps, err := s.ListPasskeys(ctx, "p1"); err != nil || len(ps) != 1 || ps[0].ID != "BAUG" {
		t.Fatalf("after removal: %+v %v", ps, err)
	}
}
