package demo_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

func TestIdentityOnceTokensEachTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "demo.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, want := range []bool{true, false} {
		created, err := demo.Identity(ctx, st)
		if err != nil || created != want {
			t.Fatalf("call %d: created=%v err=%v, want created=%v", i, created, err, want)
		}
	}
	toks, err := demo.Tokens(ctx, st)
	if err != nil || len(toks) != 2 {
		t.Fatalf("tokens: %v %v", toks, err)
	}
	for _, tok := range toks {
		p, err := st.Authenticate(ctx, tok.Token)
		if err != nil || p.Person != tok.Person || p.Workspace != demo.Workspace || p.Organization != demo.Organization || string(p.Role) != tok.Role {
			t.Errorf("%s: %+v %v", tok.Person, p, err)
		}
	}
	if again, _ := demo.Tokens(ctx, st); again[0].Token == toks[0].Token {
		t.Error("Tokens handed out the same token twice")
	}
}
