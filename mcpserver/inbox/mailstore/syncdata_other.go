//go:build !linux

package mailstore

import "os"

// syncData makes a file's data durable (fsync(2) where fdatasync(2) is not
// used).
func syncData(f *os.File) error { return f.Sync() }
