package pg_test

import (
	"context"
	"testing"

	"github.com/kobana/workflow/internal/pgtest"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/pg"
)

// The read paths of every request and every confirmation, on PostgreSQL
// (compare with store/sqlite's benchmarks of the same names).

func benchStore(b *testing.B) (*pg.Store, string) {
	b.Helper()
	dsn, _ := pgtest.SchemaDSN(b, "bench", "bench")
	s, err := pg.Open(context.Background(), dsn, pg.Options{PurgeInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	for _, err := range []error{
		s.PutOrganization(ctx, store.Organization{ID: "o1", Name: "O"}),
		s.PutWorkspace(ctx, store.Workspace{ID: "w1", Organization: "o1", Name: "W"}),
		s.PutPerson(ctx, store.Person{ID: "p1", Organization: "o1", Name: "Ana"}),
		s.SetMembership(ctx, "w1", "p1", "owner"),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	tok, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	if err != nil {
		b.Fatal(err)
	}
	return s, tok
}

func BenchmarkAuthenticate(b *testing.B) {
	s, tok := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Authenticate(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetPerson(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if p, err := s.GetPerson(ctx, "p1"); err != nil || p.Name != "Ana" {
			b.Fatal(p, err)
		}
	}
}

func BenchmarkVerifyingKey(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	k, err := s.SigningKey(ctx, "confirm")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.VerifyingKey(ctx, "confirm", k.ID); err != nil {
			b.Fatal(err)
		}
	}
}
