//go:build !unix

package vfs

import (
	"io"
	"os"
	"sync"
)

// heldLocks stands in for flock where it is missing: it stops a second lock
// in this process, not in another one.
var heldLocks sync.Map

type processLock struct {
	*os.File
}

func (l processLock) Close() error {
	heldLocks.Delete(l.Name())
	return l.File.Close()
}

func lockFile(f *os.File) (io.Closer, error) {
	if _, loaded := heldLocks.LoadOrStore(f.Name(), true); loaded {
		return nil, ErrLocked
	}
	return processLock{f}, nil
}
