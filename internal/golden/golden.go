// Package golden is the tests' golden files: Check compares what a test
// produced with the file kept for it (under testdata, or beside the inputs)
// and fails with a diff when they differ; run with -update, the test
// writes the file instead, for review in the diff of the commit.
//
// It defines the test binary's -update flag: a test package that imports it
// (directly or through a test kit such as mcptest) must not define its own.
// It is for tests only; it imports nothing of the module.
package golden

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path. With -update it writes
// got there instead (creating the directory). A missing file, or one that
// differs, fails t with how to rewrite it; a difference also with a diff.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	rerun := "go test -run '" + topName(t) + "' -update"
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no golden file %s yet: run `%s` in this package and review the file", path, rerun)
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, run `%s` in this package and review the diff:\n%s", path, rerun, diff)
	}
}

// topName is the name of the top-level test t runs in.
func topName(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}
