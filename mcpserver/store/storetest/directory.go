package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/kobana/workflow/mcpserver/store"
)

// directoryOf returns s's store.Directory, failing t when it has none.
func directoryOf(t *testing.T, s store.Store) store.Directory {
	t.Helper()
	d, ok := s.(store.Directory)
	if !ok {
		t.Fatalf("%T does not implement store.Directory", s)
	}
	return d
}

func testDirectory(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	SeedIdentity(t, s)
	must(t, s.PutWorkspace(ctx, store.Workspace{ID: "w2", Organization: "o2", Name: "Ops", Slug: "ops"}))
	must(t, s.SetMembership(ctx, "w2", "p2", "owner"))
	d := directoryOf(t, s)
	orgs, err := d.ListOrganizations(ctx)
	must(t, err)
	if !slices.Equal(orgs, []store.Organization{{ID: "o1", Name: "Org One"}, {ID: "o2", Name: "Org Two"}}) {
		t.Errorf("organizations %+v", orgs)
	}
	ws, err := d.ListWorkspaces(ctx, "o2")
	must(t, err)
	if !slices.Equal(ws, []store.Workspace{{ID: "w2", Organization: "o2", Name: "Ops", Slug: "ops"}}) {
		t.Errorf("workspaces of o2 %+v", ws)
	}
	if all, err := d.ListWorkspaces(ctx, ""); err != nil || len(all) != 2 {
		t.Errorf("every workspace: %+v %v", all, err)
	}
	people, err := d.ListPeople(ctx, "o1")
	must(t, err)
	if !slices.Equal(people, []store.Person{{ID: "p1", Organization: "o1", Name: "Ana", Email: "ana@example.com"}}) {
		t.Errorf("people of o1 %+v", people)
	}
	if all, err := d.ListPeople(ctx, ""); err != nil || len(all) != 2 {
		t.Errorf("everyone: %+v %v", all, err)
	}
	members, err := d.ListMemberships(ctx, "")
	must(t, err)
	if !slices.Equal(members, []store.Member{{Workspace: "w1", Person: "p1", Role: "operator"}, {Workspace: "w2", Person: "p2", Role: "owner"}}) {
		t.Errorf("memberships %+v", members)
	}
	// Removing a membership stops the person's tokens for the workspace.
	tok, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	must(t, err)
	must(t, d.RemoveMembership(ctx, "w1", "p1"))
	if _, err := s.Authenticate(ctx, tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a removed member's token authenticates: %v", err)
	}
	if err := d.RemoveMembership(ctx, "w1", "p1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removing a membership twice: %v", err)
	}
	if m, err := d.ListMemberships(ctx, "w1"); err != nil || len(m) != 0 {
		t.Errorf("w1's members after the removal: %+v %v", m, err)
	}
}

func testSecretKeys(t *testing.T, e *env) {
	ctx := context.Background()
	name := e.db(t)
	k1 := bytes.Repeat([]byte{1}, store.SecretKeySize)
	k2 := bytes.Repeat([]byte{2}, store.SecretKeySize)
	s := e.handle(t, name, store.Options{SecretKey: k1})
	keys, ok := s.(store.SecretKeys)
	if !ok {
		t.Fatalf("%T does not implement store.SecretKeys", s)
	}
	must(t, keys.CheckSecretKey(ctx)) // nothing sealed yet
	must(t, s.SetSecret(ctx, "w1", "ERP_TOKEN", "tok-1"))
	must(t, s.SetSecret(ctx, "w2", "HOOK", "hook-2"))
	must(t, keys.CheckSecretKey(ctx))
	// A handle with another key (or none: the store's own) cannot open them.
	for _, opts := range []store.Options{{SecretKey: k2}, {}} {
		other := e.handle(t, name, opts).(store.SecretKeys)
		if err := other.CheckSecretKey(ctx); !errors.Is(err, store.ErrNoSecretKey) || !errors.Is(err, store.ErrUnsealable) {
			t.Errorf("key %x…: CheckSecretKey = %v, want ErrNoSecretKey", opts.SecretKey[:min(2, len(opts.SecretKey))], err)
		}
	}
	// Resealed with k2, they open with k2 only.
	n, err := keys.ResealSecrets(ctx, k2)
	if err != nil || n != 2 {
		t.Fatalf("ResealSecrets = %d, %v; want 2", n, err)
	}
	withK2 := e.handle(t, name, store.Options{SecretKey: k2})
	must(t, withK2.(store.SecretKeys).CheckSecretKey(ctx))
	if got, err := withK2.RevealSecrets(ctx, "w2"); err != nil || got["HOOK"] != "hook-2" {
		t.Errorf("resealed secrets of w2: %v %v", got, err)
	}
	if err := e.handle(t, name, store.Options{SecretKey: k1}).(store.SecretKeys).CheckSecretKey(ctx); !errors.Is(err, store.ErrNoSecretKey) {
		t.Errorf("the old key still opens them: %v", err)
	}
	if _, err := keys.ResealSecrets(ctx, []byte("short")); err == nil {
		t.Error("a key of the wrong size")
	}
}
