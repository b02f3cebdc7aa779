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
// lock releases the lock, then closes the file.
func lockFile(f *os.File) (io.Closer, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, err
	}
	return flockedFile{f}, nil
}

// flockedFile is a file holding a flock. Close unlocks it before closing
// the file: a process forked meanwhile holds the open file description
// until it execs, and with it the lock, which closing the file alone would
// leave held, so that an Open right after a Close could fail with ErrLocked.
type flockedFile struct{ f *os.File }

func (l flockedFile) Close() error {
	return errors.Join(syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN), l.f.Close())
}
