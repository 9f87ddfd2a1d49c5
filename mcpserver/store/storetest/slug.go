package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/kobana/workflow/mcpserver/store"
)

// SlugStore is a store that finds workspaces by slug.
type SlugStore interface {
	store.Identity
	WorkspaceBySlug(ctx context.Context, slug string) (store.Workspace, error)
}

// WorkspaceBySlug checks the slug lookup the intake routes mail with: the
// one workspace with a slug; not found for an unknown or empty slug; a
// conflict, never a guess, when two workspaces share one.
func WorkspaceBySlug(t *testing.T, s SlugStore) {
	ctx := context.Background()
	s.PutOrganization(ctx, store.Organization{ID: "o_slug", Name: "Org"})
	for _, w := range []store.Workspace{
		{ID: "w_fin", Organization: "o_slug", Name: "Finance", Slug: "finance"},
		{ID: "w_none", Organization: "o_slug", Name: "No slug"},
		{ID: "w_a", Organization: "o_slug", Name: "A", Slug: "twin"},
		{ID: "w_b", Organization: "o_slug", Name: "B", Slug: "twin"},
	} {
		if err := s.PutWorkspace(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if w, err := s.WorkspaceBySlug(ctx, "finance"); err != nil || w != (store.Workspace{ID: "w_fin", Organization: "o_slug", Name: "Finance", Slug: "finance"}) {
		t.Fatalf("WorkspaceBySlug(finance) = %+v, %v", w, err)
	}
	for _, slug := range []string{"", "nope", "FINANCE"} {
		if _, err := s.WorkspaceBySlug(ctx, slug); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("WorkspaceBySlug(%q) = %v, want ErrNotFound", slug, err)
		}
	}
	if _, err := s.WorkspaceBySlug(ctx, "twin"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("WorkspaceBySlug(twin) = %v, want ErrConflict", err)
	}
}
