//go:build !unix || aix || (solaris && !illumos)

package vfs

import (
	"io"
	"os"
	"path/filepath"
	"sync"
)

// heldLocks stands in for flock where it is missing (Windows, Solaris, AIX,
// and the other platforms without it): it stops a second lock in this
// process, not in another one. Its keys are absolute paths, so that two
// spellings of one file ("LOCK", "./LOCK", "dir/../LOCK") share a key.
var heldLocks sync.Map

type processLock struct {
	*os.File
	key string
}

func (l processLock) Close() error {
	heldLocks.Delete(l.key)
	return l.File.Close()
}

func lockFile(f *os.File) (io.Closer, error) {
	key, err := filepath.Abs(f.Name())
	if err != nil {
		return nil, err
	}
	if _, loaded := heldLocks.LoadOrStore(key, true); loaded {
		return nil, ErrLocked
	}
	return processLock{File: f, key: key}, nil
}
