package mailstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syncData syncs an open file, and says which file it could not sync.
func TestSyncData(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.eml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("Subject: x\r\n\r\nbody\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := syncData(f); err != nil {
		t.Fatalf("syncing an open file: %v", err)
	}
	f.Close()
	if err := syncData(f); err == nil || !strings.Contains(err.Error(), "m.eml") {
		t.Fatalf("syncing a closed file: %v, want an error naming it", err)
	}
}
