//go:build unix && !aix && (!solaris || illumos)

package vfs

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// lockFile takes a non-blocking exclusive flock. (Solaris and AIX lack
// flock; they use lock_other.go.) flock locks belong to the
// open file description, so a second open of the same file in this process
// conflicts too, which is what a database directory lock needs. Closing the
// file releases the lock.
func lockFile(f *os.File) (io.Closer, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}
