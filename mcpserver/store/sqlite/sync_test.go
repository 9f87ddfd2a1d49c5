package sqlite_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	driver "modernc.org/sqlite"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// On Linux a store commits with fdatasync, as SQLite's own Linux builds do
// (the driver's default is fsync): the data and size of the log are what a
// commit's durability needs.
func TestOpenCommitsWithFdatasync(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("fdatasync is used on Linux; this is %s", runtime.GOOS)
	}
	driver.Fdatasync(false)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !driver.FdatasyncEnabled() {
		t.Fatal("an open store's commits sync with fsync, want fdatasync")
	}
}
