// Package smalldisk gives a test a small file system it can fill: a tmpfs
// mounted in a temporary directory (the test needs root, else it is
// skipped), and a file that takes its last byte. The full-disk tests of the
// pipeline and the server use it.
package smalldisk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a file system of size bytes (tmpfs) in a new directory
// and returns it; the test is skipped where mounting is not allowed (it
// needs root). It is unmounted after everything else the test cleans up.
func Mount(t testing.TB, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("a small file system is needed (mount tmpfs: %v; run as root)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// Fill writes a file in dir until its file system is full, and returns a
// function that removes it.
func Fill(t testing.TB, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		_, err := f.Write(block)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{4096, 512, 1} { // the last pages too
		for {
			if _, err := f.Write(block[:n]); err != nil {
				break
			}
		}
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}
