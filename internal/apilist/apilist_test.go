package apilist

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDir(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// T is exported.
type T struct {
	A, B int
	c    string
	*Embedded
	io.Reader
}

type Embedded struct{}

type I interface {
	M(x int) (y string, err error)
	m()
}

type Alias = T

type G[K comparable, V any] map[K]V

const C, d = 1, 2

var V []T

func F(a, b int, s ...string) error { return nil }

func (t *T) Method(ctx context.Context) {}

func (t t2) Hidden() {}

type t2 int

func unexported() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nfunc TestX() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Dir(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg p, const C",
		"pkg p, func F(int, int, ...string) error",
		"pkg p, method (*T) Method(context.Context)",
		"pkg p, type Alias = T",
		"pkg p, type Embedded struct",
		"pkg p, type G[K comparable, V any] map[K]V",
		"pkg p, type I interface",
		"pkg p, type I interface, M(int) (string, error)",
		"pkg p, type I interface, unexported methods",
		"pkg p, type T struct",
		"pkg p, type T struct, A int",
		"pkg p, type T struct, B int",
		"pkg p, type T struct, embedded *Embedded",
		"pkg p, type T struct, embedded io.Reader",
		"pkg p, var V []T",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
