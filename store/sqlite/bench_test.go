package sqlite_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kobana/workflow/store"
)

func BenchmarkAuthenticate(b *testing.B) {
	st, _ := open(b, nil)
	defer st.Close()
	seedIdentity(b, st)
	ctx := context.Background()
	tok, err := st.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Authenticate(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetPerson(b *testing.B) {
	st, _ := open(b, nil)
	defer st.Close()
	seedIdentity(b, st)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if p, err := st.GetPerson(ctx, "p1"); err != nil || p.Name != "Ana" {
			b.Fatal(p, err)
		}
	}
}

func BenchmarkVerifyingKey(b *testing.B) {
	st, _ := open(b, nil)
	defer st.Close()
	ctx := context.Background()
	k, err := st.SigningKey(ctx, "confirm")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.VerifyingKey(ctx, "confirm", k.ID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetRecord(b *testing.B) {
	st, _ := open(b, nil)
	defer st.Close()
	ctx := context.Background()
	data := json.RawMessage(`{"id":"eml_1","subject":"` + string(make([]byte, 0)) + `hello"}`)
	if err := st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "email", ID: "eml_1", Data: data}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.GetRecord(ctx, "w1", "email", "eml_1"); err != nil {
			b.Fatal(err)
		}
	}
}
