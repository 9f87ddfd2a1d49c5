package mailstore

import (
	"errors"
	"os"
	"syscall"
)

// syncData makes a file's data durable with fdatasync(2): its bytes and the
// metadata needed to read them back (its size), without the timestamps
// fsync(2) also writes through the file system's journal. Its name is made
// durable by syncing its directory.
func syncData(f *os.File) error {
	c, err := f.SyscallConn()
	if err == nil {
		cerr := c.Control(func(fd uintptr) {
			for {
				err = syscall.Fdatasync(int(fd))
				if !errors.Is(err, syscall.EINTR) {
					return
				}
			}
		})
		if cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}
