package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kobana/workflow/mcpserver/store"
)

// Benchmark measures the reads on the path of every request and every
// confirmation — Authenticate, GetPerson, VerifyingKey, GetRecord — each
// on a database of its own, so that the implementations, and a change to
// one, compare by the same code. Each implementation runs it from its own
// benchmarks (BenchmarkStore).
func Benchmark(b *testing.B, open Open) {
	var seq atomic.Int64
	fresh := func(b *testing.B) store.Store {
		b.Helper()
		s := open(b, fmt.Sprintf("bench_%d", seq.Add(1)), store.Options{})
		b.Cleanup(func() { s.Close() })
		return s
	}
	ctx := context.Background()
	b.Run("Authenticate", func(b *testing.B) {
		s := fresh(b)
		SeedIdentity(b, s)
		tok, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
		must(b, err)
		b.ReportAllocs()
		for b.Loop() {
			if p, err := s.Authenticate(ctx, tok); err != nil || p.Person != "p1" {
				b.Fatal(p, err)
			}
		}
	})
	b.Run("GetPerson", func(b *testing.B) {
		s := fresh(b)
		SeedIdentity(b, s)
		b.ReportAllocs()
		for b.Loop() {
			if p, err := s.GetPerson(ctx, "p1"); err != nil || p.Name != "Ana" {
				b.Fatal(p, err)
			}
		}
	})
	b.Run("VerifyingKey", func(b *testing.B) {
		s := fresh(b)
		k, err := s.SigningKey(ctx, "confirm")
		must(b, err)
		b.ReportAllocs()
		for b.Loop() {
			if v, err := s.VerifyingKey(ctx, "confirm", k.ID); err != nil || v.ID != k.ID {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("GetRecord", func(b *testing.B) {
		s := fresh(b)
		data := json.RawMessage(`{"id":"eml_1","subject":"hello"}`)
		must(b, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "email", ID: "eml_1", Data: data}))
		b.ReportAllocs()
		for b.Loop() {
			if r, err := s.GetRecord(ctx, "w1", "email", "eml_1"); err != nil || r.ID != "eml_1" {
				b.Fatal(r, err)
			}
		}
	})
}
